"""Writing files so that a failure leaves the disk as it was, and refusing to replace what should stay.

Every command that writes (a checkpoint, an ONNX export, a figure, a JSON record) goes through
`staged_writes`: all files are written to a hidden folder next to their destinations, flushed
to disk, and renamed into place only when every one of them was written. A file being replaced
is moved aside first, so that a failure at any rename puts the old files back.

`check_destination` runs before any work: it names what a path already holds (`artifact_kind`)
and refuses to replace an artifact of another kind, or an existing one without ``overwrite``.

A folder that holds several files written as one (a checkpoint: weights and the JSON that names
them; an export) is written under `folder_lock`: one process at a time. A command that writes a
folder for long (`train`) takes the lock at its start and refuses a folder another live process
holds, naming it; a single save waits for the lock, so two writers leave the last complete write.
"""

import contextlib
import json
import os
import shutil
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from .errors import InputError, echo

try:
    import fcntl
except ImportError:  # Windows: a lock on the file's first byte instead of flock
    fcntl = None
    import msvcrt

LOCK_NAME = ".seq2seq-attention.lock"
"""The file a folder's writer holds locked (`folder_lock`), with its process id; removed when it lets go."""

LOCK_WAIT = 120.0
"""The seconds a waiting writer (`folder_lock` with ``wait=True``) waits for another one before giving up."""

STAGING_PREFIX = ".staging-"
"""The hidden folder a write is staged in, next to its destination; removed whatever happens."""

EXPORT_FILES = ("encoder.onnx", "step.onnx", "vocabularies.json")
"""The files `translation.export.export_onnx` writes."""

EXPORT_NAMES = (*EXPORT_FILES, "sentences.json")
"""Every file of an export folder: the graphs, the vocabularies and the sentences (`export-onnx`)."""

WEIGHTS_NAMES = ("weights.bin", "vocabularies.json", "sentences.json")
"""Every file of a weights export, what the live page reads (`export-weights`)."""


NAME_MAX = 255
"""The longest file name, in bytes, when the file system does not say (`os.pathconf`); most take 255."""

PATH_MAX = 4096
"""The longest path, in bytes, when the system does not say."""

_SET_ASIDE = ".old-"  # the prefix a replaced file is renamed to while the new one lands (`_commit`)


def _system_limit(path: Path, name: str, fallback: int) -> int:
    """The file system's limit `name` (``PC_NAME_MAX``, ``PC_PATH_MAX``) where `path` would be."""
    for folder in Path(os.path.abspath(path)).parents:
        with contextlib.suppress(OSError, ValueError, AttributeError):  # AttributeError: no os.pathconf (Windows)
            if folder.is_dir():
                return os.pathconf(folder, name)
    return fallback


def check_path_fits(path: Path, what: str, *, file: bool = False) -> None:
    """Refuse, before any work, a path the file system cannot hold: a name or a whole path past its limits.

    With `file`, `path` is a file that `staged_writes` writes: its name must leave room for the
    prefix a replaced file is set aside under, and its path for the staging folder beside it.

    Raises:
        InputError: naming the option, the over-long name, its length and the limit.
    """
    path = Path(path)
    name_max = _system_limit(path, "PC_NAME_MAX", NAME_MAX)
    *folders, last = path.parts or ("",)
    for part, spare in [*((folder, 0) for folder in folders), (last, len(_SET_ASIDE) if file else 0)]:
        size = len(os.fsencode(part))
        if size + spare > name_max:
            raise InputError(
                f"{what} {echo(str(path), 80)}: the name {echo(part, 40)} is {size} bytes long; "
                f"names here hold at most {name_max - spare} bytes"
            )
    spare = len(STAGING_PREFIX) + 10 + len(_SET_ASIDE) if file else 0  # .staging-<8 random characters>/.old-<name>
    size = len(os.fsencode(os.path.abspath(path)))
    path_max = _system_limit(path, "PC_PATH_MAX", PATH_MAX)
    if size + spare >= path_max:
        raise InputError(
            f"{what} {echo(str(path), 80)}: the path is {size} bytes long; "
            f"paths here hold fewer than {path_max - spare}"
        )


def artifact_kind(path: Path) -> str | None:
    """What `path` holds: ``"a <task> checkpoint"``, ``"a weights export"``, ``"an ONNX export"``, ``"a file"``,
    ``"a directory"`` or None.

    None means nothing is there; ``"a directory"`` is a folder that holds neither a checkpoint
    nor an export (a new checkpoint or export may be written into it).
    """
    if not path.exists() and not path.is_symlink():
        return None
    if not path.is_dir():
        return "a file"
    document = path / "checkpoint.json"
    if document.exists():
        try:
            task = json.loads(document.read_text(encoding="utf-8"))["config"]["task"]
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            return "a checkpoint"
        return f"a {task} checkpoint" if isinstance(task, str) and task.isidentifier() else "a checkpoint"
    if (path / WEIGHTS_NAMES[0]).exists():
        return "a weights export"
    if any((path / name).exists() for name in EXPORT_NAMES):
        return "an ONNX export"
    return "a directory"


def check_destination(path: Path, kind: str, *, overwrite: bool, what: str) -> None:
    """Refuse, before any work, a destination holding an artifact of another kind, or one of `kind` without `overwrite`.

    Args:
        path: where the command will write (a directory for checkpoints and exports, a file for figures).
        kind: what it will write, as `artifact_kind` names it (``"a translation checkpoint"``,
            ``"an ONNX export"``, ``"a file"``).
        overwrite: the user asked to replace an existing artifact of the same kind.
        what: the option's name for the message, e.g. ``"--out"``.

    Raises:
        InputError: naming what the path holds and what was expected, or a path too long for the file system.
    """
    check_path_fits(path, what, file=kind == "a file")
    found = artifact_kind(path)
    if found in (None, "a directory") and kind != "a file":
        _check_export_names(path, kind, what)
        return
    if found is None:
        return
    if found == "a checkpoint" and kind.endswith(" checkpoint"):
        found = kind  # an unreadable checkpoint: replaceable like one of the same task
    if found != kind:
        raise InputError(f"{what} {str(path)!r} holds {found}, not {kind}; refusing to replace it (choose another)")
    if not overwrite:
        raise InputError(f"{what} {str(path)!r} already holds {kind}; pass --overwrite to replace it")
    _check_export_names(path, kind, what)


def _check_export_names(path: Path, kind: str, what: str) -> None:
    for name in {"an ONNX export": EXPORT_NAMES, "a weights export": WEIGHTS_NAMES}.get(kind, ()):
        target = path / name
        if target.exists() and not target.is_file():
            raise InputError(f"{what} {str(path)!r}: {name} is a directory where the export's file should go")


def _created_parents(directory: Path) -> list[Path]:
    """The folders `directory.mkdir(parents=True)` would create, deepest first."""
    missing = []
    for folder in [directory, *directory.parents]:
        if folder.exists():
            break
        missing.append(folder)
    return missing


def _sync(path: Path) -> None:
    handle = os.open(path, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


@contextlib.contextmanager
def staged_writes(*destinations: Path) -> Iterator[list[Path]]:
    """Write several files all at once or not at all.

    Yields one path per destination, with the same file name, inside a hidden folder next to it;
    the caller writes each file there. When the block ends without an error, every staged file
    is flushed to disk (in the given order) and renamed over its destination (in the given order,
    so the last one, e.g. a checkpoint's JSON, lands last). Any failure, in the block, a flush or
    a rename, removes what was staged and puts back every file already replaced: the disk is left
    as it was, folders created for the write included, and no staging folder stays behind (one
    in a folder made read-only meanwhile is removed by lending the folder its owner's write
    permission for that one removal).

    Raises:
        InputError: a destination is a directory or a path too long for the file system, or one destination is
            named twice (checked before anything on disk is touched).
    """
    destinations = tuple(Path(d) for d in destinations)
    _check_destinations(destinations)
    created: list[Path] = []
    stages: dict[Path, Path] = {}
    try:
        for parent in dict.fromkeys(d.parent for d in destinations):
            created.extend(_created_parents(parent))
            parent.mkdir(parents=True, exist_ok=True)
            stages[parent] = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=parent))
        staged = [stages[d.parent] / d.name for d in destinations]
        yield staged
        for path in staged:
            if not path.is_file():
                raise RuntimeError(f"{path.name} was not written")
            _sync(path)
        _commit(destinations, staged)
    except BaseException:
        _remove_stages(stages.values())
        for folder in created:  # deepest first; only the folders this write made, and only if empty
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    _remove_stages(stages.values())


def _check_destinations(destinations: tuple[Path, ...]) -> None:
    """Refuse a path too long, a directory, and a destination named twice (as written or once resolved), before any
    write."""
    seen: dict[str, Path] = {}
    for destination in destinations:
        check_path_fits(destination, "the file", file=True)
        if destination.is_dir():
            raise InputError(f"{str(destination)!r} is a directory where a file should be written")
        key = os.path.normcase(os.path.realpath(destination))
        if key in seen:
            raise InputError(
                f"{str(destination)!r} is named twice among the files to write (also as {str(seen[key])!r}): "
                "each destination must be a different file"
            )
        seen[key] = destination


def _remove_stages(stages: Iterable[Path]) -> None:
    """Remove each staging folder; where its parent lost its write permission, lend it back for the removal."""
    for stage in stages:
        _remove_lending_permission(stage, lambda path: shutil.rmtree(path, ignore_errors=True))


def _remove_lending_permission(path: Path, remove: Callable[[Path], None]) -> None:
    """`remove(path)`; if `path` is still there (its folder lost its write permission meanwhile), lend the folder its
    owner's write permission for one more try, and put the folder's mode back. Never raises."""
    with contextlib.suppress(OSError):
        remove(path)
    if not (path.exists() or path.is_symlink()):
        return
    parent = path.parent
    with contextlib.suppress(OSError):
        mode = parent.stat().st_mode
        os.chmod(parent, mode | stat.S_IWUSR | stat.S_IXUSR)
        try:
            remove(path)
        finally:
            os.chmod(parent, stat.S_IMODE(mode))


def json_text(document: object, *, indent: int | None = 1) -> str:
    """`document` as strict JSON text (UTF-8 kept, a final newline): NaN and Infinity are refused, not written.

    Every JSON file the package and its scripts write goes through this (or `json.dumps` with
    ``allow_nan=False``), so any strict parser reads it. A missing number is written as null.

    Raises:
        ValueError: `document` holds NaN or an infinity (a bug to fix where the number was made).
    """
    return json.dumps(document, indent=indent, ensure_ascii=False, allow_nan=False) + "\n"


def write_json(path: Path, document: object, *, indent: int | None = 1) -> None:
    """Write `document` to `path` as strict JSON (`json_text`), atomically (`staged_writes`)."""
    text = json_text(document, indent=indent)
    with staged_writes(Path(path)) as (staged,):
        staged.write_text(text, encoding="utf-8")


def _commit(destinations: tuple[Path, ...], staged: list[Path]) -> None:
    """Rename each staged file over its destination; on a failure, undo the renames done so far."""
    done: list[tuple[Path, Path, Path | None]] = []
    try:
        for destination, path in zip(destinations, staged, strict=True):
            old = None
            if destination.exists() or destination.is_symlink():
                old = path.with_name(f".old-{path.name}")
                os.replace(destination, old)
            done.append((destination, path, old))
            os.replace(path, destination)
    except BaseException:
        for destination, path, old in reversed(done):
            if not path.exists() and (destination.exists() or destination.is_symlink()):
                os.replace(destination, path)  # the new file goes back to the stage, which is removed
            if old is not None:
                os.replace(old, destination)
        raise


_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)  # Windows has none: `_open_lock` looks before it opens
_HELD: dict[str, tuple[threading.RLock, list]] = {}  # folder -> (the lock of this process's threads, [fd, depth])
_HELD_GUARD = threading.Lock()


def _holder(lock_file: Path) -> str:
    """Who holds `lock_file`, as its holder wrote it (``pid 1234, seq2seq-attention train``)."""
    try:
        handle = os.open(lock_file, os.O_RDONLY | _NO_FOLLOW)
        with os.fdopen(handle, "rb") as opened:
            text = opened.read(400).decode("utf-8", errors="replace").strip()
    except OSError:
        text = ""
    return text[:200] or "another process"


@contextlib.contextmanager
def folder_lock(directory: Path, what: str, *, wait: bool) -> Iterator[Path]:
    """Hold the write lock of `directory` (created if missing) for the block: one writer of a folder at a time.

    The lock is a file in the folder (`LOCK_NAME`) locked with ``flock`` and holding the writer's
    process id; the system releases it when the process dies, so a killed writer leaves no stale
    lock. A process may take the lock it holds again (a `train` that saves each epoch). The lock
    file is never opened through a symbolic link, and is removed when the block ends, failed or not.
    A stale one (no live holder) that this user cannot write is replaced when the folder allows it.

    Args:
        directory: the folder to write.
        what: the folder's name for the message, e.g. ``"--checkpoint"``.
        wait: wait up to `LOCK_WAIT` seconds for another writer (a single save), or refuse at once
            (a command that writes the folder for long).

    Raises:
        InputError: another live process holds the lock (naming its process id), or still held it
            after `LOCK_WAIT` seconds; the folder is a file or cannot be created or written; the lock's
            name holds a symbolic link, a folder, or a stale lock this user can neither write nor remove.
    """
    directory = Path(directory)
    check_path_fits(directory, what)
    created = _created_parents(directory)
    _make_folder(directory, what)
    key = os.path.realpath(directory)
    with _HELD_GUARD:
        local, held = _HELD.setdefault(key, (threading.RLock(), [None, 0]))
    try:
        with local:
            if held[1] == 0:
                held[0] = _acquire(directory / LOCK_NAME, what, directory, wait)
            held[1] += 1
            try:
                yield directory
            finally:
                held[1] -= 1
                if held[1] == 0:
                    _release(directory / LOCK_NAME, held[0])
                    held[0] = None
    finally:
        for folder in created:  # a failed write leaves no folder it made (deepest first, only if empty)
            with contextlib.suppress(OSError):
                folder.rmdir()


def _make_folder(directory: Path, what: str) -> None:
    """`directory` and its missing parents, or one `InputError` that says why not."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise InputError(f"{what} {str(directory)!r} is a file, expected a folder") from None
    except NotADirectoryError:
        raise InputError(f"{what} {str(directory)!r} lies under a file, expected a folder") from None
    except OSError as error:
        raise InputError(f"{what} {str(directory)!r} cannot be created: {error.strerror}") from None


def _open_lock(lock_file: Path, what: str, directory: Path) -> tuple[int, bool]:
    """The lock file opened (created if missing) without following a symbolic link, and whether it is writable
    (False: a lock file this user may only read, e.g. another user's, opened read-only to learn if it is held)."""
    where = f"{what} {str(directory)!r}"
    linked = InputError(f"{where}: its lock file {LOCK_NAME} is a symbolic link; refusing to follow it (remove it)")
    if lock_file.is_symlink():
        raise linked
    try:
        return os.open(lock_file, os.O_RDWR | os.O_CREAT | _NO_FOLLOW, 0o644), True
    except OSError as error:
        if lock_file.is_symlink():  # made between the look and the open: O_NOFOLLOW refused it
            raise linked from None
        if lock_file.is_dir():
            raise InputError(f"{where}: {LOCK_NAME} is a folder where the lock file should be; remove it") from None
        if isinstance(error, PermissionError) and lock_file.is_file():
            with contextlib.suppress(OSError):
                return os.open(lock_file, os.O_RDONLY | _NO_FOLLOW), False
        reason = "permission denied" if isinstance(error, PermissionError) else error.strerror
        raise InputError(f"{where} cannot be written ({LOCK_NAME}: {reason})") from None


def _acquire(lock_file: Path, what: str, directory: Path, wait: bool) -> int:
    deadline = time.monotonic() + LOCK_WAIT
    while True:
        handle, writable = _open_lock(lock_file, what, directory)
        if not _try_lock(handle):
            os.close(handle)
            if not wait or time.monotonic() > deadline:
                waited = "" if not wait else f" (waited {LOCK_WAIT:.0f} s)"
                raise InputError(
                    f"{what} {str(directory)!r} is being written by another process ({_holder(lock_file)}){waited}; "
                    "wait for it to end, or choose another folder"
                ) from None
            time.sleep(0.05)
            continue
        try:
            same = os.fstat(handle).st_ino == os.stat(lock_file, follow_symlinks=False).st_ino  # not one removed
        except FileNotFoundError:
            same = False
        if same and not writable:  # a stale lock of another user: no one holds it, so it may go if the folder allows
            _replace_stale(lock_file, handle, what, directory)
            continue
        if not same:
            os.close(handle)
            continue
        command = " ".join([Path(sys.argv[0]).name, *sys.argv[1:2]]) if sys.argv and sys.argv[0] else "python"
        os.lseek(handle, 0, os.SEEK_SET)
        os.ftruncate(handle, 0)
        os.write(handle, f"pid {os.getpid()}, {command}\n".encode())
        return handle


def _replace_stale(lock_file: Path, handle: int, what: str, directory: Path) -> None:
    """Remove a stale lock file this user cannot write (held locked by `handle`, which is closed), or refuse."""
    holder = _holder(lock_file)
    try:
        lock_file.unlink()
    except OSError as error:
        raise InputError(
            f"{what} {str(directory)!r}: the stale lock file {LOCK_NAME} ({holder}, no longer running) can be "
            f"neither written nor removed by this user ({error.strerror}); ask its owner to remove it"
        ) from None
    finally:
        os.close(handle)


def _try_lock(handle: int) -> bool:
    """Take the lock of an open lock file without waiting; False when another process holds it."""
    if fcntl is not None:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True
    try:
        msvcrt.locking(handle, msvcrt.LK_NBLCK, 1)
    except OSError:
        return False
    return True


def _release(lock_file: Path, handle: int) -> None:
    """Remove the lock file, then let go (a waiter that held the old file sees it gone and tries again); Windows
    cannot remove an open file, so there the lock goes first."""
    if fcntl is not None:
        try:  # a folder made read-only by now (a failed write) still loses its lock: no stale lock is left
            _remove_lending_permission(lock_file, lambda path: path.unlink(missing_ok=True))
        finally:
            os.close(handle)
        return
    os.close(handle)
    with contextlib.suppress(OSError):
        lock_file.unlink()


def run_locked(directory: Path, what: str, program: str, work: Callable[[], int | None]) -> int:
    """Run a script's `work` while holding the write lock of the folder it writes (`folder_lock`, refusing at once).

    For the report scripts under scripts/, which each write one results folder for a long time:
    a second run into a folder that a live run is writing stops before any work, with one line on
    standard error that names the other process. Returns `work`'s exit status (0 for None), or 2.
    """
    try:
        with folder_lock(directory, what, wait=False):
            return work() or 0
    except InputError as error:
        print(f"{program}: error: {error}", file=sys.stderr)
        return 2
