"""The live page's two exported models, run by onnxruntime through `search.py`'s loops, against PyTorch.

For 50 held-out sentences and both models (Bahdanau and Luong scaled-dot): the top-k lists of every
greedy step, a forced continuation (a prefix the model would not produce itself), and beam search for
k = 1..5 against `beam_search_decode` (scores within 1e-4). PyTorch runs with the same float16-rounded
weights as the graphs (`half_precision`). The browser test (`test_live_browser.py`) checks the same
things for the page's JavaScript.
"""

import json

import numpy as np
import pytest
import torch
from live_support import (
    BEAM_SIZES,
    CHECKPOINTS,
    GRAPHS,
    LIVE,
    PAGE_FILES,
    TOP_K,
    encode,
    forced_prefix,
    held_out_sentences,
    reference_beam,
    reference_greedy,
    vocabularies_document,
)

onnxruntime = pytest.importorskip("onnxruntime", reason="onnxruntime is in the test extra")

from seq2seq_attention import load_checkpoint  # noqa: E402
from seq2seq_attention.translation.export import GraphDecoder, export_sentences  # noqa: E402
from seq2seq_attention.translation.search import beam_search, greedy_search  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_thread")
MODELS = tuple(GRAPHS)
PAGE_BUDGET = 20_000_000


@pytest.fixture(scope="module")
def graphs() -> dict[str, GraphDecoder]:
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    return {
        model: GraphDecoder(
            *(onnxruntime.InferenceSession(str(folder / name), options) for name in ("encoder.onnx", "step.onnx"))
        )
        for model, folder in GRAPHS.items()
    }


@pytest.mark.parametrize("model", MODELS)
def test_top_k_lists_and_forced_continuations_equal_pytorch(graphs, model):
    graph = graphs[model]
    for sentence in held_out_sentences(50):
        ids = encode(sentence)
        tokens, logits, weights, _ = greedy_search(graph.forward_step, graph.init_state(ids))  # (1, T), (1, T, V)
        reference = reference_greedy(model, ids)
        assert tokens[0].tolist() == reference["tokens"], sentence
        assert logits[0].topk(TOP_K).indices.tolist() == reference["logits"].topk(TOP_K).indices.tolist(), sentence
        np.testing.assert_allclose(logits[0].numpy(), reference["logits"].numpy(), atol=1e-4)
        np.testing.assert_allclose(weights[0].numpy(), reference["weights"].numpy(), atol=1e-5)
        prefix = forced_prefix(model, ids)
        forced, _, _, _ = greedy_search(
            graph.forward_step, graph.init_state(ids), prefix=torch.tensor([prefix])
        )  # (1, P)
        assert forced[0].tolist() == reference_greedy(model, ids, prefix)["tokens"], (sentence, prefix)
        assert forced[0, : len(prefix)].tolist() == prefix


@pytest.mark.parametrize("model", MODELS)
def test_beam_search_on_the_graphs_is_beam_search_decode_for_k_1_to_5(graphs, model):
    graph = graphs[model]
    for sentence in held_out_sentences(50):
        ids = encode(sentence)
        for k in BEAM_SIZES:
            tokens, scores = beam_search(graph.forward_step, graph.init_state(ids), beam_size=k)  # (1, T), (1,)
            expected, score = reference_beam(model, ids, k)
            assert tokens[0].tolist() == expected, (sentence, k)
            assert abs(float(scores[0]) - score) < 1e-4, (sentence, k)


def test_both_models_share_the_exported_vocabularies():
    document = vocabularies_document()
    for model in MODELS:
        vocabs = load_checkpoint(CHECKPOINTS[model]).vocabs
        assert document["source"] == vocabs.source.index2word, model
        assert document["target"] == vocabs.target.index2word, model


def test_the_sentence_lists_are_the_split_the_models_trained_on(tmp_path):
    written = json.loads(export_sentences(tmp_path).read_text(encoding="utf-8"))
    shipped = json.loads((LIVE / "sentences.json").read_text(encoding="utf-8"))
    assert shipped == written and shipped["split"] == "by_english"
    for model in MODELS:
        assert load_checkpoint(CHECKPOINTS[model]).training["config"]["split"] == shipped["split"]
    assert set(held_out_sentences(50)) <= set(shipped["held_out"])


def test_everything_the_page_fetches_fits_20_mb():
    assert sum(path.stat().st_size for path in PAGE_FILES) <= PAGE_BUDGET


@pytest.mark.parametrize(
    ("prefix", "message"),
    [
        (torch.zeros(2, 1, dtype=torch.long), r"prefix must be \(B, P\) with B=1, got \(2, 1\)"),
        (torch.zeros(1, 11, dtype=torch.long), "at most max_length=10 words, got P=11"),
        (torch.zeros(1, 1), "prefix must hold token indices as torch.long"),
    ],
)
def test_a_bad_prefix_is_refused_with_what_was_expected(graphs, prefix, message):
    from seq2seq_attention.core.errors import InputError

    graph = graphs["bahdanau"]
    with pytest.raises(InputError, match=message):
        greedy_search(graph.forward_step, graph.init_state(encode("je suis fatigue .")), prefix=prefix)


def test_the_sentence_lists_refuse_a_bad_destination_or_split(tmp_path):
    from seq2seq_attention.core.errors import InputError

    (tmp_path / "sentences.json").mkdir()
    with pytest.raises(InputError, match="is a directory where a file should be written"):
        export_sentences(tmp_path)
    with pytest.raises(InputError, match="split must be one of"):
        export_sentences(tmp_path / "new", "by_chance")
    with pytest.raises(InputError, match="out must be a directory name"):
        export_sentences(b"bytes")
    assert not (tmp_path / "new").exists()
