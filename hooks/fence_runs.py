"""The record of the spec fences' last runs: `docs/fence-runs.json`.

Shared by the test run, which writes the record on request (`python -m pytest --record-fences`,
see the root `conftest.py`), and by the site build, which only reads it (`hooks/fence_record.py`).

A fence is keyed by a hash of its own code and of every fence it continues (a ``{.python
continuation}`` chain runs as one program), not by its line: prose moved around a fence keeps its
record, and a changed fence loses the record of itself and of every fence that continues it.

The record holds, per page in `docs/` and per fence in page order, one run per device tag: `cpu` and
`cuda` for a fence that calls `pick_device()` (one copy per device), `no-device` for a fence that
does not (it runs once, on the CPU). A run is its outcome, what the fence printed (capped), its
duration, the PyTorch version, the device's name and the date.
"""

import contextlib
import functools
import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from pytest_markdown_docs.plugin import FenceSyntax, extract_fence_tests, pytest_markdown_docs_markdown_it

RECORD_NAME = "fence-runs.json"
"""The record's file name, in the docs folder (the built site carries a copy)."""
RECORD_COMMAND = "python -m pytest --record-fences"
"""The command that re-records every fence (with the rest of the suite; `docs` alone records only the fences)."""
DEVICES = ("cpu", "cuda")
NO_DEVICE = "no-device"
OUTPUT_LINES = 30
OUTPUT_CHARS = 3000
"""What a fence printed is kept up to this many lines and characters."""


@dataclass(frozen=True)
class Fence:
    """A spec fence: a python fence that pytest runs (not ``notest``).

    Attributes:
        line: the 1-based line of the opening fence (pytest-markdown-docs' `start_line`).
        end: the 1-based line of the closing fence.
        code: the fence's own code.
        key: a hash of the code and of every fence it continues.
        picks_device: whether the chain calls `pick_device()` (then it runs once per device).
    """

    line: int
    end: int
    code: str
    key: str
    picks_device: bool

    @property
    def cpu_tag(self) -> str:
        """The tag of its run on the CPU."""
        return "cpu" if self.picks_device else NO_DEVICE


def picks_device(source: str) -> bool:
    """Whether a fence (with the fences it continues, `source`) picks a device: it calls `pick_device()`.

    The one place that decides it: such a fence runs once per device (`[cpu]`, `[cuda]`), any other once."""
    return "pick_device(" in source


def key_of(chain: list[str]) -> str:
    """The key of a fence whose code, with the fences it continues, is `chain` (first fence first)."""
    return hashlib.sha256(json.dumps(chain, ensure_ascii=False, allow_nan=False).encode()).hexdigest()[:16]


PARSER = pytest_markdown_docs_markdown_it()
"""pytest-markdown-docs' own parser: what its `pytest_markdown_docs_markdown_it` hook gives (no conftest changes it)."""


@functools.lru_cache(maxsize=256)
def spec_fences(markdown: str) -> tuple[Fence, ...]:
    """The spec fences of a page, in page order: exactly the fences pytest-markdown-docs collects (its own
    `extract_fence_tests`, with the superfences syntax of pyproject's `addopts`), each with its key.

    The plugin gives a continuation fence's source as the fences it continues, blank lines up to its own first
    line, then its own code; a fence whose source has code before its own starts a chain's next link.
    """
    fences = []
    chain: list[str] = []
    tests = extract_fence_tests(PARSER, markdown, 0, Path("page.md"), fence_syntax=FenceSyntax.superfences)
    for test in tests:
        own = test.source.split("\n", test.start_line)[-1]
        continues = test.source[: len(test.source) - len(own)].strip()
        chain = [*chain, own] if continues else [own]
        fences.append(
            Fence(
                line=test.start_line,
                end=test.start_line + own.count("\n") + 1,
                code=own,
                key=key_of(chain),
                picks_device=picks_device(test.source),
            )
        )
    return tuple(fences)


def pages_with_fences(docs: Path) -> dict[str, tuple[Fence, ...]]:
    """Every page of the docs folder that has spec fences (posix path relative to `docs`), sorted."""
    pages = {}
    for page in sorted(docs.rglob("*.md")):
        fences = spec_fences(page.read_text(encoding="utf-8"))
        if fences:
            pages[page.relative_to(docs).as_posix()] = fences
    return pages


def cap_output(text: str) -> str:
    """What a fence printed, cut to `OUTPUT_LINES` lines and `OUTPUT_CHARS` characters (with a note)."""
    text = text.rstrip()
    lines = text.splitlines()
    kept = "\n".join(lines[:OUTPUT_LINES])[:OUTPUT_CHARS]
    if kept == text:
        return text
    return f"{kept}\n… (출력 {len(lines)}줄, {len(text)}자 중 앞부분만 기록)"


class RecordError(ValueError):
    """The record cannot be read: one line naming the file, the page, the fence, what was expected and how to
    re-record (the site build stops with it, `hooks/fence_record.py`)."""


RUN_FIELDS = {"outcome": str, "output": str, "seconds": (int, float), "torch": str, "device": str, "date": str}
"""What every recorded run holds, and its JSON type (`error` is optional: a string, for a failed run)."""
OUTCOMES = ("passed", "failed", "skipped")


def load(path: Path) -> dict[str, dict[str, dict]]:
    """The runs of the record at `path`, by fence key: ``{key: {tag: run}}`` (empty when there is none).

    The one reader of the record (the site hooks, the notebooks and the test run all read it here);
    it checks the whole record against its shape first, so that a malformed file gives one
    `RecordError` line, never a `KeyError` halfway through a build.

    Raises:
        RecordError: the file is not JSON (truncated, a merge conflict left in it) or not the record's
            shape; the message names the file, the page, the fence and what was expected.
    """
    if not path.is_file():
        return {}
    record = read_json(path, lambda problem: RecordError(_message(path, None, None, problem)))
    _check_record(path, record)
    return {fence["key"]: fence["runs"] for fence in (f for fs in record["pages"].values() for f in fs)}


CONFLICT_MARKERS = ("<<<<<<< ", "=======", ">>>>>>> ", "||||||| ")


def read_json(path: Path, error: Callable[[str], Exception]) -> object:
    """The JSON document in the committed file `path` (the record, the stepper's trace); a file that cannot be read,
    holds a merge-conflict marker or is not complete JSON raises `error(problem)`, ``problem`` saying which."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as problem:
        raise error(f"cannot be read ({problem})") from None
    conflict = next((n for n, line in enumerate(text.splitlines(), 1) if line.startswith(CONFLICT_MARKERS)), None)
    if conflict is not None:
        raise error(f"holds a merge-conflict marker at line {conflict}") from None
    try:
        return json.loads(text)
    except ValueError as problem:  # json.JSONDecodeError: a truncated or hand-broken file
        raise error(f"is not complete JSON ({problem})") from None


def _message(path: Path, page: str | None, fence: str | None, problem: str) -> str:
    where = "".join(f", {part}" for part in (page and f"page {page!r}", fence) if part)
    return (
        f"{path}{where}: {problem}. The record is written by `{RECORD_COMMAND}`: restore the committed one "
        f"(git checkout -- {path}) or delete it, then re-record with `{RECORD_COMMAND}`"
    )


def _fence_name(path: Path, page: str, number: int, key: object) -> str:
    """'fence 3 (line 120)': the entry's place in the page's list, and its line when the page still holds that code."""
    lines = {}
    if not PurePosixPath(page).is_absolute() and ".." not in PurePosixPath(page).parts:  # a page in docs/
        with contextlib.suppress(OSError, UnicodeDecodeError, ValueError):
            lines = {fence.key: fence.line for fence in spec_fences((path.parent / page).read_text(encoding="utf-8"))}
    where = f"line {lines[key]}" if isinstance(key, str) and key in lines else f"key {key!r}"
    return f"fence {number} ({where})"


def _check_record(path: Path, record: object) -> None:
    """Raise `RecordError` at the first place `record` differs from the record's shape."""

    def fail(page: str | None, fence: tuple[int, object] | None, problem: str) -> None:
        name = None if fence is None else _fence_name(path, page, *fence)  # only now: it reads the page
        raise RecordError(_message(path, page, name, problem))

    if not isinstance(record, dict) or not isinstance(record.get("pages"), dict):
        got = type(record.get("pages")).__name__ if isinstance(record, dict) else type(record).__name__
        fail(None, None, f'expected an object with "pages": {{page: [fences]}}, got {got}')
    for page, fences in record["pages"].items():
        if not isinstance(fences, list):
            fail(page, None, f"expected a list of fences, got {type(fences).__name__}")
        for number, entry in enumerate(fences, start=1):
            key = entry.get("key") if isinstance(entry, dict) else None
            name = (number, key)
            if not isinstance(entry, dict) or not isinstance(key, str) or not isinstance(entry.get("runs"), dict):
                fail(page, name, 'expected {"key": "<hash>", "runs": {tag: run}}, got ' + short(entry))
            for tag, run in entry["runs"].items():
                if tag not in (*DEVICES, NO_DEVICE):
                    fail(page, name, f"run tag {tag!r} is not one of {', '.join((*DEVICES, NO_DEVICE))}")
                if not isinstance(run, dict):
                    fail(page, name, f"the {tag} run must be an object, got {short(run)}")
                for field, kind in RUN_FIELDS.items():
                    value = run.get(field)
                    if field not in run or isinstance(value, bool) or not isinstance(value, kind):
                        expected = "a number" if field == "seconds" else "a string"
                        if field not in run:
                            fail(page, name, f'the {tag} run has no "{field}" (expected {expected})')
                        fail(page, name, f'the {tag} run\'s "{field}" must be {expected}, got {short(value)}')
                if run["outcome"] not in OUTCOMES:
                    fail(
                        page,
                        name,
                        f'the {tag} run\'s "outcome" must be one of {", ".join(OUTCOMES)}, got {run["outcome"]!r}',
                    )
                if "error" in run and not isinstance(run["error"], str):
                    fail(page, name, f'the {tag} run\'s "error" must be a string, got {short(run["error"])}')


def short(value: object) -> str:
    """A value as the message shows it: its JSON (or repr), cut to 60 characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def updated(docs: Path, previous: dict[str, dict[str, dict]], new: dict[str, dict[str, dict]]) -> dict:
    """The record for the pages now in `docs`: each fence's runs from `new`, else kept from `previous`.

    A device that did not run a fence this time (a skipped `cuda`, a page not collected) keeps that
    fence's previous run, as long as the fence is unchanged (same key). Fences no longer on a page drop out.
    """
    pages = {}
    for page, fences in pages_with_fences(docs).items():
        entries = []
        for fence in fences:
            runs = {**previous.get(fence.key, {}), **new.get(fence.key, {})}
            if runs:
                entries.append({"key": fence.key, "runs": {tag: runs[tag] for tag in sorted(runs)}})
        if entries:
            pages[page] = entries
    return {
        "about": f"The last recorded run of every spec fence in docs/, written by `{RECORD_COMMAND}`; "
        "read by hooks/fence_record.py when the site is built.",
        "pages": pages,
    }


def dumps(record: dict) -> str:
    """The record as JSON with one fence per line (small diffs when a few fences change)."""

    def one(value: object) -> str:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)

    pages = ",\n".join(
        f"  {one(page)}: [\n" + ",\n".join(f"   {one(fence)}" for fence in fences) + "\n  ]"
        for page, fences in record["pages"].items()
    )
    return f'{{\n "about": {one(record["about"])},\n "pages": {{\n{pages}\n }}\n}}\n'


def write(path: Path, record: dict) -> None:
    """Write the record atomically (a temporary file in the same folder, then a rename)."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(dumps(record))
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def stale(docs: Path, runs: dict[str, dict[str, dict]]) -> list[str]:
    """Every spec fence in `docs` whose CPU run is missing from `runs` or did not pass, as ``page:line: why``."""
    problems = []
    for page, fences in pages_with_fences(docs).items():
        for fence in fences:
            run = runs.get(fence.key, {}).get(fence.cpu_tag)
            if run is None:
                problems.append(f"{page}:{fence.line}: no {fence.cpu_tag} run recorded for this code")
            elif run["outcome"] != "passed":
                problems.append(f"{page}:{fence.line}: its last {fence.cpu_tag} run {run['outcome']}")
    return problems
