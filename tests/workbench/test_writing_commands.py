"""Writes that destroy nothing, and values read from checkpoints checked like the command line's.

* `staged_writes`, which every write goes through: for any set of files, any of them already
  there, a failure at any file's write, flush or rename leaves the disk exactly as it was;
* every command that writes (`train`, `sentiment-train`, `export-onnx`, `plot-attention`,
  `sentiment-attention-figure`, and `save_checkpoint`), over a destination of each kind: refused
  with one line when it holds another kind of artifact, or the same kind without `--overwrite`,
  and the disk left as it was; with `--overwrite`, a failure injected at each file of the write
  leaves the old files in place;
* a checkpoint whose saved `max_words` (any JSON value) breaks the command line's rule for it, or
  whose `epoch` is not a count, is one clear line, never a traceback.
"""

import json
import os
import shutil
from pathlib import Path

import matplotlib.figure
import pytest
import torch
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support import ROOT, tiny_classifier, tiny_translator, tiny_vocabs

from seq2seq_attention import InputError, load_checkpoint, save_checkpoint
from seq2seq_attention.cli import main
from seq2seq_attention.core import files as files_module
from seq2seq_attention.core.files import STAGING_PREFIX, artifact_kind, staged_writes
from seq2seq_attention.core.vocabulary import Vocabularies, Vocabulary
from seq2seq_attention.sentiment.train import SentimentConfig, run_training

pytestmark = pytest.mark.usefixtures("one_thread")

SENTIMENT_CHECKPOINT = ROOT / "results" / "sentiment" / "checkpoints" / "imdb_attention"
VOCABS = tiny_vocabs()


def snapshot(directory: Path) -> dict[str, bytes | None]:
    """Every file and folder under `directory` (folders as None), to compare before and after."""
    return {
        str(p.relative_to(directory)): p.read_bytes() if p.is_file() else None for p in sorted(directory.rglob("*"))
    }


class Failure(OSError):
    """The failure a test injects."""


def fail_at(monkeypatch: pytest.MonkeyPatch, owner: object, name: str, at: int) -> None:
    """Make the `at`-th call of ``owner.name`` raise `Failure` (the others run as usual)."""
    real = getattr(owner, name)
    calls = 0

    def failing(*args, **kwargs):
        nonlocal calls
        calls += 1
        if calls == at:
            raise Failure(28, "No space left on device (injected)")
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, failing)


# The generic property --------------------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    names=st.lists(st.sampled_from(["a.onnx", "b.json", "c.bin", "d.png"]), min_size=1, max_size=4, unique=True),
    existing=st.lists(st.booleans(), min_size=4, max_size=4),
    where=st.sampled_from(["write", "fsync", "replace"]),
    at=st.integers(1, 8),
    nested=st.booleans(),
)
def test_a_failure_anywhere_in_a_staged_write_leaves_the_disk_as_it_was(
    tmp_path_factory, monkeypatch, names, existing, where, at, nested
):
    root = tmp_path_factory.mktemp("staged")
    (root / "other.txt").write_text("not ours")
    directory = root / "new" / "deeper" if nested else root
    if not nested:
        for name, there in zip(names, existing, strict=False):
            if there:
                (directory / name).write_bytes(b"old " + name.encode())
    before = snapshot(root)
    writes = 0
    with monkeypatch.context() as patch:
        if where == "fsync":
            fail_at(patch, os, "fsync", at)
        if where == "replace":
            fail_at(patch, os, "replace", at)
        try:
            with staged_writes(*(directory / name for name in names)) as staged:
                for path in staged:
                    writes += 1
                    if where == "write" and writes == at:
                        raise Failure(28, "injected")
                    path.write_bytes(b"new " + path.name.encode())
        except Failure:
            assert snapshot(root) == before
            return
    assert {name: (directory / name).read_bytes() for name in names} == {n: b"new " + n.encode() for n in names}
    assert not [p for p in root.rglob(f"{STAGING_PREFIX}*")]
    assert (root / "other.txt").read_text() == "not ours"


def test_a_directory_where_a_file_should_go_is_refused_before_anything_is_written(tmp_path):
    (tmp_path / "b.json").mkdir()
    with pytest.raises(InputError, match="is a directory where a file should be written"):
        with staged_writes(tmp_path / "a.onnx", tmp_path / "b.json"):
            raise AssertionError("nothing may be staged")
    assert snapshot(tmp_path) == {"b.json": None}


# Destinations of each kind, for every command that writes ---------------------------------------


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One existing destination of each kind."""
    root = tmp_path_factory.mktemp("artifacts")
    export = root / "export"
    export.mkdir()
    for name in files_module.EXPORT_NAMES:
        (export / name).write_bytes(b"an older export's " + name.encode())
    clash = root / "clash"
    (clash / "encoder.onnx").mkdir(parents=True)
    (root / "a-file").write_text("keep me")
    (root / "image.png").write_bytes(b"\x89PNG an older image")
    (root / "record.json").write_text("[]")
    kinds = {
        "translation": save_checkpoint(root / "translation", tiny_translator(), VOCABS),
        "sentiment": save_checkpoint(root / "sentiment", tiny_classifier("mean", 6), Vocabularies(_sentiment_vocab())),
        "export": export,
        "clash": clash,
        "file": root / "a-file",
        "image": root / "image.png",
        "json": root / "record.json",
    }
    return kinds


def _sentiment_vocab() -> Vocabulary:
    return Vocabulary.from_counts("words", [["good", "bad"]] * 2)


def test_each_artifact_is_named_by_its_kind(artifacts):
    assert artifact_kind(artifacts["translation"]) == "a translation checkpoint"
    assert artifact_kind(artifacts["sentiment"]) == "a sentiment checkpoint"
    assert artifact_kind(artifacts["export"]) == "an ONNX export"
    assert artifact_kind(artifacts["file"]) == artifact_kind(artifacts["image"]) == "a file"
    assert artifact_kind(artifacts["translation"] / "missing") is None


TRAIN = ["train", "--decoder", "gru", "--hidden-size", "8", "--epochs", "1", "--no-progress", "--checkpoint"]
SENTIMENT_TRAIN = ["sentiment-train", "--kind", "mean", "--epochs", "1", "--out"]
EXPORT = ["export-onnx", "--out"]
PLOT = ["plot-attention", "je suis fatigue .", "--output"]
FIGURE = ["sentiment-attention-figure", "--checkpoint", str(SENTIMENT_CHECKPOINT), "--out"]

REFUSED = [
    # (command, destination kind, with --overwrite, what the line says)
    (TRAIN, "translation", False, "already holds a checkpoint"),
    (TRAIN, "sentiment", True, "holds a sentiment checkpoint, not a translation checkpoint"),
    (TRAIN, "export", True, "holds an ONNX export, not a translation checkpoint"),
    (TRAIN, "file", True, "is a file, expected a directory"),
    (SENTIMENT_TRAIN, "sentiment", False, "already holds a sentiment checkpoint; pass --overwrite"),
    (SENTIMENT_TRAIN, "translation", True, "holds a translation checkpoint, not a sentiment checkpoint"),
    (SENTIMENT_TRAIN, "export", True, "holds an ONNX export, not a sentiment checkpoint"),
    (SENTIMENT_TRAIN, "file", True, "is a file, expected a directory"),
    (EXPORT, "export", False, "already holds an ONNX export; pass --overwrite"),
    (EXPORT, "translation", True, "holds a translation checkpoint, not an ONNX export"),
    (EXPORT, "sentiment", True, "holds a sentiment checkpoint, not an ONNX export"),
    (EXPORT, "clash", True, "encoder.onnx is a directory where the export's file should go"),
    (EXPORT, "file", True, "is a file, expected a directory"),
    (PLOT, "image", False, "already holds a file; pass --overwrite"),
    (PLOT, "translation", True, "must end in .png"),
    (FIGURE, "image", False, "already holds a file; pass --overwrite"),
    (FIGURE, "export", True, "must end in .png"),
]


@pytest.mark.parametrize(
    ("command", "kind", "overwrite", "message"),
    REFUSED,
    ids=[f"{c[0]}-over-{k}{'-overwrite' if o else ''}" for c, k, o, _ in REFUSED],
)
def test_every_writing_command_refuses_a_destination_it_must_not_replace(
    artifacts, command, kind, overwrite, message, capsys
):
    root = artifacts[kind].parent
    before = snapshot(root)
    argv = [*command, str(artifacts[kind])] + (["--overwrite"] if overwrite else [])
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err, err
    assert snapshot(root) == before


LONG_NAME = "a" * 300  # past the 255 bytes a file name holds on common file systems


@pytest.mark.parametrize(
    ("command", "suffix"),
    [(TRAIN, ""), (SENTIMENT_TRAIN, ""), (EXPORT, ""), (PLOT, ".png"), (FIGURE, ".png")],
    ids=["train", "sentiment-train", "export-onnx", "plot-attention", "sentiment-attention-figure"],
)
@pytest.mark.parametrize("folder", ["existing", "missing"])
def test_a_name_too_long_for_the_file_system_is_one_line(tmp_path, capsys, command, suffix, folder):
    (tmp_path / "existing").mkdir()
    before = snapshot(tmp_path)
    assert main([*command, str(tmp_path / folder / f"{LONG_NAME}{suffix}")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"is {300 + len(suffix)} bytes long; names here hold at most" in err, err
    assert snapshot(tmp_path) == before


def test_the_figures_json_is_checked_too(artifacts, tmp_path, capsys):
    before = snapshot(artifacts["json"].parent)
    argv = [*FIGURE, str(tmp_path / "new.png"), "--json", str(artifacts["json"])]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--json" in err and "already holds a file; pass --overwrite" in err
    assert snapshot(artifacts["json"].parent) == before and not list(tmp_path.iterdir())


def test_the_library_refuses_another_kind_too(artifacts):
    with pytest.raises(InputError, match="holds a sentiment checkpoint, not a translation checkpoint"):
        save_checkpoint(artifacts["sentiment"], tiny_translator(), VOCABS)
    with pytest.raises(InputError, match="already holds a sentiment checkpoint"):
        run_training(SentimentConfig(kind="mean", epochs=1), checkpoint=artifacts["sentiment"], progress=False)
    from seq2seq_attention.translation.export import export_onnx

    with pytest.raises(InputError, match="holds a translation checkpoint, not an ONNX export"):
        export_onnx(tiny_translator(), VOCABS, artifacts["translation"])


# A failure at each file of each command's write -------------------------------------------------


@pytest.mark.parametrize(
    ("owner", "name", "at"),
    [(Path, "write_bytes", 1), (Path, "write_bytes", 2)] + [(os, "replace", k) for k in (1, 2, 3)],
)
def test_a_failed_checkpoint_save_keeps_the_old_checkpoint(tmp_path, monkeypatch, owner, name, at):
    directory = tmp_path / "checkpoint"
    old = tiny_translator("luong")
    optimizer = torch.optim.Adam(old.parameters())
    save_checkpoint(directory, old, VOCABS, training={"epoch": 1}, optimizer=optimizer, save_rng=True)
    before = snapshot(tmp_path)
    fail_at(monkeypatch, owner, name, at)
    with pytest.raises(Failure):
        save_checkpoint(
            directory, tiny_translator("luong").requires_grad_(False).apply(_shift), VOCABS, training={"epoch": 2}
        )
    monkeypatch.undo()
    assert snapshot(tmp_path) == before
    assert load_checkpoint(directory).training["epoch"] == 1


def test_a_save_into_a_folder_made_read_only_meanwhile_leaves_no_lock(tmp_path, monkeypatch):
    """The folder loses its write permission once the files are staged: the save fails, the old checkpoint stays,
    and the lock the save took goes with it (the folder's owner lends it the write permission for that removal)."""
    from support import enforce_owner_permissions

    directory = tmp_path / "checkpoint"
    save_checkpoint(directory, tiny_translator("luong"), VOCABS, training={"epoch": 1})
    before = snapshot(tmp_path)
    real_commit = files_module._commit

    def commit_into_a_read_only_folder(destinations, staged):
        directory.chmod(0o555)
        return real_commit(destinations, staged)

    monkeypatch.setattr(files_module, "_commit", commit_into_a_read_only_folder)
    enforce_owner_permissions(monkeypatch)
    try:
        with pytest.raises(PermissionError):
            save_checkpoint(directory, tiny_translator("luong", seed=1), VOCABS, training={"epoch": 2})
    finally:
        monkeypatch.undo()
    assert directory.stat().st_mode & 0o777 == 0o555  # the folder's mode is the user's
    directory.chmod(0o755)
    assert snapshot(tmp_path) == before and not (directory / files_module.LOCK_NAME).exists()
    assert load_checkpoint(directory).training["epoch"] == 1


def _shift(module: torch.nn.Module) -> None:
    for parameter in module.parameters(recurse=False):
        parameter.add_(1.0)


@pytest.mark.parametrize("at", [1, 2])
def test_a_failed_sentiment_training_write_keeps_the_old_checkpoint(artifacts, tmp_path, monkeypatch, at):
    directory = tmp_path / "sentiment"
    shutil.copytree(artifacts["sentiment"], directory)
    before = snapshot(tmp_path)
    fail_at(monkeypatch, os, "replace", at)
    with pytest.raises(Failure):
        run_training(SentimentConfig(kind="mean", epochs=1), checkpoint=directory, progress=False, overwrite=True)
    monkeypatch.undo()
    assert snapshot(tmp_path) == before


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_checkpoint(tmp_path_factory.mktemp("tiny") / "bahdanau", tiny_translator(), VOCABS)


EXPORT_FAILURES = [
    ("torch.onnx", "export", 1),
    ("torch.onnx", "export", 2),
    (Path, "write_text", 1),
    (Path, "write_text", 2),
    (os, "replace", 12),  # 4 renames inside the stage, then the last of 8 over the old export
]
EXPORT_IDS = ["encoder", "step", "vocabularies", "sentences", "last-rename"]


@pytest.mark.slow
@pytest.mark.parametrize(("owner", "name", "at"), EXPORT_FAILURES, ids=EXPORT_IDS)
def test_a_failed_export_keeps_the_previous_export(
    artifacts, tiny_checkpoint, tmp_path, monkeypatch, owner, name, at, capsys
):
    out = tmp_path / "live"
    shutil.copytree(artifacts["export"], out)
    (out / "runtime.wasm").write_bytes(b"a neighbour the export must not touch")
    before = snapshot(tmp_path)
    fail_at(monkeypatch, torch.onnx if owner == "torch.onnx" else owner, name, at)
    with pytest.raises(Failure):
        main(["export-onnx", "--checkpoint", str(tiny_checkpoint), "--out", str(out), "--overwrite"])
    monkeypatch.undo()
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize(("owner", "name"), [(matplotlib.figure.Figure, "savefig"), (os, "replace")])
def test_a_failed_heatmap_write_keeps_the_old_image(tiny_checkpoint, tmp_path, monkeypatch, owner, name):
    image = tmp_path / "map.png"
    image.write_bytes(b"\x89PNG an older image")
    before = snapshot(tmp_path)
    fail_at(monkeypatch, owner, name, 1)
    with pytest.raises(Failure):
        main(
            ["plot-attention", "il est grand .", "--checkpoint", str(tiny_checkpoint), "-o", str(image), "--overwrite"]
        )
    monkeypatch.undo()
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize(
    ("owner", "name", "at"),
    [(matplotlib.figure.Figure, "savefig", 1), (Path, "write_text", 1), (os, "replace", 1), (os, "replace", 2)],
)
def test_a_failed_sentiment_figure_keeps_the_old_figure_and_json(tmp_path, monkeypatch, owner, name, at):
    (tmp_path / "figure.png").write_bytes(b"\x89PNG old")
    (tmp_path / "figure.json").write_text("[]")
    before = snapshot(tmp_path)
    fail_at(monkeypatch, owner, name, at)
    argv = [*FIGURE, str(tmp_path / "figure.png"), "--json", str(tmp_path / "figure.json"), "--overwrite"]
    with pytest.raises(Failure):
        main(argv)
    monkeypatch.undo()
    assert snapshot(tmp_path) == before


def test_with_overwrite_the_figure_and_json_are_replaced_together(tmp_path, capsys):
    (tmp_path / "figure.png").write_bytes(b"\x89PNG old")
    (tmp_path / "figure.json").write_text("[]")
    argv = [
        *FIGURE,
        str(tmp_path / "figure.png"),
        "--json",
        str(tmp_path / "figure.json"),
        "--overwrite",
        "--count",
        "2",
    ]
    assert main(argv) == 0
    assert len(json.loads((tmp_path / "figure.json").read_text())) == 2
    assert (tmp_path / "figure.png").read_bytes()[:4] == b"\x89PNG" and (tmp_path / "figure.png").stat().st_size > 100
    assert sorted(p.name for p in tmp_path.iterdir()) == ["figure.json", "figure.png"]


# Values read from a checkpoint ------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10**9) | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2),
    max_leaves=4,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    value=JSON_VALUES | st.sampled_from(["six", 0, -1, 1.5, True, [6], 6.0]),
    command=st.sampled_from(["translate", "plot-attention"]),
)
@example(value=float("inf"), command="translate")  # found by hypothesis: json.dumps writes `Infinity`
@example(value=[float("-inf")], command="plot-attention")
@example(value=float("nan"), command="translate")
def test_a_saved_max_words_is_checked_with_the_command_lines_rule(
    tiny_checkpoint, tmp_path_factory, capsys, value, command
):
    directory = tmp_path_factory.mktemp("max_words") / "checkpoint"
    shutil.copytree(tiny_checkpoint, directory)
    document = json.loads((directory / "checkpoint.json").read_text(encoding="utf-8"))
    document["training"] = {"config": {"max_words": value}}
    (directory / "checkpoint.json").write_text(json.dumps(document), encoding="utf-8")
    argv = [command, "il est grand .", "--checkpoint", str(directory)]
    if command == "plot-attention":
        argv += ["-o", str(directory.parent / "map.png")]
    valid = isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 1000
    code = main(argv)
    err = capsys.readouterr().err
    try:
        json.dumps(value, allow_nan=False)
    except ValueError:  # NaN or an infinity: Python writes `NaN`/`Infinity`, which strict JSON (and the loader) refuses
        assert code == 2 and err.count("\n") == 1 and "is corrupted (not valid JSON:" in err, err
        assert ("Infinity is not valid JSON" in err) or ("NaN is not valid JSON" in err), err
        return
    if valid and value >= 4:
        assert code == 0, err
    elif valid:
        assert code == 2 and "words after normalisation" in err
    else:
        assert code == 2 and err.count("\n") == 1 and "malformed training config: max_words must" in err, err


@pytest.mark.parametrize("epoch", ["six", -1, 1.5, None, [1], True])
def test_a_saved_epoch_that_is_not_a_count_is_refused(tiny_checkpoint, tmp_path, epoch, capsys):
    directory = tmp_path / "checkpoint"
    shutil.copytree(tiny_checkpoint, directory)
    document = json.loads((directory / "checkpoint.json").read_text(encoding="utf-8"))
    document["training"] = {"epoch": epoch, "config": {"max_words": 6}}
    (directory / "checkpoint.json").write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(InputError, match="'epoch' must be an int >= 0"):
        load_checkpoint(directory)
    assert main(["translate", "--checkpoint", str(directory), "il est grand ."]) == 2
    assert "'epoch' must be an int >= 0" in capsys.readouterr().err


def test_a_training_config_that_is_not_an_object_is_refused(tiny_checkpoint, tmp_path, capsys):
    directory = tmp_path / "checkpoint"
    shutil.copytree(tiny_checkpoint, directory)
    document = json.loads((directory / "checkpoint.json").read_text(encoding="utf-8"))
    document["training"] = {"config": "max_words=6"}
    (directory / "checkpoint.json").write_text(json.dumps(document), encoding="utf-8")
    assert main(["translate", "--checkpoint", str(directory), "il est grand ."]) == 2
    assert "malformed training config: it is not an object" in capsys.readouterr().err
