"""Resumable runs, atomic checkpoints, and clear errors for bad checkpoints and bad input.

Everything trains a tiny model (H=8) on 20 synthetic sentence pairs, so the file takes seconds:

* a run interrupted in the middle of an epoch and resumed from its last checkpoint gives the
  same losses (bitwise) and weights as a run that was never interrupted, training only the
  epochs that were left;
* a checkpoint write that fails half way (at any of its three files) leaves no temporary file
  and the previous checkpoint intact; loading reads safetensors and JSON only (no pickle);
* each kind of missing, corrupted, truncated or mismatched checkpoint gives one clear line and
  exit code 2 from the CLI, and nothing on disk changes; so does a file on stdin that is not
  UTF-8, whichever error handler Python gave stdin.

Covered elsewhere, so not repeated here: the same seed gives bitwise-identical losses over two
epochs (`test_train.py::test_same_seed_same_losses_bitwise`, every decoder); a changed config,
or a directory without `checkpoint.json`, refuses to resume and an existing checkpoint is never
overwritten (`test_train.py`); unknown words, empty, whitespace-only and over-long sentences and
non-Latin letters through the CLI (`test_cli.py::test_translate_bad_input_is_one_line_and_exit_2`).
"""

import io
import json
import pickle
import re
import shutil
import sys
from pathlib import Path

import pytest
import torch
from support import files_of

from seq2seq_attention.cli import main
from seq2seq_attention.core import checkpoint as checkpoint_module
from seq2seq_attention.core.checkpoint import load_checkpoint, save_checkpoint
from seq2seq_attention.core.errors import InputError
from seq2seq_attention.translation import train as train_module
from seq2seq_attention.translation.corpus import Pair
from seq2seq_attention.translation.train import TrainConfig, train

pytestmark = pytest.mark.usefixtures("one_thread")
SUBJECTS = [("je suis", "i am"), ("il est", "he is"), ("elle est", "she is"), ("nous sommes", "we are")]
ADJECTIVES = [("fatigue", "tired"), ("content", "happy"), ("grand", "tall"), ("petit", "small"), ("malade", "sick")]
PAIRS = [Pair(f"{fr} {adj_fr} .", f"{en} {adj_en} .") for fr, en in SUBJECTS for adj_fr, adj_en in ADJECTIVES]
GOOD_SENTENCE = "Je suis fatigué."


def tiny_config(**change) -> TrainConfig:
    settings = dict(decoder="bahdanau", hidden_size=8, batch_size=4, epochs=2, teacher_forcing_ratio=0.5, seed=3)
    return TrainConfig(**{**settings, **change})


def run(config: TrainConfig, **kwargs):
    return train(config, pairs=PAIRS, progress=False, log=lambda line: None, **kwargs)


def losses(history: list[dict]) -> list[tuple[int, float, float]]:
    return [(h["epoch"], h["loss"], h["test_loss"]) for h in history]


def same_weights(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checkpoint of a tiny model trained for one epoch (weights, optimizer and RNG state)."""
    directory = tmp_path_factory.mktemp("trained") / "checkpoint"
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as `one_thread` does for the tests (a module fixture is set up before it)
    try:
        run(tiny_config(epochs=1), checkpoint=directory)
    finally:
        torch.set_num_threads(threads)
    return directory


@pytest.fixture
def checkpoint_copy(trained: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(trained, tmp_path / "checkpoint"))


def test_an_interrupted_run_resumes_with_the_same_losses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    config = tiny_config(epochs=3)
    real_step = train_module.train_step
    calls = 0
    interrupt_at = None

    def counted_step(*args, **kwargs):
        nonlocal calls
        calls += 1
        if calls == interrupt_at:
            raise KeyboardInterrupt
        return real_step(*args, **kwargs)

    monkeypatch.setattr(train_module, "train_step", counted_step)
    straight = run(config, checkpoint=tmp_path / "straight")
    steps_per_epoch, calls = calls // config.epochs, 0
    interrupt_at = steps_per_epoch + steps_per_epoch // 2 + 1  # in the middle of epoch 2
    with pytest.raises(KeyboardInterrupt):
        run(config, checkpoint=tmp_path / "interrupted")
    assert load_checkpoint(tmp_path / "interrupted").training["epoch"] == 1

    interrupt_at, calls = None, 0
    resumed = run(config, checkpoint=tmp_path / "interrupted", resume=True)
    assert calls == 2 * steps_per_epoch, "the resumed run must train epochs 2 and 3 only"
    assert losses(resumed.history) == losses(straight.history)
    assert same_weights(resumed.model, straight.model)


@pytest.mark.parametrize("failing_write", [1, 2, 3], ids=["weights", "training-state", "json"])
def test_a_failed_checkpoint_write_keeps_the_previous_checkpoint(
    checkpoint_copy: Path, failing_write: int, monkeypatch: pytest.MonkeyPatch
):
    before = load_checkpoint(checkpoint_copy)
    newer = run(tiny_config(epochs=1, seed=11))
    assert not same_weights(newer.model, before.model)
    optimizer = torch.optim.Adam(newer.model.parameters())
    real_fsync = checkpoint_module.os.fsync
    writes = 0

    def failing_fsync(fd: int) -> None:
        nonlocal writes
        writes += 1
        if writes == failing_write:
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(checkpoint_module.os, "fsync", failing_fsync)
    with pytest.raises(OSError, match="No space left"):
        save_checkpoint(
            checkpoint_copy, newer.model, newer.vocabs, training={"epoch": 7}, optimizer=optimizer, save_rng=True
        )
    monkeypatch.undo()
    assert not [p.name for p in checkpoint_copy.iterdir() if p.name.endswith(".tmp")], "a temporary file was left"
    after = load_checkpoint(checkpoint_copy)
    assert same_weights(after.model, before.model) and after.training["epoch"] == 1


def test_checkpoints_are_safetensors_and_json_and_load_without_pickle(trained: Path, monkeypatch: pytest.MonkeyPatch):
    assert {p.suffix for p in trained.iterdir()} == {".json", ".safetensors"}

    def refuse(*args, **kwargs):
        raise AssertionError("a checkpoint must not be unpickled")

    for module, name in ((torch, "load"), (pickle, "load"), (pickle, "loads"), (pickle, "Unpickler")):
        monkeypatch.setattr(module, name, refuse)
    checkpoint = load_checkpoint(trained)
    assert checkpoint.training["epoch"] == 1


def _break(kind: str, directory: Path) -> None:
    document = json.loads((directory / "checkpoint.json").read_text(encoding="utf-8"))
    weights = directory / document["files"]["model"]["name"]
    if kind == "missing-directory":
        shutil.rmtree(directory)
    elif kind == "missing-json":
        (directory / "checkpoint.json").unlink()
    elif kind == "corrupted-json":
        (directory / "checkpoint.json").write_bytes(b"\x00\xff not json")
    elif kind == "not-a-checkpoint":
        (directory / "checkpoint.json").write_text('{"hello": "world"}', encoding="utf-8")
    elif kind == "truncated-weights":
        weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    elif kind == "corrupted-weights":
        data = bytearray(weights.read_bytes())
        data[-5] ^= 0xFF
        weights.write_bytes(bytes(data))
    elif kind == "missing-weights":
        weights.unlink()
    elif kind == "mismatched-size":
        document["config"]["hidden_size"] = 16
        (directory / "checkpoint.json").write_text(json.dumps(document), encoding="utf-8")
    elif kind == "mismatched-vocabulary":
        document["config"]["tgt_vocab_size"] += 1
        (directory / "checkpoint.json").write_text(json.dumps(document), encoding="utf-8")
    else:
        raise AssertionError(kind)


BROKEN = {
    "missing-directory": r"no checkpoint at .*: the directory does not exist",
    "missing-json": r"no checkpoint at .*: checkpoint\.json is missing",
    "corrupted-json": r"checkpoint file .*checkpoint\.json is corrupted \(not valid JSON: .*\)",
    "not-a-checkpoint": r".*checkpoint\.json is not a seq2seq-attention checkpoint.*",
    "truncated-weights": r"checkpoint file .*model-\w+\.safetensors is corrupted or truncated.*",
    "corrupted-weights": r"checkpoint file .*model-\w+\.safetensors is corrupted or truncated.*",
    "missing-weights": r"checkpoint .* is incomplete: model-\w+\.safetensors \(weights\) is missing",
    "mismatched-size": r"checkpoint .* does not match its config .*'hidden_size': 16.*: .*wrong tensors.*",
    "mismatched-vocabulary": r"checkpoint .* is mismatched: the model has a target vocabulary of \d+ but .* has \d+",
}


def _cli(argv: list[str], capsys: pytest.CaptureFixture) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _one_error_line(err: str, command: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got {lines}"
    prefix = f"seq2seq-attention {command}: error: "
    assert lines[0].startswith(prefix), lines[0]
    return lines[0].removeprefix(prefix)


@pytest.mark.parametrize("kind", BROKEN)
def test_a_bad_checkpoint_gives_one_line_and_exit_2(kind: str, checkpoint_copy: Path, capsys: pytest.CaptureFixture):
    _break(kind, checkpoint_copy)
    before = files_of(checkpoint_copy) if checkpoint_copy.exists() else None
    with pytest.raises(InputError):
        load_checkpoint(checkpoint_copy)
    code, out, err = _cli(["translate", "--checkpoint", str(checkpoint_copy), GOOD_SENTENCE], capsys)
    assert code == 2 and out == ""
    message = _one_error_line(err, "translate")
    assert re.fullmatch(BROKEN[kind], message), message
    assert (files_of(checkpoint_copy) if checkpoint_copy.exists() else None) == before, "the checkpoint changed"


def test_resuming_from_a_corrupted_checkpoint_is_a_user_error(checkpoint_copy: Path):
    _break("truncated-weights", checkpoint_copy)
    before = files_of(checkpoint_copy)
    with pytest.raises(InputError, match="corrupted or truncated"):
        run(tiny_config(), checkpoint=checkpoint_copy, resume=True)
    assert files_of(checkpoint_copy) == before, "a failed resume must not overwrite the checkpoint"


def test_a_good_sentence_translates(trained: Path, capsys: pytest.CaptureFixture):
    code, out, err = _cli(["translate", "--checkpoint", str(trained), GOOD_SENTENCE, "il est grand ."], capsys)
    assert code == 0 and err == ""
    assert len(out.splitlines()) == 2


@pytest.mark.parametrize(
    "errors",
    [
        pytest.param("strict", id="utf8-locale"),
        # Under LC_ALL=C (or python -X utf8) sys.stdin decodes with surrogateescape: the CLI must read the bytes.
        pytest.param("surrogateescape", id="c-locale-or-utf8-mode"),
    ],
)
def test_non_utf8_input_gives_one_line_and_exit_2(
    errors: str, trained: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
):
    """stdin as Python sets it up: strict in a UTF-8 locale, surrogateescape in the C locale."""
    latin1 = "je suis fatigué .\n".encode("latin-1")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(latin1), encoding="utf-8", errors=errors))
    code, out, err = _cli(["translate", "--checkpoint", str(trained)], capsys)
    assert code == 2 and out == ""
    assert "utf-8" in _one_error_line(err, "translate").lower()
