"""The ONNX export (`export-onnx`, a CLI feature; the live page runs `weights.bin`): graphs exported into a temporary
folder translate as the model does, and the live page's vocabularies are the packaged model's.

tests/site/test_live_parity.py runs both packaged models' graphs on the parity sentences (top-k lists, scores,
beams)."""

import json

import numpy as np
import pytest
import torch
from support import ROOT

onnxruntime = pytest.importorskip("onnxruntime", reason="onnxruntime is in the test extra")

from seq2seq_attention import collate, greedy_decode, load_checkpoint, load_pairs  # noqa: E402
from seq2seq_attention.model.search import greedy_search  # noqa: E402
from seq2seq_attention.model.tokens import EOS_IDX  # noqa: E402
from seq2seq_attention.translation.export import GraphDecoder, half_precision  # noqa: E402
from seq2seq_attention.translation.pretrained import PRETRAINED_DIR  # noqa: E402

LIVE = ROOT / "docs" / "assets" / "live"
pytestmark = pytest.mark.usefixtures("one_thread")


def graph_greedy(sessions, ids: list[int]) -> tuple[list[int], np.ndarray]:
    """Greedy decoding with the exported graphs, through `greedy_search` like the model: tokens and (T, S) weights."""
    graph = GraphDecoder(*sessions)
    tokens, _, weights, _ = greedy_search(graph.forward_step, graph.init_state(ids))  # (1, T), (1, T, S)
    return tokens[0].tolist(), weights[0].numpy()


def test_the_exported_vocabularies_are_the_packaged_ones():
    checkpoint = load_checkpoint(PRETRAINED_DIR / "bahdanau")
    document = json.loads((LIVE / "vocabularies.json").read_text(encoding="utf-8"))
    assert document["source"] == checkpoint.vocabs.source.index2word
    assert document["target"] == checkpoint.vocabs.target.index2word
    assert (document["max_length"], document["max_words"]) == (10, 6)


def test_float16_rounding_is_what_the_graphs_store():
    """The graphs hold float16 weights: rounding the model again changes nothing."""
    model = half_precision(load_checkpoint(PRETRAINED_DIR / "bahdanau").model)
    before = {name: p.clone() for name, p in model.named_parameters()}
    half_precision(model)
    assert all(torch.equal(before[name], p) for name, p in model.named_parameters())


@pytest.mark.slow
def test_the_export_command_writes_graphs_that_run(tmp_path):
    from seq2seq_attention import build_model
    from seq2seq_attention.core.errors import InputError
    from seq2seq_attention.translation.corpus import build_vocabularies
    from seq2seq_attention.translation.export import export_onnx

    pairs = load_pairs()[:40]
    vocabs = build_vocabularies(pairs)
    torch.manual_seed(0)
    model = build_model("luong", len(vocabs.source), len(vocabs.target), hidden_size=8, score="general").eval()
    written = export_onnx(model, vocabs, tmp_path)
    assert [path.name for path in written] == ["encoder.onnx", "step.onnx", "vocabularies.json"]
    encoder, step = (onnxruntime.InferenceSession(str(tmp_path / name)) for name in ("encoder.onnx", "step.onnx"))
    ids = vocabs.source.encode(pairs[0].source)
    tokens, weights = graph_greedy((encoder, step), ids)
    batch = collate([(ids, [EOS_IDX])])
    expected, attentions = greedy_decode(model, batch.source, batch.lengths)
    assert tokens == expected[0, : len(tokens)].tolist() and weights.shape == (len(tokens), len(ids))
    np.testing.assert_allclose(weights, attentions[0, : len(tokens)].numpy(), atol=1e-5)
    with pytest.raises(InputError, match="draws attention weights"):
        export_onnx(build_model("gru", len(vocabs.source), len(vocabs.target), hidden_size=8), vocabs, tmp_path)


@pytest.mark.slow
def test_export_onnx_writes_the_checkpoints_max_words_and_prints_only_what_it_wrote(eight_word_export):
    """A checkpoint trained with --max-words 8: the command writes 8 (not the default 6), with no exporter noise.

    `eight_word_export` (tests/conftest.py) ran the command in a fresh Python, once for this test and the live page."""
    result, out = eight_word_export
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", result.stderr  # no TracerWarning, FutureWarning or "torchvision is not installed"
    assert [line.split(" (")[0] for line in result.stdout.splitlines()] == [
        f"wrote {out / name}" for name in ("encoder.onnx", "step.onnx", "vocabularies.json", "sentences.json")
    ]
    document = json.loads((out / "vocabularies.json").read_text(encoding="utf-8"))
    assert document["max_words"] == 8


@pytest.mark.parametrize("max_words", [0, 64, "8", 8.0, True, None])
def test_export_onnx_refuses_a_bad_max_words_before_writing(tmp_path, max_words):
    from seq2seq_attention.core.errors import InputError
    from seq2seq_attention.translation.export import export_onnx

    checkpoint = load_checkpoint(PRETRAINED_DIR / "bahdanau")
    with pytest.raises(InputError, match="max_words must be an int from 1 to 63"):
        export_onnx(checkpoint.model, checkpoint.vocabs, tmp_path / "out", max_words)
    assert not (tmp_path / "out").exists()


def test_export_onnx_refuses_a_folder_name_too_long_before_writing(tmp_path):
    from support import tiny_translator, tiny_vocabs

    from seq2seq_attention.core.errors import InputError
    from seq2seq_attention.translation.export import export_onnx

    with pytest.raises(InputError, match="out '.*: the name 'a+… is 300 bytes long; names here hold at most"):
        export_onnx(tiny_translator(), tiny_vocabs(), tmp_path / ("a" * 300))
    assert list(tmp_path.iterdir()) == []


# `seq2seq-attention export-weights`: the live page's files ------------------------------------------------------


def _refused(argv: list[str], capsys: pytest.CaptureFixture) -> str:
    """The one line `argv` is refused with (exit code 2, from the command or from argparse)."""
    from seq2seq_attention.cli import main

    try:
        code = main(argv)
    except SystemExit as stop:
        code = stop.code
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "" and captured.err.count("\n") == 1, (code, captured)
    return captured.err


@pytest.mark.slow
def test_export_weights_writes_the_shipped_files_and_refuses_to_replace_them_without_overwrite(tmp_path, capsys):
    from seq2seq_attention.cli import main

    out = tmp_path / "live"
    assert main(["export-weights", "--out", str(out)]) == 0
    names = ("weights.bin", "vocabularies.json", "sentences.json")
    assert [line.split(" (")[0] for line in capsys.readouterr().out.splitlines()] == [
        f"wrote {out / name}" for name in names
    ]
    assert all((out / name).read_bytes() == (LIVE / name).read_bytes() for name in names)
    err = _refused(["export-weights", "--out", str(out)], capsys)
    assert f"--out '{out}' already holds a weights export; pass --overwrite to replace it" in err


def test_export_weights_refuses_an_existing_export_a_long_path_and_an_unknown_model_before_any_work(tmp_path, capsys):
    (tmp_path / "done").mkdir()
    (tmp_path / "done" / "weights.bin").write_bytes(b"x")
    err = _refused(["export-weights", "--out", str(tmp_path / "done")], capsys)
    assert err == (
        f"seq2seq-attention export-weights: error: --out '{tmp_path / 'done'}' already holds a weights export; "
        "pass --overwrite to replace it\n"
    )
    (tmp_path / "onnx").mkdir()
    (tmp_path / "onnx" / "encoder.onnx").write_bytes(b"x")
    err = _refused(["export-weights", "--out", str(tmp_path / "onnx"), "--overwrite"], capsys)
    assert "holds an ONNX export, not a weights export; refusing to replace it" in err
    (tmp_path / "clash" / "sentences.json").mkdir(parents=True)
    (tmp_path / "clash" / "weights.bin").write_bytes(b"x")
    err = _refused(["export-weights", "--out", str(tmp_path / "clash"), "--overwrite"], capsys)
    assert "sentences.json is a directory where the export's file should go" in err
    err = _refused(["export-weights", "--out", str(tmp_path / ("a" * 300))], capsys)
    assert "is 300 bytes long; names here hold at most" in err
    err = _refused(["export-weights", "--model", "gru", "--out", str(tmp_path / "new")], capsys)
    assert "invalid choice: 'gru' (choose from 'bahdanau', 'bahdanau-bi')" in err
    assert sorted(path.name for path in tmp_path.iterdir()) == ["clash", "done", "onnx"]
