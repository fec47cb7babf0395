"""The live page's weights files against PyTorch, and the ONNX export (a CLI feature the page no longer uses).

The page computes with `weights.bin` (float16, and int8 with a float16 scale per row or per block of columns, a few
rows kept float16, where the export found the translations unchanged): the file reads back (`read_weights`) into
exactly what the writer stored; the page's model translates the 80 held-out parity sentences, greedy and by beam
search for k = 1..5, as the float16 model does; the shipped files are what the writer writes today, and the sizes
the page states are theirs. The browser test (`test_live_browser.py`) checks the page's JavaScript against the
PyTorch model with those weights.

The ONNX graphs, exported afresh into a temporary folder, run by onnxruntime through `search.py`'s loops against
the float16 PyTorch model (`half_precision`): the top-k lists of every greedy step, the raw attention scores e_tj
and their softmax, a forced continuation, and beam search for k = 1..5 (scores within 1e-4); and
`GraphDecoder`'s refusal of token indices that onnxruntime would misread or die on.
"""

import gzip
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
    """float16 (and an int8 matrix's float16 rows): the weight rounded to float16, exactly; int8: within half of its
    block's scale (the block's largest magnitude / 127, as float16) of the checkpoint's weight."""
    header, tensors = read_weights(WEIGHTS[model])
    checkpoint = load_checkpoint(CHECKPOINTS[model]).model.state_dict()
    assert [entry["name"] for entry in header["tensors"]] == list(checkpoint)
    for entry in header["tensors"]:
        weight, stored = checkpoint[entry["name"]], tensors[entry["name"]]
        assert list(stored.shape) == entry["shape"] == list(weight.shape)
        if entry["encoding"] == "float16":
            assert torch.equal(stored, weight.half().float()), entry["name"]
            continue
        rows, columns = weight.shape
        kept = entry.get("float16_rows", [])
        assert kept == sorted(set(kept)) and len(kept) <= 16, entry["name"]
        assert torch.equal(stored[kept], weight[kept].half().float()), entry["name"]
        blocks = weight.reshape(rows, columns // entry["block"], entry["block"])
        step = (blocks.abs().amax(dim=2, keepdim=True) / 127).half().float()  # (R, C/block, 1)
        error = (stored.reshape(blocks.shape) - blocks).abs()
        assert bool((error <= step * 0.51).all()), entry["name"]


@settings(max_examples=20, deadline=None)
@given(
    rows=st.integers(1, 9),
    columns=st.sampled_from([1, 2, 3, 4, 6, 8, 9]),
    seed=st.integers(0, 2**16),
    encoding=st.sampled_from(["float16", "int8"]),
    data=st.data(),
)
def test_a_weights_file_reads_back_as_written(rows, columns, seed, encoding, data):
    """Any matrix shape, either encoding, any scale block that divides a row, any float16 rows: `read_weights` gives
    the float16 value, or int8 times its block's scale, with the listed rows float16."""
    generator = torch.Generator().manual_seed(seed)
    tiny = tiny_translator()
    weight = torch.randn(rows, columns, generator=generator) * 3
    weight[0, 0] = 0.0  # a zero value; with columns == 1, an all-zero block (scale 1)
    tiny.decoder.out = torch.nn.Linear(columns, rows)  # any shape: the file does not check the architecture
    with torch.no_grad():
        tiny.decoder.out.weight.copy_(weight)
    encodings = {name: {"encoding": "float16"} for name in tiny.state_dict()}
    if encoding == "int8":
        block = data.draw(st.sampled_from([b for b in range(1, columns + 1) if columns % b == 0]), "block")
        kept = data.draw(st.lists(st.integers(0, rows - 1), unique=True, max_size=rows).map(sorted), "kept")
        encodings["decoder.out.weight"] = {"encoding": "int8", "block": block, "float16_rows": kept}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "weights.bin"
        path.write_bytes(weights_bytes(tiny, encodings))
        header, tensors = read_weights(path)
    assert header["version"] == 2
    assert header["model"] == {
        "decoder": "bahdanau",
        "score": "additive",
        "hidden_size": 8,
        "bidirectional": False,
        "input_feeding": False,
    }
    expected = weight.half().float()
    if encoding == "int8":  # written out here, not by the writer's functions
        grouped = weight.numpy().reshape(rows, columns // block, block)
        scales = (np.abs(grouped).max(axis=2, keepdims=True) / 127).astype(np.float16).astype(np.float32)
        scales[scales == 0] = 1
        values = np.clip(np.round(grouped / scales), -127, 127)
        expected = torch.from_numpy((values * scales).astype(np.float32).reshape(rows, columns))
        expected[kept] = weight[kept].half().float()
    assert torch.equal(tensors["decoder.out.weight"], expected)
    assert torch.equal(tensors["decoder.gru.weight_hh_l0"], tiny.decoder.gru.weight_hh_l0.detach().half().float())


def test_a_weights_file_of_version_1_is_refused(tmp_path):
    """The page's model.js reads version 2 only; so does `read_weights`, with one line saying what to do."""
    from seq2seq_attention.core.errors import InputError

    tiny = tiny_translator()
    data = weights_bytes(tiny, {name: {"encoding": "float16"} for name in tiny.state_dict()})
    raw = gzip.decompress(data)
    length = int.from_bytes(raw[:4], "little")
    header = json.loads(raw[4 : 4 + length])
    old = json.dumps({**header, "version": 1}).encode()
    (tmp_path / "weights.bin").write_bytes(gzip.compress(len(old).to_bytes(4, "little") + old + raw[4 + length :]))
    with pytest.raises(InputError, match="not a seq2seq-attention/weights file of version 2; write it again"):
        read_weights(tmp_path / "weights.bin")


def test_int8_is_chosen_only_where_translations_hold():
    """A weight whose int8 rounding would change many translations stays float16: here, a decoder output layer whose
    every 16th column is 1000 in every row (the same for every word, so the float16 model's translations do not
    depend on it), so that every scale block's step is set by it and the other values round to 0: more than
    `MAX_CHANGED` sentences change, no knife edge that a few float16 rows would mend."""
    from seq2seq_attention.translation.export import parity_sentences

    checkpoint = load_checkpoint(CHECKPOINTS["luong"])
    model, vocabs = checkpoint.model, checkpoint.vocabs
    with torch.no_grad():
        model.decoder.out.weight[:, ::16] = 1000.0
    sentences = parity_sentences(vocabs, 20)
    encodings = choose_encodings(model, vocabs, sentences)
    assert encodings["decoder.out.weight"] == {"encoding": "float16"}
    assert any(encoding["encoding"] == "int8" for encoding in encodings.values())


def test_the_halving_keeps_exactly_the_rows_a_check_needs():
    """`_float16_rows` on a check that holds when rows 3 and 17 stay float16: it keeps those two and no other; with
    more than `MAX_FLOAT16_ROWS` needed, or none that can go, it gives up."""
    from seq2seq_attention.translation.export import MAX_FLOAT16_ROWS, _float16_rows

    accepted = []

    def needs(rows):
        def check(keep):
            if all(bool(keep[r]) for r in rows):
                accepted.append(keep.clone())
                return True
            return False

        return check

    assert _float16_rows(needs([3, 17]), 40) == [3, 17]
    assert accepted[-1].nonzero().flatten().tolist() == [3, 17]  # the last accepted mask is the final one
    assert _float16_rows(needs(range(MAX_FLOAT16_ROWS + 1)), 40) is None
    assert _float16_rows(needs(range(40)), 40) is None


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
