"""The record of the spec fences' last runs, `docs/fence-runs.json`: written by `python -m pytest --record-fences`
(the root conftest.py), read by the site build (`hooks/fence_record.py`). A fence is keyed by a hash of its own code
and of every fence it continues (a ``{.python continuation}`` chain runs as one program), not by its line. Per page
and fence, in page order, it holds one run per device tag (`cpu` and `cuda` for a fence that calls `pick_device()`,
else `no-device`): outcome, what it printed (capped), duration, PyTorch version, device name and date.
"""

import functools
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from json_files import FileError, read
from pytest_markdown_docs.plugin import FenceSyntax, extract_fence_tests, pytest_markdown_docs_markdown_it

RECORD_NAME = "fence-runs.json"  # in the docs folder (the built site carries a copy)
RECORD_COMMAND = "python -m pytest --record-fences"  # every fence, with the suite (`docs` alone: only the fences)
DEVICES = ("cpu", "cuda")
NO_DEVICE = "no-device"
OUTPUT_LINES, OUTPUT_CHARS = 30, 3000  # what a fence printed is kept up to this many lines and characters


@dataclass(frozen=True)
class Fence:
    """A spec fence (a python fence pytest runs): its opening and closing lines (1-based; `line` is
    pytest-markdown-docs' `start_line`), its own `code`, the `key` of it and the fences it continues, and whether the
    chain `picks_device` (then it runs once per device)."""

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
    """Whether a fence (with the fences it continues, `source`) calls `pick_device()`; the one place that decides it:
    such a fence runs once per device (`[cpu]`, `[cuda]`), any other once."""
    return "pick_device(" in source


def key_of(chain: list[str]) -> str:
    """The key of a fence whose code, with the fences it continues, is `chain` (first fence first)."""
    return hashlib.sha256(json.dumps(chain, ensure_ascii=False, allow_nan=False).encode()).hexdigest()[:16]


PARSER = pytest_markdown_docs_markdown_it()
"""pytest-markdown-docs' own parser: what its `pytest_markdown_docs_markdown_it` hook gives (no conftest changes it)."""


@functools.lru_cache(maxsize=256)
def spec_fences(markdown: str) -> tuple[Fence, ...]:
    """The spec fences of a page, in page order: exactly those pytest-markdown-docs collects (its own
    `extract_fence_tests`, with the superfences syntax of pyproject's `addopts`), each with its key. The plugin gives
    a continuation fence's source as the fences it continues, blank lines up to its own first line, then its own
    code; a fence whose source has code before its own is a chain's next link."""
    fences, chain = [], []
    for test in extract_fence_tests(PARSER, markdown, 0, Path("page.md"), fence_syntax=FenceSyntax.superfences):
        own = test.source.split("\n", test.start_line)[-1]
        chain = [*chain, own] if test.source[: len(test.source) - len(own)].strip() else [own]
        end = test.start_line + own.count("\n") + 1
        fences.append(Fence(test.start_line, end, own, key_of(chain), picks_device(test.source)))
    return tuple(fences)


def pages_with_fences(docs: Path) -> dict[str, tuple[Fence, ...]]:
    """Every page of the docs folder that has spec fences (posix path relative to `docs`), sorted."""
    pages = {page: spec_fences(page.read_text(encoding="utf-8")) for page in sorted(docs.rglob("*.md"))}
    return {page.relative_to(docs).as_posix(): fences for page, fences in pages.items() if fences}


def cap_output(text: str) -> str:
    """What a fence printed, cut to `OUTPUT_LINES` lines and `OUTPUT_CHARS` characters (with a note)."""
    text = text.rstrip()
    lines = text.splitlines()
    kept = "\n".join(lines[:OUTPUT_LINES])[:OUTPUT_CHARS]
    return text if kept == text else f"{kept}\n… (출력 {len(lines)}줄, {len(text)}자 중 앞부분만 기록)"


RecordError = FileError  # the record cannot be read: one line (file, entry, what was expected, how to re-record)


def load(path: Path) -> dict[str, dict[str, dict]]:
    """The runs of the record at `path`, by fence key: ``{key: {tag: run}}`` (empty when there is none). The one
    reader of the record (site, notebooks, test run); `json_files.read` checks it against its schema first, so that a
    malformed file gives one `RecordError` line, never a `KeyError` halfway through a build."""
    if not path.exists():
        return {}
    record = read(path, "fence-runs", RECORD_COMMAND)  # schemas/fence-runs.schema.json
    return {fence["key"]: fence["runs"] for fences in record["pages"].values() for fence in fences}


def updated(docs: Path, previous: dict[str, dict[str, dict]], new: dict[str, dict[str, dict]]) -> dict:
    """The record for the pages now in `docs`: each fence's runs from `new`, else kept from `previous` (a device
    that did not run an unchanged fence this time, a skipped `cuda`, keeps its run). Fences no longer on a page drop."""
    pages = {}
    for page, fences in pages_with_fences(docs).items():
        runs = [(fence.key, {**previous.get(fence.key, {}), **new.get(fence.key, {})}) for fence in fences]
        if entries := [{"key": key, "runs": dict(sorted(by_tag.items()))} for key, by_tag in runs if by_tag]:
            pages[page] = entries
    return {
        "about": f"The last recorded run of every spec fence in docs/, written by `{RECORD_COMMAND}`; "
        "read by hooks/fence_record.py when the site is built.",
        "pages": pages,
    }


def dumps(record: dict) -> str:
    """The record as JSON with one fence per line (small diffs when a few fences change)."""
    one = functools.partial(json.dumps, ensure_ascii=False, allow_nan=False)
    pages = ",\n".join(
        f"  {one(page)}: [\n" + ",\n".join(f"   {one(fence)}" for fence in fences) + "\n  ]"
        for page, fences in record["pages"].items()
    )
    return f'{{\n "about": {one(record["about"])},\n "pages": {{\n{pages}\n }}\n}}\n'


def write(path: Path, record: dict) -> None:
    """Write the record atomically: a temporary file in the same folder, then a rename."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(dumps(record), encoding="utf-8")
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


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
