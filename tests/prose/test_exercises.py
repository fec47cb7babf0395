"""Every chapter (a numbered section of the nav) ends with 2 to 5 exercises whose folded solutions run.

An exercise is a `### ` heading in the `## 연습 문제 { #exercises }` section, the last section of the
chapter's last page. Its solution is one `/// solution` block (pymdownx.blocks.details: a folded note
titled 풀이) that opens with two to five sentences saying what happens and why, then one spec fence. Each
chapter has a "바꿔 보기" exercise and a "망가뜨려 보기" exercise (break it: drop the mask, forget `detach`,
swap the `bmm`). At least one "바꿔 보기" changes the course's own code and runs it: it subclasses a class of
the package (an LSTM encoder for `Seq2Seq`, a GRU classifier), registers something in one of its tables (a
score in `SCORES`), or calls the package with one of its switches (`max_words=`, `source_mask=`,
`teacher_forcing_ratio=`), not a standalone `nn.LSTM` beside it. The live page (chapter 7) is the exception
for the two kinds: its exercises are done with the translator on the page, and their solutions check in
Python, on the page's model, what the answer says. A fence *indented* under `??? note "풀이"` would be shown
but never run: pytest-markdown-docs reads the page with markdown-it, for which the indented fence is an
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
CHANGE_IT, BREAK_IT = "바꿔 보기", "망가뜨려 보기"
ALLOWED_IMPORTS = {"seq2seq_attention", "torch", "math", "pathlib"}
INTERACTIVE = {
    # The live page's exercises are done with the translator on the page (its controls are taught in this
    # section): no change-it or break-it kinds there; their answers are folded and run like every other.
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


def solution_fence_line(text: str, heading: str) -> int:
    """The line of the opening fence of the solution of the exercise `heading` (1-based, as pytest collects it)."""
    start = text.index(f"### {heading}") + text[text.index(f"### {heading}") :].index("/// solution")
    return text.count("\n", 0, start + text[start:].index("\n```")) + 2


def last_pages(interactive: bool = True) -> list:
    return [
        pytest.param(DOCS / pages[-1], id=f"{title} ({pages[-1]})")
        for title, pages in chapters()
        if interactive or pages[-1] not in INTERACTIVE
    ]


def test_an_interactive_chapter_has_its_hands_on_section_and_exercises():
    last = [pages[-1] for _, pages in chapters()]
    for page, section in INTERACTIVE.items():
        text = (DOCS / page).read_text(encoding="utf-8")
        assert page in last and section in text.splitlines(), page
        assert len(exercises(text)) >= 3, f"{page}: the exercises its text promises"


def test_there_are_chapters():
    assert len(chapters()) >= 6


@pytest.mark.parametrize("page", last_pages())
def test_each_chapter_ends_with_exercises_whose_solutions_run(page: Path):
    text = page.read_text(encoding="utf-8")
    found = exercises(text)
    assert 2 <= len(found) <= 5, f"{page.name}: {len(found)} exercises under {HEADING!r} (want 2 to 5)"
    assert not re.search(r"^## ", text.split(HEADING, 1)[1], flags=re.M), "the exercises are the page's last section"
    runs = collected(text, page)
    for heading, body in found:
        solutions = SOLUTION.findall(body)
        assert len(solutions) == 1, f"{heading}: one `/// solution` block, found {len(solutions)}"
        fence_line = solution_fence_line(text, heading)
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
        words = explanation(body)
        opening = sentences(words)
        assert 2 <= opening <= 5, f"{heading}: the solution opens with {opening} sentences (want 2 to 5)"


def explanation(body: str) -> str:
    """The words of a solution before its first fence."""
    return SOLUTION.search(body)["body"].split("```", 1)[0].strip()


def sentences(text: str) -> int:
    return len(re.findall(r"[다요]\.(?:\s|$)", text))


def changes_the_course_code(source: str) -> list[str]:
    """How a solution's fence changes the package's own code: the package classes it subclasses, the package
    tables it adds to (`SCORES[...] = ...`), the package's callables (and what they made: a model) it calls with a
    keyword switch."""
    tree = ast.parse(source)
    package = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "seq2seq_attention"
        for alias in node.names
    }

    def root(node: ast.expr) -> str | None:
        while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
            node = node.func if isinstance(node, ast.Call) else node.value
        return node.id if isinstance(node, ast.Name) else None

    made = set(package)  # and the names bound to what the package made (a model, a checkpoint)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                pairs = (
                    zip(target.elts, node.value.elts, strict=True)
                    if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple)
                    else [(target, node.value)]
                )
                made |= {name.id for name, value in pairs if isinstance(name, ast.Name) and root(value) in made}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            found += [f"subclasses {root(base)}" for base in node.bases if root(base) in package]
        elif isinstance(node, ast.Assign):
            found += [
                f"adds to {root(target)}"
                for target in node.targets
                if isinstance(target, ast.Subscript) and root(target) in package
            ]
        elif isinstance(node, ast.Call) and node.keywords and root(node.func) in made:
            found.append(f"calls {root(node.func)}({', '.join(k.arg or '**' for k in node.keywords)}=...)")
    return found


@pytest.mark.parametrize("page", last_pages(interactive=False))
def test_each_chapter_has_a_change_it_and_a_break_it_exercise_explained_in_words(page: Path):
    found = dict(exercises(page.read_text(encoding="utf-8")))
    for kind in (CHANGE_IT, BREAK_IT):
        kinds = [heading for heading in found if kind in heading]
        assert kinds, f"{page.name}: no {kind!r} exercise"
        for heading in kinds:
            words = explanation(found[heading])
            assert 2 <= sentences(words) <= 5, f"{heading}: the solution explains in {sentences(words)} sentences"


@pytest.mark.parametrize("page", last_pages(interactive=False))
def test_each_chapter_has_an_exercise_that_changes_the_course_code_and_runs_it(page: Path):
    text = page.read_text(encoding="utf-8")
    runs = collected(text, page)
    changes = {}
    for heading, _ in exercises(text):
        if CHANGE_IT in heading:
            changes[heading] = changes_the_course_code(runs[solution_fence_line(text, heading)])
    assert any(changes.values()), f"{page.name}: no change-it exercise subclasses, registers in or switches the package"
    print({heading: found for heading, found in changes.items() if found})


def test_a_solution_fence_is_collected_and_an_indented_one_is_not():
    page = (
        "# t\n\n"
        '??? note "풀이"\n\n    ```python\n    assert False\n    ```\n\n'  # line 5: indented, never run
        "/// solution\n```python\nassert True\n```\n///\n"  # line 10: runs
    )
    assert set(collected(page, Path("t.md"))) == {10}
    body = "\n\n/// solution\n마스크가 없으면 새어 듭니다. 그래서 가립니다.\n\n```python\nassert 1\n```\n///\n"
    assert explanation(body) == "마스크가 없으면 새어 듭니다. 그래서 가립니다." and sentences(explanation(body)) == 2
    assert explanation("\n/// solution\n```python\nassert 1\n```\n///\n") == ""
    standalone = "from torch import nn\nfrom seq2seq_attention import pick_device\nnn.LSTM(4, 4, batch_first=True)\n"
    assert changes_the_course_code(standalone) == []  # a torch module beside the course's code changes nothing
    subclass = "from seq2seq_attention import EncoderRNN as E\nclass LSTMEncoder(E):\n    pass\n"
    assert changes_the_course_code(subclass) == ["subclasses E"]
    table = "import seq2seq_attention\nfrom seq2seq_attention import SCORES\nSCORES['cosine'] = object\n"
    assert changes_the_course_code(table) == ["adds to SCORES"]
    switch = "from seq2seq_attention import load_pairs\nload_pairs()\nload_pairs(max_words=8)\n"
    assert changes_the_course_code(switch) == ["calls load_pairs(max_words=...)"]
    made = "from seq2seq_attention import load_checkpoint\nc = load_checkpoint(p)\nm, v = c.model, c.vocabs\n"
    made += "m(x, mask=y)\n"
    assert changes_the_course_code(made) == ["calls m(mask=...)"]
    assert exercises(f"{HEADING}\n\n### 하나\n\n/// solution\n```python\nassert 1\n```\n///\n\n### 둘\n") == [
        ("하나", "\n\n/// solution\n```python\nassert 1\n```\n///\n\n"),
        ("둘", "\n"),
    ]


def test_solutions_are_folded_in_the_built_site(built_site: BuiltSite):
    """Each solution renders as a closed <details class="note"> titled 풀이, its code inside."""
    for _, pages in chapters():
        page = pages[-1]
        html = (built_site.root / page).with_suffix(".html").read_text(encoding="utf-8")
        html = html.split('id="exercises"', 1)[1]
        folded = re.findall(r'<details class="note"[^>]*>\s*<summary>풀이</summary>(.*?)</details>', html, flags=re.S)
        assert len(folded) == len(exercises((DOCS / page).read_text(encoding="utf-8"))), page
        assert all("<code>" in body and "assert" in body for body in folded), page
        assert '<details class="note" open' not in html, page


def test_solutions_are_left_out_of_search(built_site: BuiltSite):
    """A search result shows its page's text: folded answers are marked `data-search-exclude` (hooks/solutions.py)."""
    import json

    index = json.loads((built_site.root / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]
    checked = 0
    for _, pages in chapters():
        page = pages[-1]
        html = (built_site.root / page).with_suffix(".html").read_text(encoding="utf-8")
        assert re.findall(r"<details class=\"note\"(?! data-search-exclude)[^>]*>\s*<summary>풀이", html) == [], page
        found = " ".join(
            doc["text"] for doc in index if doc["location"].split("#")[0] == Path(page).with_suffix(".html").as_posix()
        )
        assert found, f"{page} is not in the search index"
        for heading, body in exercises((DOCS / page).read_text(encoding="utf-8")):
            words = explanation(body)
            if words:
                first = re.sub(r"[`*$]", "", words.split("\n")[0])[:20]
                assert first not in found, f"{heading}: the answer shows in search ({first!r})"
                checked += 1
    assert checked >= 12
