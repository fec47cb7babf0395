"""The live page's two exported models, run by onnxruntime through `search.py`'s loops, against PyTorch.

For 50 held-out sentences and both models (Bahdanau and Luong scaled-dot): the top-k lists of every
greedy step, the raw attention scores e_tj and their softmax, a forced continuation (a prefix the model
would not produce itself), and beam search for k = 1..5 against `beam_search_decode` (scores within 1e-4).
Also: the file sizes the page states for its progress bar, and `GraphDecoder`'s refusal of token
indices that onnxruntime would misread or die on. PyTorch runs with the same float16-rounded
weights as the graphs (`half_precision`). The browser test (`test_live_browser.py`) checks the same
things for the page's JavaScript.
"""

import json

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from live_support import (
    BEAM_SIZES,
    CHECKPOINTS,
    GRAPHS,
    LIVE,
    PAGE_FILES,
    ROOT,
    TOP_K,
    encode,
    forced_prefix,
    held_out_sentences,
    reference_beam,
    reference_greedy,
    stated_files,
    vocabularies_document,
)

onnxruntime = pytest.importorskip("onnxruntime", reason="onnxruntime is in the test extra")

from seq2seq_attention import load_checkpoint  # noqa: E402
from seq2seq_attention.model.search import beam_search, greedy_search  # noqa: E402
from seq2seq_attention.translation.export import GraphDecoder, export_sentences  # noqa: E402

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


def recording(graph: GraphDecoder):
    """`graph.forward_step`, keeping the raw scores (B, 1, S) of every step in the returned list."""
    scores = []

    def forward_step(input, state):
        out = graph.forward_step(input, state)
        scores.append(graph.scores)
        return out

    return forward_step, scores


@pytest.mark.parametrize("model", MODELS)
def test_top_k_lists_scores_and_forced_continuations_equal_pytorch(graphs, model):
    graph = graphs[model]
    for sentence in held_out_sentences(50):
        ids = encode(sentence)
        forward_step, scores = recording(graph)
        tokens, logits, weights, _ = greedy_search(forward_step, graph.init_state(ids))  # (1, T), (1, T, V)
        reference = reference_greedy(model, ids)
        assert tokens[0].tolist() == reference["tokens"], sentence
        assert logits[0].topk(TOP_K).indices.tolist() == reference["logits"].topk(TOP_K).indices.tolist(), sentence
        np.testing.assert_allclose(logits[0].numpy(), reference["logits"].numpy(), atol=1e-4)
        np.testing.assert_allclose(weights[0].numpy(), reference["weights"].numpy(), atol=1e-5)
        raw = torch.cat(scores, dim=1)[0]  # (T, S)
        np.testing.assert_allclose(raw.numpy(), reference["scores"].numpy(), rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(torch.softmax(raw, dim=-1).numpy(), weights[0].numpy(), atol=1e-6)
        assert raw.argmax(-1).tolist() == weights[0].argmax(-1).tolist(), sentence  # the softmax keeps the order
        prefix = forced_prefix(model, ids)
        forced, _, _, _ = greedy_search(
            graph.forward_step, graph.init_state(ids), prefix=torch.tensor([prefix])
        )  # (1, P)
        assert forced[0].tolist() == reference_greedy(model, ids, prefix)["tokens"], (sentence, prefix)
        assert forced[0, : len(prefix)].tolist() == prefix


@pytest.mark.slow
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


def test_the_sizes_the_page_states_for_its_progress_are_the_files_sizes():
    """The progress bar counts against these totals; a re-export must update them in docs/live.md."""
    stated = stated_files()
    assets = ROOT / "docs" / "assets"
    actual = {phase: {path: (assets / path).stat().st_size for path in files} for phase, files in stated.items()}
    assert stated == actual
    assert {assets / path for files in stated.values() for path in files} == set(PAGE_FILES) - {
        PAGE_FILES[0]  # ort.wasm.min.js: a script tag, not counted
    }


@settings(max_examples=40, deadline=None)
@given(
    tokens=st.lists(st.integers(-(2**40), 2**40), max_size=8).filter(
        lambda t: not t or any(x < 0 or x >= 2460 for x in t)
    )
)
def test_the_graph_decoder_refuses_indices_onnxruntime_would_misread(graphs, tokens):
    """Empty (onnxruntime aborts the process), negative (Gather wraps it) or past the vocabulary: a clear error."""
    from seq2seq_attention.core.errors import InputError

    graph = graphs["bahdanau"]
    assert graph.source_size == 2460
    with pytest.raises(InputError, match=r"tokens must (hold 1 to 64|be source token indices from 0 to 2459)"):
        graph.init_state(tokens)
    state = graph.init_state(encode("je suis fatigue ."))
    bad = [x for x in tokens if x < 0 or x >= graph.target_size] or [-1]
    with pytest.raises(InputError, match=f"input must be target token indices from 0 to {graph.target_size - 1}"):
        graph.forward_step(torch.tensor([[bad[0]]]), state)


def test_the_graph_decoder_refuses_what_is_not_a_list_of_indices(graphs):
    from seq2seq_attention.core.errors import InputError

    graph = graphs["bahdanau"]
    for tokens, message in [
        ([1.0, 2], "tokens must be a list of source token indices"),
        ("je suis", "tokens must be a list of source token indices"),
        ([True, 2], "tokens must be a list of source token indices"),
        ([4] * 65, "tokens must hold 1 to 64 token indices"),
    ]:
        with pytest.raises(InputError, match=message):
            graph.init_state(tokens)
    state = graph.init_state(encode("je suis fatigue ."))
    with pytest.raises(InputError, match=r"input must be \(B, 1\) target token indices as torch.long"):
        graph.forward_step(torch.zeros(1, 1), state)


@pytest.mark.parametrize(
    ("prefix", "error", "message"),
    [
        (torch.zeros(1, 1), ValueError, r"greedy_search: prefix must be Int64\[Tensor, 'B P'\] \| None, got f32"),
    ],
)
def test_a_bad_prefix_is_refused_with_what_was_expected(graphs, prefix, error, message):
    graph = graphs["bahdanau"]
    with pytest.raises(error, match=message):
        greedy_search(graph.forward_step, graph.init_state(encode("je suis fatigue .")), prefix=prefix)


def test_a_prefix_longer_than_the_search_is_forced_up_to_max_length(graphs):
    graph = graphs["bahdanau"]
    prefix = torch.full((1, 11), 4, dtype=torch.long)  # (B, P), P > max_length
    tokens, _, _, _ = greedy_search(graph.forward_step, graph.init_state(encode("je suis fatigue .")), 10, prefix)
    assert torch.equal(tokens, prefix[:, :10])


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
