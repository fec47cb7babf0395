"""core.files.staged_writes: duplicate destinations refused before anything is touched, no staging left behind."""

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seq2seq_attention.core import files
from seq2seq_attention.core.errors import InputError
from seq2seq_attention.core.files import STAGING_PREFIX, staged_writes

NAMES = st.sampled_from(["a.json", "b.bin", "c.txt", "sub/a.json", "sub/deeper/d.txt"])


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every path under `root` with its bytes (None for a folder)."""
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))}


def no_staging(root: Path) -> bool:
    return not any(p.name.startswith(STAGING_PREFIX) or p.name.startswith(".old-") for p in root.rglob("*"))


def spelled(root: Path, name: str, how: int) -> Path:
    """One destination, written three ways: plainly, through a `..`, and through `.`."""
    path = root / name
    return [path, path.parent / ".." / path.parent.name / path.name, path.parent / "." / path.name][how]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(NAMES, min_size=1, max_size=4), twice=st.integers(0, 3), how=st.integers(0, 2), old=st.booleans())
def test_a_destination_named_twice_is_refused_before_anything_is_touched(tmp_path_factory, names, twice, how, old):
    root = tmp_path_factory.mktemp("dup")
    (root / "sub").mkdir()  # so that the `..` spelling resolves
    if old:
        for name in names:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text("old " + name)
    before = snapshot(root)
    duplicate = names[twice % len(names)]
    destinations = [root / n for n in names] + [spelled(root, duplicate, how)]
    with pytest.raises(InputError, match="is named twice among the files to write"):
        with staged_writes(*destinations) as staged:
            for path in staged:
                path.write_text("new")
    assert snapshot(root) == before


def test_the_issue_example_keeps_the_original(tmp_path: Path):
    original = tmp_path / "f.json"
    original.write_text("keep me")
    with pytest.raises(InputError, match="named twice"):
        with staged_writes(original, original) as staged:
            staged[0].write_text("new")
    assert original.read_text() == "keep me" and [p.name for p in tmp_path.iterdir()] == ["f.json"]


class Boom(Exception):
    pass


@pytest.mark.parametrize("where", ["block", "unwritten", "sync", "second rename", "first rename"])
def test_every_failure_leaves_the_old_files_and_no_staging(tmp_path: Path, monkeypatch, where: str):
    first, second = tmp_path / "one.json", tmp_path / "new" / "two.json"
    first.write_text("old one")
    before = snapshot(tmp_path)
    if where == "sync":
        monkeypatch.setattr(files, "_sync", lambda path: (_ for _ in ()).throw(Boom()))
    if where.endswith("rename"):
        real, calls = os.replace, []

        def replace(source, target):
            calls.append(target)
            if (where == "first rename" and len(calls) == 1) or (where == "second rename" and len(calls) == 3):
                raise Boom()
            return real(source, target)

        monkeypatch.setattr(files.os, "replace", replace)
    with pytest.raises((Boom, RuntimeError)):
        with staged_writes(first, second) as staged:
            if where == "block":
                raise Boom()
            staged[0].write_text("new one")
            if where != "unwritten":
                staged[1].write_text("new two")
    monkeypatch.undo()
    assert snapshot(tmp_path) == before and no_staging(tmp_path)


def test_a_staging_folder_in_a_folder_made_read_only_is_still_removed(tmp_path: Path, monkeypatch):
    """The first removal fails as it does when the parent lost its write permission; the folder's owner lends it
    back for the one removal, and the folder's mode is restored."""
    folder = tmp_path / "out"
    folder.mkdir(mode=0o755)
    (folder / "kept.txt").write_text("old")
    real, failures = shutil.rmtree, []

    def rmtree(path, ignore_errors=False):
        if not failures and Path(path).name.startswith(STAGING_PREFIX):
            failures.append(path)
            for child in Path(path).iterdir():
                child.unlink()
            return None  # the stage emptied, the folder itself not removable (as in a read-only parent)
        return real(path, ignore_errors=ignore_errors)

    monkeypatch.setattr(files.shutil, "rmtree", rmtree)
    with pytest.raises(Boom):
        with staged_writes(folder / "kept.txt") as (staged,):
            staged.write_text("new")
            raise Boom()
    assert failures and no_staging(folder) and (folder / "kept.txt").read_text() == "old"
    assert (folder.stat().st_mode & 0o777) == 0o755


def test_a_directory_destination_is_refused(tmp_path: Path):
    with pytest.raises(InputError, match="is a directory where a file should be written"):
        with staged_writes(tmp_path):
            pass
    assert no_staging(tmp_path)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(NAMES, min_size=1, max_size=4, unique=True))
def test_distinct_destinations_all_land(tmp_path_factory, names):
    root = tmp_path_factory.mktemp("ok")
    with staged_writes(*(root / n for n in names)) as staged:
        for path, name in zip(staged, names, strict=True):
            path.write_text(name)
    assert all((root / n).read_text() == n for n in names) and no_staging(root)


# Concurrent writers of one folder (core.files.folder_lock) ------------------------------------------------------

SAVE_LOOP = """
import sys
import torch
from seq2seq_attention import build_model, save_checkpoint
from seq2seq_attention.translation.corpus import Pair, build_vocabularies

writer, count, folder = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
vocabs = build_vocabularies([Pair("je suis la .", "i am here ."), Pair("il est grand .", "he is tall .")])
torch.manual_seed(writer)
model = build_model("bahdanau", len(vocabs.source), len(vocabs.target), hidden_size=4 + writer)
print("READY", flush=True)
sys.stdin.readline()  # both writers start together
for i in range(count):
    save_checkpoint(folder, model, vocabs, training={"epoch": i, "writer": writer})
print("DONE", flush=True)
"""


@pytest.mark.slow
def test_two_processes_saving_into_one_folder_leave_the_last_checkpoint_whole(tmp_path: Path):
    import subprocess
    import sys

    from seq2seq_attention.core.checkpoint import load_checkpoint

    folder, count = tmp_path / "run", 25
    for round_ in range(2):
        writers = [
            subprocess.Popen(
                [sys.executable, "-c", SAVE_LOOP, str(writer), str(count), str(folder)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for writer in (1, 2)
        ]
        for process in writers:
            assert process.stdout.readline().strip() == "READY", process.stderr.read()
        for process in writers:
            process.stdin.write("go\n")
            process.stdin.flush()
        for process in writers:
            out, err = process.communicate(timeout=600)
            assert process.returncode == 0 and "DONE" in out, err
        loaded = load_checkpoint(folder)  # whole: the weights file its JSON names, with that file's hash
        assert loaded.training["epoch"] == count - 1 and loaded.training["writer"] in (1, 2), round_
        assert loaded.model.config["hidden_size"] == 4 + loaded.training["writer"]
        assert sorted(p.name.split("-")[0] for p in folder.iterdir()) == ["checkpoint.json", "model"]


HOLD = """
import sys
from pathlib import Path
from seq2seq_attention.core.files import folder_lock
with folder_lock(Path(sys.argv[1]), "test", wait=False):
    print("HELD", flush=True)
    sys.stdin.readline()
"""


def test_a_folder_held_by_a_live_process_is_refused_by_name_and_freed_when_it_dies(tmp_path: Path, capsys):
    import subprocess
    import sys

    folder = tmp_path / "out"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == b"HELD"
        with pytest.raises(
            InputError, match=rf"--out '{folder}' is being written by another process \(pid {holder.pid}"
        ):
            with files.folder_lock(folder, "--out", wait=False):
                pass
        with files.folder_lock(folder / "elsewhere", "--out", wait=False):  # another folder: free
            pass
        from seq2seq_attention.cli import main

        for command in (["export-onnx", "--out", str(folder)], ["sentiment-train", "--out", str(folder)]):
            assert main(command) == 2, command  # every writer of a folder follows the rule
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and f"is being written by another process (pid {holder.pid}" in err, err
    finally:
        holder.kill()  # killed, not released: the system frees its lock
        holder.wait()
    with files.folder_lock(folder, "--out", wait=False):
        with files.folder_lock(folder, "--out", wait=False):  # the holder may take it again (a train that saves)
            assert (folder / files.LOCK_NAME).is_file()
    assert not (folder / files.LOCK_NAME).exists()


@pytest.mark.parametrize(
    ("script", "argv", "folder_of"),
    [
        ("compare_attention", ["--out", "{folder}", "--tables-only"], lambda folder, module: folder),
        ("train_sentiment", ["--out", "{folder}", "--tables-only"], lambda folder, module: folder),
        ("seq2seq_report", ["--tables-only"], lambda folder, module: module.OUT),
    ],
)
def test_a_report_script_refuses_a_results_folder_another_run_is_writing(
    tmp_path: Path, capsys, monkeypatch, script, argv, folder_of
):
    """The report scripts write one results folder for a long time: a second run into it stops before any work."""
    import subprocess
    import sys

    from support import load_script

    module = load_script(script)
    folder = folder_of(tmp_path / "results", module)
    before = sorted(p.name for p in folder.iterdir()) if folder.exists() else None
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == b"HELD"
        monkeypatch.setattr(sys, "argv", [f"{script}.py", *(a.format(folder=folder) for a in argv)])
        status = module.main(*([] if script == "train_sentiment" else [sys.argv[1:]]))
        err = capsys.readouterr().err
        assert status == 2 and err.count("\n") == 1, err
        assert f"{script}.py: error:" in err and f"is being written by another process (pid {holder.pid}" in err, err
    finally:
        holder.kill()  # killed: the lock file it held stays behind, unlocked
        holder.wait()
        if before is None or files.LOCK_NAME not in before:
            (folder / files.LOCK_NAME).unlink(missing_ok=True)  # results/seq2seq is the repository's own folder
    after = sorted(p.name for p in folder.iterdir() if p.name != files.LOCK_NAME)  # the holder made the folder
    assert after == [n for n in before or [] if n != files.LOCK_NAME]  # the refused run wrote nothing


# What a folder's lock refuses: links, a folder in its place, a stale lock of another user, a folder it cannot make --


def take_lock(folder: Path, wait: bool = False) -> None:
    with files.folder_lock(folder, "--out", wait=wait):
        assert (folder / files.LOCK_NAME).read_text().startswith(f"pid {os.getpid()}")


@pytest.mark.parametrize("target", ["a file", "a dangling link"])
def test_a_lock_file_that_is_a_symbolic_link_is_refused_and_never_followed(tmp_path: Path, target):
    folder, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    folder.mkdir()
    if target == "a file":
        elsewhere.write_text("the user's own file")
    (folder / files.LOCK_NAME).symlink_to(elsewhere)
    for wait in (False, True):
        with pytest.raises(InputError, match=r"--out '.*out': its lock file .* is a symbolic link; refusing to follow"):
            take_lock(folder, wait)
    assert (elsewhere.read_text() == "the user's own file") if target == "a file" else not elsewhere.exists()
    assert (folder / files.LOCK_NAME).is_symlink()  # the user's link is theirs to remove


def test_a_folder_with_the_locks_name_is_refused(tmp_path: Path):
    (tmp_path / files.LOCK_NAME).mkdir()
    with pytest.raises(InputError, match=r"\.seq2seq-attention\.lock is a folder where the lock file should be"):
        take_lock(tmp_path)


@pytest.mark.parametrize(
    ("where", "message"),
    [("a-file", r"'.*a-file' is a file, expected a folder"), ("a-file/out", r"'.*out' lies under a file")],
)
def test_a_folder_that_cannot_be_made_is_refused(tmp_path: Path, where, message):
    (tmp_path / "a-file").write_text("kept")
    with pytest.raises(InputError, match=message):
        take_lock(tmp_path / where)
    assert (tmp_path / "a-file").read_text() == "kept"


def test_a_read_only_folder_is_refused(tmp_path: Path, monkeypatch):
    from support import enforce_owner_permissions

    folder = tmp_path / "out"
    folder.mkdir(mode=0o555)
    enforce_owner_permissions(monkeypatch)
    with pytest.raises(InputError, match=r"--out '.*out' cannot be written \(.*: permission denied\)"):
        take_lock(folder)
    with pytest.raises(InputError, match=r"--out '.*new' cannot be created: Permission denied"):
        take_lock(folder / "new")
    monkeypatch.undo()
    assert list(folder.iterdir()) == []


def stale_lock_of_another_user(folder: Path) -> Path:
    """A lock file a killed run of another user left: not held, and not writable by this user."""
    lock = folder / files.LOCK_NAME
    lock.write_text("pid 4242, seq2seq-attention train\n")
    lock.chmod(0o444)
    return lock


def test_a_stale_lock_of_another_user_is_replaced_where_the_folder_allows(tmp_path: Path, monkeypatch):
    from support import enforce_owner_permissions

    stale_lock_of_another_user(tmp_path)
    enforce_owner_permissions(monkeypatch)
    take_lock(tmp_path)
    assert not (tmp_path / files.LOCK_NAME).exists()


def test_a_stale_lock_of_another_user_that_cannot_be_removed_is_one_clear_error(tmp_path: Path, monkeypatch):
    from support import enforce_owner_permissions

    folder = tmp_path / "shared"
    folder.mkdir()
    lock = stale_lock_of_another_user(folder)
    folder.chmod(0o555)  # the shared folder lets this user remove none of another's files
    enforce_owner_permissions(monkeypatch)
    try:
        with pytest.raises(
            InputError, match=r"the stale lock file .* \(pid 4242, seq2seq-attention train, no longer running\) can be "
        ):
            take_lock(folder)
    finally:
        monkeypatch.undo()
        folder.chmod(0o755)
    assert lock.read_text() == "pid 4242, seq2seq-attention train\n"


def test_a_lock_of_another_user_held_by_a_live_process_is_refused_by_name(tmp_path: Path, monkeypatch):
    import subprocess
    import sys

    from support import enforce_owner_permissions

    command = [sys.executable, "-c", HOLD, str(tmp_path)]
    holder = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == b"HELD"
        (tmp_path / files.LOCK_NAME).chmod(0o444)
        enforce_owner_permissions(monkeypatch)
        with pytest.raises(InputError, match=rf"is being written by another process \(pid {holder.pid}"):
            take_lock(tmp_path)
        monkeypatch.undo()
        assert (tmp_path / files.LOCK_NAME).read_text().startswith(f"pid {holder.pid}")
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize("script", ["compare_attention", "train_sentiment"])
@pytest.mark.parametrize("out", ["a file", "a read-only folder"])
def test_a_report_script_refuses_an_out_it_cannot_write_in_one_line(tmp_path: Path, capsys, monkeypatch, script, out):
    import sys

    from support import enforce_owner_permissions, load_script

    module = load_script(script)
    folder = tmp_path / "results"
    if out == "a file":
        folder.write_text("kept")
    else:
        folder.mkdir(mode=0o555)
        enforce_owner_permissions(monkeypatch)
    monkeypatch.setattr(sys, "argv", [f"{script}.py", "--out", str(folder), "--tables-only"])
    status = module.main(*([] if script == "train_sentiment" else [sys.argv[1:]]))
    monkeypatch.undo()
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and err.startswith(f"{script}.py: error: --out '{folder}'"), err
    assert folder.read_text() == "kept" if out == "a file" else list(folder.iterdir()) == []
