"""Every spec fence prints what it checks, and the record shows it under the fence (issue 27).

A fence asserts shapes and values; it also prints them (shapes as tuples, a few rounded values, a sum that
should be 1, the first line of an error it expects), so the box under it on the page shows the run. Read from
the committed record (`docs/fence-runs.json`, written by `python -m pytest --record-fences`):

* at least 90% of all spec fences have a non-empty CPU output, and no page of a numbered chapter has less
  than 75%;
* an output is short (at most 12 lines) and holds nothing that changes from run to run or machine to
  machine (a memory address, a temporary or home path, a date, a duration), so re-recording unchanged
  code leaves it unchanged.
"""

import re

import fence_runs
import pytest
from site_support import ROOT, chapters

DOCS = ROOT / "docs"
RECORD = DOCS / fence_runs.RECORD_NAME

MIN_SHARE = 0.90
"""Of all spec fences, at least this share prints something on CPU."""
MIN_PAGE_SHARE = 0.75
"""On each page of a numbered chapter, at least this share of its fences prints something on CPU."""
MAX_LINES = 12
"""A fence's output is at most this many lines."""
UNSTABLE = {
    "a memory address": re.compile(r"\b0x[0-9a-fA-F]{6,}\b"),
    "a temporary or home path": re.compile(r"(?:/tmp/|/home/|/Users/|/work/|[A-Z]:\\\\)"),
    "a date": re.compile(r"\b20\d\d-\d\d-\d\d\b"),
    "a duration": re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|µs|us|sec|seconds?)\b"),
}
"""What would change from one recording to the next."""


def cpu_outputs(pages: dict[str, tuple], runs: dict[str, dict[str, dict]]) -> dict[str, list[str | None]]:
    """Per page, each fence's recorded CPU output in page order (None: no CPU run recorded for its code)."""
    return {
        page: [runs.get(fence.key, {}).get(fence.cpu_tag, {}).get("output") for fence in fences]
        for page, fences in pages.items()
    }


def printed(output: str | None) -> bool:
    return bool(output and output.strip())


def coverage_problems(outputs: dict[str, list[str | None]], numbered: set[str]) -> list[str]:
    """What keeps the record from showing the fences' runs: the overall share, then each numbered page's."""
    problems = []
    total = sum(len(fences) for fences in outputs.values())
    shown = sum(printed(output) for fences in outputs.values() for output in fences)
    if total and shown / total < MIN_SHARE:
        share = f"{shown / total:.0%}"
        problems.append(f"only {shown} of {total} fences ({share}) print something, at least {MIN_SHARE:.0%}")
    for page in sorted(outputs):
        fences = outputs[page]
        count = sum(printed(output) for output in fences)
        if page in numbered and count / len(fences) < MIN_PAGE_SHARE:
            silent = [str(i + 1) for i, output in enumerate(fences) if not printed(output)]
            missing = sum(output is None for output in fences)
            note = f" ({missing} with no CPU run recorded: re-record)" if missing else ""
            problems.append(
                f"{page}: {count} of {len(fences)} fences print something, at least {MIN_PAGE_SHARE:.0%}; "
                f"silent fences (1-based, page order): {', '.join(silent)}{note}"
            )
    return problems


def output_problems(page: str, index: int, tag: str, output: str) -> list[str]:
    """What is wrong with one recorded output: too long, or something that changes between recordings."""
    where = f"{page} fence {index + 1} [{tag}]"
    lines = output.rstrip().splitlines()
    problems = [f"{where}: {len(lines)} lines, at most {MAX_LINES}"] if len(lines) > MAX_LINES else []
    for what, pattern in UNSTABLE.items():
        found = pattern.search(output)
        if found:
            problems.append(f"{where}: prints {what} ({found.group(0)!r}), which changes between recordings")
    return problems


@pytest.fixture(scope="module")
def record(request: pytest.FixtureRequest) -> dict[str, dict[str, dict]]:
    if request.config.getoption("--record-fences"):
        pytest.skip("--record-fences rewrites the record at the end of this run; these checks read the committed one")
    return fence_runs.load(RECORD)


def numbered_pages() -> set[str]:
    return {page for _, pages in chapters() for page in pages}


def test_nearly_every_fence_prints_what_it_checks(record):
    outputs = cpu_outputs(fence_runs.pages_with_fences(DOCS), record)
    problems = coverage_problems(outputs, numbered_pages())
    assert not problems, (
        "spec fences should print what they assert (shapes as tuples, rounded values, sums), "
        f"then be re-recorded with `{fence_runs.RECORD_COMMAND}`:\n" + "\n".join(problems)
    )


def test_recorded_outputs_are_short_and_stable(record):
    problems = []
    for page, fences in fence_runs.pages_with_fences(DOCS).items():
        for index, fence in enumerate(fences):
            for tag, run in sorted(record.get(fence.key, {}).items()):
                problems += output_problems(page, index, tag, run.get("output", ""))
    assert not problems, "\n".join(problems)


def test_the_numbered_chapters_have_pages_with_fences():
    """The per-page rule reaches the chapters: their pages are found, and most of them have fences."""
    pages = fence_runs.pages_with_fences(DOCS)
    numbered = numbered_pages()
    assert numbered and all((DOCS / page).is_file() for page in numbered)
    assert len(numbered & set(pages)) >= len(numbered) // 2


# The checks themselves fail where they should: on a planted record.

PAGE = "# p\n\n```python\nprint((2, 3))\n```\n\n```python\nx = 1\n```\n\n```python\nassert True\n```\n"


def planted(outputs: list[str | None]) -> dict[str, list[str | None]]:
    fences = fence_runs.spec_fences(PAGE)
    runs = {
        fence.key: {fence.cpu_tag: {"outcome": "passed", "output": output}}
        for fence, output in zip(fences, outputs, strict=True)
        if output is not None
    }
    return cpu_outputs({"chapter/page.md": fences}, runs)


def test_the_coverage_check_fails_on_silent_fences():
    assert coverage_problems(planted(["(2, 3)", "x 1", "True"]), {"chapter/page.md"}) == []
    one_silent = planted(["(2, 3)", "", "True"])  # 2 of 3: under 90% overall and under 75% on the page
    problems = coverage_problems(one_silent, {"chapter/page.md"})
    assert len(problems) == 2 and "2 of 3" in problems[1] and "silent fences (1-based, page order): 2" in problems[1]
    assert len(coverage_problems(one_silent, set())) == 1, "a page outside the numbered chapters has no page rule"
    unrecorded = coverage_problems(planted(["(2, 3)", None, None]), {"chapter/page.md"})
    assert "2 with no CPU run recorded" in unrecorded[-1]


def test_the_output_check_fails_on_long_or_unstable_output():
    assert output_problems("p.md", 0, "cpu", "weights (2, 1, 5) 합 1.0\n[0.1755, 0.2736]") == []
    assert "13 lines" in output_problems("p.md", 0, "cpu", "\n".join(["x"] * 13))[0]
    assert "a memory address" in output_problems("p.md", 0, "cpu", "<object at 0x7f3a2b1c9d40>")[0]
    assert "a temporary or home path" in output_problems("p.md", 0, "cpu", "saved to /tmp/fence-abc/model.pt")[0]
    assert "a date" in output_problems("p.md", 0, "cpu", "trained 2026-11-25")[0]
    assert "a duration" in output_problems("p.md", 0, "cpu", "step took 12.5 ms")[0]
