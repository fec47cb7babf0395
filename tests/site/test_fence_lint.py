"""Every python fence on a page is either a spec (runs) or explicitly `notest`, in the brace form.

A fence that pytest-markdown-docs does not see (indented under an admonition, a content tab or a
list item, or inside an HTML block: Material still renders it as code) would neither run nor say
`notest`; `test_every_python_fence_runs_or_is_notest` finds such fences by scanning the raw lines.
"""

import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from pytest_markdown_docs.plugin import FenceSyntax, extract_fence_tests, parse_superfences_block_info
from support import ROOT

DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
PYTHON = {"python", "py", "python3"}
OPTIONS = {"notest", "continuation"}


def fences(page: Path):
    for token in MarkdownIt("commonmark").parse(page.read_text(encoding="utf-8")):
        if token.type == "fence":
            yield token.map[0] + 1, token.info.strip(), token.content


def check_info(info: str) -> str | None:
    """Return what is wrong with a fence's info string, or None."""
    if not info:
        return None
    if not info.startswith("{"):
        words = info.split()
        if words[0] in PYTHON and len(words) > 1:
            return f"bare words after the language ({info!r}) break Material; write {{.python {' '.join(words[1:])}}}"
        return None
    if not info.endswith("}"):
        return f"unclosed brace in {info!r}"
    body = info[1:-1]
    lang = re.match(r"\s*\.(\S+)", body)
    if lang is None:
        return f"brace form without a .language class: {info!r}"
    if lang.group(1) not in PYTHON:
        return None
    rest = re.sub(r'\w+="[^"]*"', "", body[lang.end() :]).split()
    unknown = [word for word in rest if word not in OPTIONS]
    if unknown:
        return f'unknown fence options {unknown} in {info!r} (allowed: {sorted(OPTIONS)}, key="value")'
    return None


FENCE = re.compile(r"^[ \t>]*(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
HTML_COMMENT = re.compile(r"<!--.*?-->", flags=re.S)


def raw_fences(text: str):
    """Every fenced block at any indentation, as (line of the opening fence, info string).

    HTML comments are blanked first (a fence in a comment is neither shown nor run).
    """
    text = HTML_COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    opening = None
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line)
        if opening is None:
            if match and not (match["fence"][0] == "`" and "`" in match["info"]):
                opening = match["fence"]
                yield number, match["info"].strip()
        elif match and not match["info"].strip() and match["fence"][0] == opening[0]:
            if len(match["fence"]) >= len(opening):
                opening = None


def unrun_python_fences(text: str, path: Path) -> list[int]:
    """Lines of python fences, not marked notest, that pytest-markdown-docs does not collect."""
    parser = MarkdownIt("commonmark")
    collected = {
        test.start_line for test in extract_fence_tests(parser, text, 0, path, fence_syntax=FenceSyntax.superfences)
    }
    lines = []
    for line, info in raw_fences(text):
        words = parse_superfences_block_info(info) if info else []
        if words and words[0] in PYTHON and "notest" not in words[1:] and line not in collected:
            lines.append(line)
    return lines


def test_there_are_pages():
    assert PAGES, "docs/ has no pages"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_fence_info_strings(page: Path):
    problems = []
    for line, info, content in fences(page):
        problem = check_info(info)
        if problem:
            problems.append(f"line {line}: {problem}")
        is_python = info.split()[0].lstrip("{.").rstrip("}") in PYTHON if info else False
        is_spec = is_python and "notest" not in info
        if is_spec and "--8<--" in content:
            problems.append(f"line {line}: a spec fence includes a snippet; included source goes in a notest fence")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_every_python_fence_runs_or_is_notest(page: Path):
    lines = unrun_python_fences(page.read_text(encoding="utf-8"), page)
    assert not lines, "\n".join(
        f"line {line}: this python fence is not run by pytest (indented under an admonition, a tab or a list, "
        "or inside an HTML block?) and not marked notest: move it to the top level, or mark it {.python notest}"
        for line in lines
    )


def test_unrun_fences_are_found():
    text = (
        "# t\n\n```python\nassert True\n```\n\n"  # line 3: runs
        "!!! note\n\n    ```python\n    x = 1\n    ```\n\n"  # line 9: indented, never runs
        '=== "tab"\n\n    ```{.python notest}\n    y = 2\n    ```\n\n'  # line 15: notest, fine
        "<div markdown>\n```python\nz = 3\n```\n</div>\n\n"  # line 20: HTML block, never runs
        "<!--\n```python\nhidden = 1\n```\n-->\n\n"  # in a comment: neither shown nor run
        "````markdown\n```python\nshown = 1\n```\n````\n\n"  # a fence inside a fence: text
        "~~~{.python continuation}\nassert True\n~~~\n"  # line 37: runs
    )
    assert unrun_python_fences(text, Path("t.md")) == [9, 20]


@pytest.mark.parametrize(
    ("info", "ok"),
    [
        ("python", True),
        ("{.python continuation}", True),
        ('{.python notest title="attention.py"}', True),
        ("python notest", False),
        ("python continuation", False),
        ("{.python notst}", False),
        ("{python notest}", False),
        ("text", True),
    ],
)
def test_check_info(info: str, ok: bool):
    assert (check_info(info) is None) == ok
