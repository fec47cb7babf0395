"""The live page's weights files against PyTorch, and the ONNX export (a CLI feature the page no longer uses).

The page computes with `weights.bin` (float16, and int8 with a per-row scale where the export found the
translations unchanged): the file reads back (`read_weights`) into exactly what the writer stored; the page's
model translates the 80 held-out parity sentences, greedy and by beam search for k = 1..5, as the float16 model
does; the shipped files are what the writer writes today, and the sizes the page states are theirs. The browser
test (`test_live_browser.py`) checks the page's JavaScript against the PyTorch model with those weights.

The ONNX graphs, exported afresh into a temporary folder, run by onnxruntime through `search.py`'s loops against
the float16 PyTorch model (`half_precision`): the top-k lists of every greedy step, the raw attention scores e_tj
and their softmax, a forced continuation, and beam search for k = 1..5 (scores within 1e-4); and
`GraphDecoder`'s refusal of token indices that onnxruntime would misread or die on.
"""

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from live_support import (
    BEAM_SIZES,
    CHECKPOINTS,
    LIVE,
    PAGE_FILES,
    ROOT,
    TOP_K,
    WEIGHTS,
    encode,
    forced_prefix,
    held_out_sentences,
    live_model,
    reference_beam,
    reference_greedy,
    stated_files,
    vocabularies_document,
)
from support import tiny_translator

from seq2seq_attention import load_checkpoint
from seq2seq_attention.model.search import beam_search, greedy_search
from seq2seq_attention.translation.export import (
    GraphDecoder,
    choose_encodings,
    export_onnx,
    export_sentences,
    export_weights,
    read_weights,
    weights_bytes,
)

pytestmark = pytest.mark.usefixtures("one_thread")
MODELS = tuple(WEIGHTS)
FIRST_TRANSLATION_BUDGET = 4_000_000
"""What the page may download before its first translation (bytes): the Bahdanau weights and the two JSON files."""


@pytest.fixture(scope="module")
def graphs(tmp_path_factory) -> dict[str, GraphDecoder]:
    """Both models exported with `export_onnx` into a temporary folder, opened by onnxruntime."""
    onnxruntime = pytest.importorskip("onnxruntime", reason="onnxruntime is in the test extra")
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    decoders = {}
    for model in MODELS:
        checkpoint = load_checkpoint(CHECKPOINTS[model])
        folder = tmp_path_factory.mktemp(model)
        export_onnx(checkpoint.model, checkpoint.vocabs, folder)
        decoders[model] = GraphDecoder(
            *(onnxruntime.InferenceSession(str(folder / name), options) for name in ("encoder.onnx", "step.onnx"))
        )
    return decoders


def recording(graph: GraphDecoder):
    """`graph.forward_step`, keeping the raw scores (B, 1, S) of every step in the returned list."""
    scores = []

    def forward_step(input, state):
        out = graph.forward_step(input, state)
        scores.append(graph.scores)
        return out

    return forward_step, scores


@pytest.mark.parametrize("model", MODELS)
def test_the_onnx_graphs_top_k_lists_scores_and_forced_continuations_equal_pytorch(graphs, model):
    graph = graphs[model]
    for sentence in held_out_sentences():
        ids = encode(sentence)
        forward_step, scores = recording(graph)
        tokens, logits, weights, _ = greedy_search(forward_step, graph.init_state(ids))  # (1, T), (1, T, V)
        reference = reference_greedy(model, ids, weights="float16")
        assert tokens[0].tolist() == reference["tokens"], sentence
        assert logits[0].topk(TOP_K).indices.tolist() == reference["logits"].topk(TOP_K).indices.tolist(), sentence
        np.testing.assert_allclose(logits[0].numpy(), reference["logits"].numpy(), atol=1e-4)
        np.testing.assert_allclose(weights[0].numpy(), reference["weights"].numpy(), atol=1e-5)
        raw = torch.cat(scores, dim=1)[0]  # (T, S)
        np.testing.assert_allclose(raw.numpy(), reference["scores"].numpy(), rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(torch.softmax(raw, dim=-1).numpy(), weights[0].numpy(), atol=1e-6)
        assert raw.argmax(-1).tolist() == weights[0].argmax(-1).tolist(), sentence  # the softmax keeps the order
        prefix = forced_prefix(model, ids, weights="float16")
        forced, _, _, _ = greedy_search(
            graph.forward_step, graph.init_state(ids), prefix=torch.tensor([prefix])
        )  # (1, P)
        assert forced[0].tolist() == reference_greedy(model, ids, prefix, "float16")["tokens"], (sentence, prefix)
        assert forced[0, : len(prefix)].tolist() == prefix


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS)
def test_beam_search_on_the_graphs_is_beam_search_decode_for_k_1_to_5(graphs, model):
    graph = graphs[model]
    for sentence in held_out_sentences():
        ids = encode(sentence)
        for k in BEAM_SIZES:
            tokens, scores = beam_search(graph.forward_step, graph.init_state(ids), beam_size=k)  # (1, T), (1,)
            expected, score = reference_beam(model, ids, k, "float16")
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
    assert set(held_out_sentences()) <= set(shipped["held_out"])


def test_what_the_first_translation_needs_fits_4_mb():
    first = stated_files()["first"]
    assert sum(first.values()) <= FIRST_TRANSLATION_BUDGET, first


def test_the_sizes_the_page_states_for_its_progress_are_the_files_sizes():
    """The progress bar counts against these totals; a re-export must update them in docs/live.md."""
    stated = stated_files()
    assets = ROOT / "docs" / "assets"
    actual = {phase: {path: (assets / path).stat().st_size for path in files} for phase, files in stated.items()}
    assert stated == actual
    assert {assets / path for files in stated.values() for path in files} == set(PAGE_FILES)


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS)
def test_the_shipped_weights_are_what_the_writer_writes(tmp_path, model):
    """A re-export of the checkpoint gives the committed file, byte for byte (gzip without a time stamp)."""
    checkpoint = load_checkpoint(CHECKPOINTS[model])
    written = export_weights(checkpoint.model, checkpoint.vocabs, tmp_path, max_words=6)
    assert written[0].read_bytes() == WEIGHTS[model].read_bytes()


@pytest.mark.parametrize("model", MODELS)
def test_the_page_model_translates_the_parity_sentences_as_the_float16_model(model):
    """Greedy and beam search (k = 1..5) on the 80 parity sentences, batched: int8 changed no translation."""
    from seq2seq_attention.translation.export import _translations

    page, vocabs = live_model(model)
    half, _ = live_model(model, "float16")
    sentences = held_out_sentences()
    assert _translations(page, vocabs, sentences) == _translations(half, vocabs, sentences)
    header, _ = read_weights(WEIGHTS[model])
    assert {entry["encoding"] for entry in header["tensors"]} == {"float16", "int8"}, "both encodings are in use"


@pytest.mark.parametrize("model", MODELS)
def test_every_stored_weight_is_within_half_a_step_of_the_checkpoint(model):
    """float16: the weight rounded to float16, exactly; int8: within half of its row's scale of the float16 weight."""
    header, tensors = read_weights(WEIGHTS[model])
    checkpoint = load_checkpoint(CHECKPOINTS[model]).model.state_dict()
    assert [entry["name"] for entry in header["tensors"]] == list(checkpoint)
    for entry in header["tensors"]:
        weight, stored = checkpoint[entry["name"]], tensors[entry["name"]]
        assert list(stored.shape) == entry["shape"] == list(weight.shape)
        if entry["encoding"] == "float16":
            assert torch.equal(stored, weight.half().float()), entry["name"]
        else:
            step = weight.abs().amax(dim=1, keepdim=True) / 127  # (R, 1)
            assert bool(((stored - weight).abs() <= step / 2 + 1e-6).all()), entry["name"]


@settings(max_examples=20, deadline=None)
@given(
    rows=st.integers(1, 9),
    columns=st.integers(1, 9),
    seed=st.integers(0, 2**16),
    int8=st.booleans(),
)
def test_a_weights_file_reads_back_as_written(rows, columns, seed, int8):
    """Any tensor shape, either encoding: `read_weights` gives the float16 value, or int8 times the row's scale."""
    from seq2seq_attention.translation.export import _dequantized, _int8_rows

    generator = torch.Generator().manual_seed(seed)
    tiny = tiny_translator()
    with torch.no_grad():
        tiny.decoder.out.weight.copy_(torch.randn(tiny.decoder.out.weight.shape, generator=generator))
    encodings = {name: "float16" for name in tiny.state_dict()}
    encodings["decoder.out.weight"] = "int8" if int8 else "float16"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "weights.bin"
        path.write_bytes(weights_bytes(tiny, encodings))
        header, tensors = read_weights(path)
    assert header["model"] == {
        "decoder": "bahdanau",
        "score": "additive",
        "hidden_size": 8,
        "bidirectional": False,
        "input_feeding": False,
    }
    weight = tiny.decoder.out.weight.detach()
    expected = _dequantized(*_int8_rows(weight)) if int8 else weight.half().float()
    assert torch.equal(tensors["decoder.out.weight"], expected)
    assert torch.equal(tensors["decoder.gru.weight_hh_l0"], tiny.decoder.gru.weight_hh_l0.detach().half().float())


def test_int8_is_chosen_only_where_translations_hold():
    """A weight whose int8 rounding would change a translation stays float16: here, a decoder output layer scaled so
    that int8 loses its small rows."""
    from seq2seq_attention.translation.export import parity_sentences

    checkpoint = load_checkpoint(CHECKPOINTS["luong"])
    model, vocabs = checkpoint.model, checkpoint.vocabs
    with torch.no_grad():
        model.decoder.out.weight[:, 0] *= 1000  # one huge column: every row's scale is set by it
    sentences = parity_sentences(vocabs, 20)
    encodings = choose_encodings(model, vocabs, sentences)
    assert encodings["decoder.out.weight"] == "float16"
    assert "int8" in encodings.values()


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
