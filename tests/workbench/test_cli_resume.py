"""`train --resume` takes the saved config (only --epochs and the time budget may change; a contradicting option
is refused by name), and no message suggests a resume that cannot work."""

import json
import re
import shlex
from pathlib import Path

import pytest
from support import ROOT

from seq2seq_attention.cli import main

pytestmark = [pytest.mark.usefixtures("one_thread"), pytest.mark.slow]  # every test here trains (a tiny model)


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
    assert out.startswith(f"resuming {checkpoint} from epoch 2 of 2 (1 done; its saved settings)\n")
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
    assert "it was trained with --decoder bahdanau --hidden-size 8, not --decoder luong --hidden-size 16; " in err
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
    assert "seq2seq-attention translate --checkpoint" in err  # the way that keeps the run comes first


def test_an_unreadable_checkpoint_is_not_offered_for_resuming(tmp_path, capsys):
    checkpoint = tmp_path / "broken"
    checkpoint.mkdir()
    (checkpoint / "checkpoint.json").write_text("{not json", encoding="utf-8")
    code, _, err = train(capsys, checkpoint, *TINY)
    assert code == 2 and err.count("\n") == 1 and "cannot be read" in err and "(--resume" not in err
    assert (checkpoint / "checkpoint.json").read_text(encoding="utf-8") == "{not json"


def _readme_training_lines() -> list[list[str]]:
    """README's `train` / `--resume` / `translate --checkpoint` lines, as argument lists."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Command line", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    return [shlex.split(line)[1:] for line in block.splitlines() if "runs/mine" in line]


def test_readme_s_train_resume_resume_again_translate_all_succeed(tmp_path, monkeypatch, capsys):
    """README's sequence on a small budget: every --epochs divided by 10, the tiny settings added to the first run."""
    lines = _readme_training_lines()
    assert [line[0] for line in lines] == ["train", "train", "train", "translate"]
    assert "--keep-training-state" in lines[0] and all("--resume" in line for line in lines[1:3])
    monkeypatch.chdir(tmp_path)
    for number, words in enumerate(lines):
        words = [str(int(w) // 10) if words[i - 1] == "--epochs" else w for i, w in enumerate(words)]
        if number == 0:
            words += [*TINY, "--device", "cpu"]
        elif words[0] == "train":
            words += ["--no-progress", "--device", "cpu"]
        code = main(words)
        out, err = capsys.readouterr()
        assert code == 0, (words, err)
        if words[0] == "train":
            record = saved(tmp_path / "runs" / "mine")
            assert record["training"]["epoch"] == int(words[words.index("--epochs") + 1])
            assert "training" in record["files"], "the run can be resumed again"
    assert out.strip() and not err


def test_drop_training_state_keeps_the_weights_only_and_the_message_keeps_the_run(tmp_path, capsys):
    checkpoint = tmp_path / "run"
    assert train(capsys, checkpoint, *TINY, "--epochs", "1", "--keep-training-state")[0] == 0
    code, _, err = train(capsys, checkpoint, "--resume", "--epochs", "2", "--drop-training-state", "--no-progress")
    assert code == 0, err
    assert saved(checkpoint)["training"]["epoch"] == 2 and "training" not in saved(checkpoint)["files"]
    before = saved(checkpoint)
    code, out, err = train(capsys, checkpoint, "--resume", "--epochs", "3")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "holds the weights only" in err and "--drop-training-state" in err
    assert f"seq2seq-attention translate --checkpoint {checkpoint}" in err
    assert f"seq2seq-attention train --init-from {checkpoint} --checkpoint {checkpoint}-more --epochs N" in err
    assert saved(checkpoint) == before
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--checkpoint", str(checkpoint), "--keep-training-state", "--drop-training-state"])
    assert exit_info.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


def test_ctrl_c_says_what_was_kept_and_the_command_that_continues(tmp_path, monkeypatch, capsys):
    from seq2seq_attention.translation import train as training

    checkpoint = tmp_path / "run"
    real = training.train_epoch

    def interrupted_in_epoch_2(*args, **kwargs):
        if args[5] == 2:  # the epoch number
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(training, "train_epoch", interrupted_in_epoch_2)
    code, _, err = train(capsys, checkpoint, *TINY, "--epochs", "3")
    assert code == 130 and err.count("\n") == 1, err
    assert f"{checkpoint} keeps the checkpoint of epoch 1 of 3" in err
    resume = f"seq2seq-attention train --checkpoint {checkpoint} --resume --epochs 3"
    assert err.rstrip().endswith(resume)
    monkeypatch.setattr(training, "train_epoch", real)
    assert main([*shlex.split(resume)[1:], "--no-progress", "--device", "cpu"]) == 0  # the command it printed
    assert saved(checkpoint)["training"]["epoch"] == 3


def test_a_second_train_into_a_folder_another_train_is_writing_is_refused_naming_it(tmp_path, capsys):
    import subprocess
    import sys
    import time

    from seq2seq_attention.core.files import LOCK_NAME

    checkpoint = tmp_path / "run"
    first = subprocess.Popen(
        [sys.executable, "-m", "seq2seq_attention", "train", "--checkpoint", str(checkpoint), *TINY, "--epochs", "500"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 300
        while not (checkpoint / LOCK_NAME).is_file() and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert first.poll() is None, first.stderr.read()
        for options in (
            [*TINY, "--epochs", "1"],
            [*TINY, "--epochs", "1", "--overwrite"],
            ["--resume", "--epochs", "9"],
        ):
            code, out, err = train(capsys, checkpoint, *options)
            assert code == 2 and out == "" and err.count("\n") == 1, err
            assert f"--checkpoint '{checkpoint}' is being written by another process (pid {first.pid}" in err
        assert first.poll() is None, "the refused commands touched the running one"
    finally:
        first.kill()
        first.wait()


def test_init_from_trains_on_from_the_weights_as_a_new_run_with_the_saved_settings(tmp_path, monkeypatch, capsys):
    """The way on that a weights-only message offers: its command runs; the new run starts from exactly those
    weights (training is stopped here so the weights come out unchanged), counts its epochs from 1, says where it
    started, and refuses options that contradict the saved settings."""
    from seq2seq_attention.translation import train as training

    weights = tmp_path / "weights"
    assert train(capsys, weights, *TINY, "--epochs", "1", "--label-smoothing", "0.1")[0] == 0
    assert "training" not in saved(weights)["files"]
    code, _, err = train(capsys, weights, "--resume", "--epochs", "2")
    offered = shlex.split(err.split("start a new run from them: ", 1)[1].split(";", 1)[0].replace(" N ", " 2 "))
    more = Path(offered[offered.index("--checkpoint") + 1])
    assert more == Path(f"{weights}-more")
    monkeypatch.setattr(training, "train_epoch", lambda *args, **kwargs: (1.0, 1.0))  # no update: weights kept
    code = main([*offered[1:], "--no-progress", "--device", "cpu"])
    out, err = capsys.readouterr()
    assert code == 0, err
    record = saved(more)
    assert record["training"]["epoch"] == 2 and [h["epoch"] for h in record["training"]["history"]] == [1, 2]
    assert record["training"]["started_from"] == {"checkpoint": str(weights), "epoch": 1}
    assert record["training"]["config"]["label_smoothing"] == 0.1 and "training" in record["files"]
    assert record["files"]["model"]["sha256"] == saved(weights)["files"]["model"]["sha256"]  # the same weights
    assert main(["train", "--checkpoint", str(more), "--resume", "--epochs", "3", "--no-progress"]) == 0
    code, _, err = train(capsys, tmp_path / "other", "--init-from", str(weights), "--hidden-size", "16")
    assert (
        code == 2 and "cannot start from" in err and "it was trained with --hidden-size 8, not --hidden-size 16" in err
    )
    code, _, err = train(capsys, tmp_path / "other", "--init-from", str(weights), "--resume")
    assert code == 2 and "cannot be combined with --resume" in err
    assert not (tmp_path / "other").exists()


def test_a_run_that_averages_its_last_epochs_is_refused_and_no_message_offers_a_resume(tmp_path, capsys):
    checkpoint = tmp_path / "averaged"
    code, _, err = train(capsys, checkpoint, *TINY, "--epochs", "1", "--average-last", "2", "--keep-training-state")
    assert code == 0, err
    before = {p.name: p.read_bytes() for p in checkpoint.iterdir()}
    code, out, err = train(capsys, checkpoint, "--resume", "--epochs", "2")
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert "cannot resume from" in err and "averages the weights of its last 2 epochs" in err and "--init-from" in err
    code, _, err = train(capsys, checkpoint, *TINY, "--epochs", "1")
    assert code == 2 and "averages the weights" in err and "(--resume" not in err
    assert {p.name: p.read_bytes() for p in checkpoint.iterdir()} == before


def test_a_training_state_of_another_model_is_one_line_and_leaves_no_lock(finished_runs, tmp_path, capsys):
    """The state a fused Adam step would read past (a segmentation fault): refused before training, the lock gone."""
    import shutil

    import torch

    from seq2seq_attention import build_model, load_checkpoint, save_checkpoint
    from seq2seq_attention.core.files import LOCK_NAME

    checkpoint = tmp_path / "run"
    shutil.copytree(finished_runs["kept"], checkpoint)
    loaded = load_checkpoint(checkpoint)
    other = build_model("bahdanau", len(loaded.vocabs.source), len(loaded.vocabs.target), hidden_size=16)
    optimizer = torch.optim.Adam(other.parameters())
    for parameter in other.parameters():
        parameter.grad = torch.ones_like(parameter)
    optimizer.step()
    elsewhere = save_checkpoint(tmp_path / "other", other, loaded.vocabs, optimizer=optimizer)
    document, theirs = saved(checkpoint), saved(elsewhere)
    shutil.copy(elsewhere / theirs["files"]["training"]["name"], checkpoint)
    document["files"]["training"] = theirs["files"]["training"]
    document["training"]["optimizer"] = theirs["training"]["optimizer"]
    (checkpoint / "checkpoint.json").write_text(json.dumps(document), encoding="utf-8")
    before = {p.name: p.read_bytes() for p in checkpoint.iterdir()}
    code, out, err = train(capsys, checkpoint, "--resume", "--epochs", "2")
    assert code == 2 and err.count("\n") == 1 and "the optimizer state does not fit this model" in err, err
    assert {p.name: p.read_bytes() for p in checkpoint.iterdir()} == before and LOCK_NAME not in before
