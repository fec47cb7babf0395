"""The command line's answer to bad input: one line on stderr, exit code 2, no traceback, nothing on disk changed.

Every argument and path is checked before data are loaded or a model is trained (a wrong `--checkpoint`
must not cost an epoch): the library's data loading, training epochs and decoding loops are replaced by
functions that fail the test when called.
"""

import io
import sys
from pathlib import Path

import pytest

from seq2seq_attention.cli import main

CASES = {
    "device-mps": ["translate", "--device", "mps", "je suis la ."],
    "device-meta": ["translate", "--device", "meta", "je suis la ."],
    "device-cuda-99": ["translate", "--device", "cuda:99", "je suis la ."],
    "max-length-float": ["translate", "--max-length", "1e3", "je suis la ."],
    "max-length-huge": ["translate", "--max-length", "1000000000000", "je suis la ."],
    "length-penalty-nan": ["translate", "--beam-size", "2", "--length-penalty", "nan", "je suis la ."],
    "length-penalty-inf": ["translate", "--length-penalty", "inf", "je suis la ."],
    "beam-size-zero": ["translate", "--beam-size", "0", "je suis la ."],
    "weight-decay-nan": ["train", "--checkpoint", "{tmp}/c", "--weight-decay", "nan"],
    "dropout-one": ["train", "--checkpoint", "{tmp}/c", "--dropout", "1.0"],
    "batch-size-zero": ["train", "--checkpoint", "{tmp}/c", "--batch-size", "0"],
    "score-for-gru": ["train", "--checkpoint", "{tmp}/c", "--score", "dot"],
    "checkpoint-is-a-file": ["train", "--checkpoint", "{tmp}/file"],
    "checkpoint-under-a-file": ["train", "--checkpoint", "{tmp}/file/c"],
    "sentiment-threads-zero": ["sentiment-train", "--threads", "0"],
    "sentiment-batch-size-zero": ["sentiment-train", "--batch-size", "0"],
    "sentiment-unknown-source": ["sentiment-train", "--sources", "twitter"],
    "sentiment-out-is-a-file": ["sentiment-train", "--out", "{tmp}/file"],
    "predict-top-negative": ["sentiment-predict", "--checkpoint", "{tmp}", "--top", "-1", "fine"],
    "predict-checkpoint-is-a-file": ["sentiment-predict", "--checkpoint", "{tmp}/file", "fine"],
    "plot-output-directory": ["plot-attention", "je suis la .", "--output", "{tmp}/dir.png"],
    "plot-output-under-a-file": ["plot-attention", "je suis la .", "--output", "{tmp}/file/x.png"],
    "plot-output-suffix": ["plot-attention", "je suis la .", "--output", "{tmp}/x.jpg"],
    "translate-checkpoint-is-a-file": ["translate", "--checkpoint", "{tmp}/file", "je suis la ."],
    "translate-model-and-checkpoint": ["translate", "--model", "gru", "--checkpoint", "{tmp}", "je suis la ."],
    "translate-unknown-model": ["translate", "--model", "transformer", "je suis la ."],
    "train-resume-nothing-to-resume-from-a-file": ["train", "--checkpoint", "{tmp}/file", "--resume"],
    "figure-json-suffix": [
        "sentiment-attention-figure",
        "--checkpoint",
        "{tmp}",
        "--out",
        "{tmp}/a.png",
        "--json",
        "{tmp}/a",
    ],
}


def files(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() if p.is_file() else b"" for p in sorted(directory.rglob("*"))}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_arguments_get_one_line_and_exit_2_before_any_work(case, tmp_path, capsys, monkeypatch):
    (tmp_path / "file").write_text("not a directory")
    (tmp_path / "dir.png").mkdir()
    before = files(tmp_path)
    argv = [a.format(tmp=tmp_path) for a in CASES[case]]
    for target in WORK:
        monkeypatch.setattr(target, _no_work(target))
    with pytest.raises(SystemExit) if _is_argparse(case) else _returns():
        code = main(argv)
        assert code == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert err.count("\n") == 0 and err.startswith("seq2seq-attention") and "error:" in err, err
    assert "Traceback" not in err and len(err) < 700
    assert files(tmp_path) == before


WORK = [
    "seq2seq_attention.translation.train.load_pairs",
    "seq2seq_attention.translation.train.train_epoch",
    "seq2seq_attention.sentiment.train.prepare_data",
    "seq2seq_attention.translation.search.greedy_decode",
    "seq2seq_attention.translation.search.beam_search_decode",
    "seq2seq_attention.translation.plotting.greedy_decode",
]
"""What costs time behind the commands (a corpus loaded, an epoch, a decoding loop): a bad argument is refused
before any of it."""


def _no_work(name: str):
    def called(*args, **kwargs):
        raise AssertionError(f"{name} ran although an argument was bad")

    return called


ARGPARSE = {
    "max-length-float",
    "max-length-huge",
    "length-penalty-nan",
    "length-penalty-inf",
    "beam-size-zero",
    "weight-decay-nan",
    "dropout-one",
    "batch-size-zero",
    "sentiment-threads-zero",
    "sentiment-batch-size-zero",
    "sentiment-unknown-source",
    "predict-top-negative",
    "translate-model-and-checkpoint",
    "translate-unknown-model",
}


def _is_argparse(case: str) -> bool:
    return case in ARGPARSE


class _returns:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_the_error_line_says_what_was_expected(capsys):
    with pytest.raises(SystemExit):
        main(["translate", "--max-length", "1e3", "je suis la ."])
    assert "argument --max-length: expected an integer, got '1e3'" in capsys.readouterr().err


def test_stdin_errors_name_the_real_line_number(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("je suis fatigue .\n\n\n\n\nje suis un xylophoniste .\n"))
    assert main(["translate"]) == 2
    err = capsys.readouterr().err
    assert "line 6 of standard input has unknown fra word(s) 'xylophoniste'" in err and err.count("\n") == 1


def test_a_huge_word_is_echoed_only_in_part(capsys):
    assert main(["translate", "je suis " + "x" * 100_000 + " ."]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and len(err) < 700
