"""Page text: no control character in prose or math (a TAB where `\\t` was meant renders "2HimesH" silently)."""

import re
from pathlib import Path

import pytest
from support import ROOT

DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
CONTROL = re.compile(r"[\x00-\x08\x09\x0b-\x1f\x7f]")
FENCE = re.compile(r"^(```+|~~~+).*?^\1\s*$", re.M | re.S)


def prose(text: str) -> str:
    """The page without its fenced code blocks (code may hold tabs on purpose: the tutorial's mixed indentation)."""
    return FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_no_control_character_in_prose_or_math(page: Path):
    text = prose(page.read_text(encoding="utf-8"))
    found = []
    for m in CONTROL.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        found.append(f"line {line}: {m.group(0)!r} in {text[max(0, m.start() - 20) : m.end() + 20]!r}")
    assert found == []


def test_the_check_sees_a_tab_in_math_and_ignores_code():
    assert CONTROL.search(prose("연결 층 $2H \timesH$\n"))
    assert not CONTROL.search(prose("```python\n\tx = 1\n```\n"))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_every_page_with_symbols_links_to_the_notation_page(page: Path):
    text = page.read_text(encoding="utf-8")
    if page.name == "notation.md" or "$" not in prose(text):
        return
    assert "notation.md" in text, f"{page.relative_to(DOCS)} uses symbols but does not link to notation.md"


def test_subscripts_are_math_not_code():
    """`y_{T-2}` in backticks shows its braces; symbols with subscripts belong in $...$."""
    found = [
        f"{page.relative_to(DOCS)}: {span}"
        for page in PAGES
        for span in re.findall(r"`([^`\n]+)`", prose(page.read_text(encoding="utf-8")))
        if "_{" in span
    ]
    assert found == []


def test_the_source_material_has_one_name():
    """The course follows "the PyTorch tutorial" (named on the home page); "seed" in prose would read as a random seed
    (시드)."""
    found = []
    for page in PAGES:
        text = re.sub(r"`[^`\n]*`", "", prose(page.read_text(encoding="utf-8")))
        text = text.replace("random seed", "")  # the home page says once what 시드 translates
        found += [f"{page.relative_to(DOCS)}: {m.group(0)}" for m in re.finditer(r"\bseed\w*|씨앗", text, re.I)]
    assert found == []
