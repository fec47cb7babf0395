"""Every chapter (a numbered section of the nav) ends with 2 to 4 exercises whose folded solutions run.

An exercise is a `### ` heading in the `## 연습 문제 { #exercises }` section, the last section of the
chapter's last page. Its solution is one `/// solution` block (pymdownx.blocks.details: a folded note
titled 풀이) holding one spec fence. A fence *indented* under `??? note "풀이"` would be shown but never
run: pytest-markdown-docs reads the page with markdown-it, for which the indented fence is an
indented code block. The `/// solution` form leaves the fence at the top level, where it is collected
like every other spec (`test_a_solution_fence_is_collected_and_an_indented_one_is_not`).
"""

import ast
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from pytest_markdown_docs.plugin import FenceSyntax, extract_fence_tests
from site_support import ROOT, BuiltSite, chapters

DOCS = ROOT / "docs"
HEADING = "## 연습 문제 { #exercises }"
SOLUTION = re.compile(r"^/// solution\n(?P<body>.*?)^///$", re.M | re.S)
ALLOWED_IMPORTS = {"seq2seq_attention", "torch", "math"}
INTERACTIVE = {
    # The live page's exercises are done in the browser, in its own section, not as spec fences.
    "live.md": "## 손으로 해 보기",
}


def collected(text: str, path: Path) -> dict[int, str]:
    """The fences pytest-markdown-docs runs on a page, by the line of their opening fence."""
    tests = extract_fence_tests(MarkdownIt("commonmark"), text, 0, path, fence_syntax=FenceSyntax.superfences)
    return {test.start_line: test.source for test in tests}


def exercises(text: str) -> list[tuple[str, str]]:
    """(heading, the rest of the exercise up to the next heading) for each exercise of the page."""
    if HEADING not in text:
        return []
    section = text.split(HEADING, 1)[1]
    parts = re.split(r"^### (.+)$", section, flags=re.M)
    return list(zip(parts[1::2], parts[2::2], strict=True))


def last_pages() -> list:
    return [
        pytest.param(DOCS / pages[-1], id=f"{title} ({pages[-1]})")
        for title, pages in chapters()
        if pages[-1] not in INTERACTIVE
    ]


def test_an_interactive_chapter_has_its_hands_on_section():
    last = [pages[-1] for _, pages in chapters()]
    for page, section in INTERACTIVE.items():
        assert page in last and section in (DOCS / page).read_text(encoding="utf-8").splitlines(), page


def test_there_are_chapters():
    assert len(chapters()) >= 6


@pytest.mark.parametrize("page", last_pages())
def test_each_chapter_ends_with_exercises_whose_solutions_run(page: Path):
    text = page.read_text(encoding="utf-8")
    found = exercises(text)
    assert 2 <= len(found) <= 4, f"{page.name}: {len(found)} exercises under {HEADING!r} (want 2 to 4)"
    assert not re.search(r"^## ", text.split(HEADING, 1)[1], flags=re.M), "the exercises are the page's last section"
    runs = collected(text, page)
    for heading, body in found:
        solutions = SOLUTION.findall(body)
        assert len(solutions) == 1, f"{heading}: one `/// solution` block, found {len(solutions)}"
        line = text.index(f"### {heading}") + text[text.index(f"### {heading}") :].index("/// solution")
        fence_line = text.count("\n", 0, line) + 2  # the fence opens right under `/// solution`
        assert fence_line in runs, f"{heading}: the solution's fence (line {fence_line}) is not run by pytest"
        source = runs[fence_line]
        assert "assert " in source, f"{heading}: the solution asserts nothing"
        imported = {
            (node.module or "").split(".")[0] if isinstance(node, ast.ImportFrom) else alias.name.split(".")[0]
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Import | ast.ImportFrom)
            for alias in node.names
        }
        assert imported <= ALLOWED_IMPORTS, f"{heading}: imports {sorted(imported - ALLOWED_IMPORTS)}"


def test_a_solution_fence_is_collected_and_an_indented_one_is_not():
    page = (
        "# t\n\n"
        '??? note "풀이"\n\n    ```python\n    assert False\n    ```\n\n'  # line 5: indented, never run
        "/// solution\n```python\nassert True\n```\n///\n"  # line 10: runs
    )
    assert set(collected(page, Path("t.md"))) == {10}
    assert exercises(f"{HEADING}\n\n### 하나\n\n/// solution\n```python\nassert 1\n```\n///\n\n### 둘\n") == [
        ("하나", "\n\n/// solution\n```python\nassert 1\n```\n///\n\n"),
        ("둘", "\n"),
    ]


def test_solutions_are_folded_in_the_built_site(built_site: BuiltSite):
    """Each solution renders as a closed <details class="note"> titled 풀이, its code inside."""
    for _, pages in chapters():
        page = pages[-1]
        if page in INTERACTIVE:
            continue
        html = (built_site.root / page).with_suffix(".html").read_text(encoding="utf-8")
        html = html.split('id="exercises"', 1)[1]
        folded = re.findall(r'<details class="note">\s*<summary>풀이</summary>(.*?)</details>', html, flags=re.S)
        assert len(folded) == len(exercises((DOCS / page).read_text(encoding="utf-8"))), page
        assert all("<code>" in body and "assert" in body for body in folded), page
        assert '<details class="note" open' not in html, page
