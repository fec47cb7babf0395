"""Every python fence on a page is either a spec (runs) or explicitly `notest`, in the brace form."""

import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

DOCS = Path(__file__).resolve().parent.parent / "docs"
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
