"""`train --resume` takes the saved config (only --epochs and the time budget may change; a contradicting option
is refused by name), and no message suggests a resume that cannot work."""

import json
from pathlib import Path

import pytest

from seq2seq_attention.cli import main

pytestmark = pytest.mark.usefixtures("one_thread")

TINY = ["--decoder", "bahdanau", "--hidden-size", "8", "--batch-size", "512", "--max-words", "4", "--no-progress"]
"""A run of seconds: the pairs of at most 4 words, hidden size 8."""


def train(capsys, checkpoint: Path, *options: str) -> tuple[int, str, str]:
    code = main(["train", "--checkpoint", str(checkpoint), "--device", "cpu", *options])
    out, err = capsys.readouterr()
    return code, out, err


def saved(checkpoint: Path) -> dict:
    return json.loads((checkpoint / "checkpoint.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def finished_runs(tmp_path_factory) -> dict[str, Path]:
    """Two finished one-epoch runs: one that kept its training state, one with the weights only (the default)."""
    root = tmp_path_factory.mktemp("resume")
    runs = {"kept": root / "kept", "weights": root / "weights"}
    assert main(["train", "--checkpoint", str(runs["kept"]), *TINY, "--epochs", "1", "--keep-training-state"]) == 0
    assert main(["train", "--checkpoint", str(runs["weights"]), *TINY, "--epochs", "1"]) == 0
    return runs


def test_resume_without_repeating_the_options(tmp_path, capsys):
    checkpoint = tmp_path / "run"
    options = ["--epochs", "1", *TINY, "--keep-training-state", "--label-smoothing", "0.1"]
    code, _, err = train(capsys, checkpoint, *options)
    assert code == 0, err
    code, out, err = train(capsys, checkpoint, "--resume", "--epochs", "2", "--no-progress")
    assert code == 0, err
    assert "| epoch:   2 |" in out and "| epoch:   1 |" not in out and "decoder=bahdanau score=additive H=8" in out
    config = saved(checkpoint)["training"]["config"]
    assert config["hidden_size"] == 8 and config["max_words"] == 4 and config["label_smoothing"] == 0.1
    assert config["epochs"] == 2 and saved(checkpoint)["training"]["epoch"] == 2


def test_an_option_that_contradicts_the_saved_config_is_refused_by_name(finished_runs, capsys):
    before = saved(finished_runs["kept"])
    code, out, err = train(
        capsys, finished_runs["kept"], "--resume", "--epochs", "3", "--hidden-size", "16", "--decoder", "luong"
    )
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "--hidden-size 16 (saved: 8)" in err and "--decoder 'luong' (saved: 'bahdanau')" in err
    code, _, err = train(capsys, finished_runs["kept"], "--resume", "--hidden-size", "8")  # agrees: accepted
    assert code == 2 and "nothing to resume" in err and "--epochs 2" in err  # ... but all epochs are done
    assert saved(finished_runs["kept"]) == before


def test_messages_suggest_resume_only_where_it_works(finished_runs, capsys):
    code, _, err = train(capsys, finished_runs["kept"], *TINY)
    assert code == 2 and "already holds a checkpoint; resume it (--resume" in err
    code, _, err = train(capsys, finished_runs["weights"], *TINY)
    assert code == 2 and "cannot be resumed" in err and "--overwrite" in err and "(--resume" not in err
    code, _, err = train(capsys, finished_runs["weights"], "--resume", "--epochs", "2")
    assert code == 2 and "holds the weights only" in err and "--keep-training-state" in err


def test_an_unreadable_checkpoint_is_not_offered_for_resuming(tmp_path, capsys):
    checkpoint = tmp_path / "broken"
    checkpoint.mkdir()
    (checkpoint / "checkpoint.json").write_text("{not json", encoding="utf-8")
    code, _, err = train(capsys, checkpoint, *TINY)
    assert code == 2 and err.count("\n") == 1 and "cannot be read" in err and "(--resume" not in err
    assert (checkpoint / "checkpoint.json").read_text(encoding="utf-8") == "{not json"
