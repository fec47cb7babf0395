"""One home per idea: an idea the course explains is explained on one page, and the other pages link to it.

For each idea below, the only headings that name it are on its home page (exercise headings, "문제 N.", may name
it: they use the idea, they do not explain it), the home gives the idea's heading its anchor, and each page that
once explained it again now links to that anchor instead.
"""

import re

import pytest
from site_support import ROOT

DOCS = ROOT / "docs"

# (what the idea's headings say, home page, the anchor of its heading there, pages that must link to it)
IDEAS = [
    ("교사 강요", "seq2seq/training.md", "teacher-forcing", ["seq2seq/index.md", "bahdanau/decoder.md"]),
    ("노출 편향", "seq2seq/training.md", "exposure-bias", ["bahdanau/decoder.md"]),
    ("혼합 학습", "seq2seq/training.md", "mixed", ["bahdanau/decoder.md"]),
    ("왜 어텐션", "attention/index.md", "", ["bahdanau/index.md"]),
    ("어텐션 없는 디코더", "seq2seq/index.md", "context-only", ["attention/index.md", "bahdanau/index.md"]),
]
HEADING = re.compile(r"^(#{1,6}) (?P<text>.+?)(?: \{ ?#(?P<anchor>[\w-]+)[^}]*\})?[ \t]*$", re.M)
FENCE = re.compile(r"^(`{3,}|~{3,}).*?^\1[ \t]*$", re.M | re.S)
EXERCISE = re.compile(r"^문제 \d+\.")
LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")


def headings(text: str) -> list[tuple[str, str | None]]:
    """(text, anchor) of every heading outside code fences."""
    text = FENCE.sub("", text)
    return [(m["text"], m["anchor"]) for m in HEADING.finditer(text)]


def pages() -> list[str]:
    return sorted(path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md"))


def homes_of(idea: str, texts: dict[str, str]) -> list[str]:
    """The pages with a heading (not an exercise's) that names the idea."""
    return [
        page
        for page, text in texts.items()
        if any(idea in heading and not EXERCISE.match(heading) for heading, _ in headings(text))
    ]


def links_to(page: str, text: str, home: str, anchor: str) -> bool:
    """Whether `page` links to `home` (at `anchor`, where the idea has one)."""
    for match in LINK.finditer(text):
        target, _, fragment = match["target"].partition("#")
        if not target.endswith(".md"):
            continue
        resolved = ((DOCS / page).parent / target).resolve()
        if resolved == (DOCS / home).resolve() and fragment == anchor:
            return True
    return False


TEXTS = {page: (DOCS / page).read_text(encoding="utf-8") for page in pages()}


@pytest.mark.parametrize(("idea", "home", "anchor", "pointers"), IDEAS, ids=[idea[0] for idea in IDEAS])
def test_an_idea_has_one_home_and_the_others_link_to_it(idea: str, home: str, anchor: str, pointers: list[str]):
    assert homes_of(idea, TEXTS) == [home], f"headings naming {idea!r} sit on {homes_of(idea, TEXTS)}, want {home}"
    if anchor:
        anchored = [text for text, found in headings(TEXTS[home]) if found == anchor]
        assert anchored and idea in anchored[0], f"{home}: no heading naming {idea!r} with {{ #{anchor} }}"
    for page in pointers:
        assert links_to(page, TEXTS[page], home, anchor), f"{page} does not link to {home}#{anchor} for {idea!r}"


def test_the_checker_sees_a_second_home_and_a_missing_link():
    texts = {
        "a.md": "# 학습\n\n## 교사 강요 { #teacher-forcing }\n\n본문\n",
        "b/c.md": "# 루프\n\n## 교사 강요 다시 보기\n\n```python\n# 교사 강요 in a fence is code\n```\n",
        "b/d.md": "# 연습\n\n### 문제 1. 교사 강요로 부른 모델\n\n[교사 강요](../a.md#teacher-forcing)\n",
    }
    assert homes_of("교사 강요", texts) == ["a.md", "b/c.md"]
    assert headings(texts["a.md"]) == [("학습", None), ("교사 강요", "teacher-forcing")]
    assert not links_to("b/c.md", texts["b/c.md"], "a.md", "teacher-forcing")
    assert links_to("b/d.md", texts["b/d.md"], "a.md", "teacher-forcing")
    assert not links_to("b/d.md", texts["b/d.md"], "a.md", "mixed")
