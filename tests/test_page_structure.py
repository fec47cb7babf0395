"""Every page of the numbered chapters reads like a textbook section: it says what it teaches, sums up, and leads on.

- It opens with a goal block, `!!! abstract "이 페이지에서 배우는 것"`, before its first `## ` section, holding 2 to 4
  points (and, where it matters, a "먼저 읽을 것" line).
- It has a `## 정리` section of 3 to 5 points, right before the exercises where the page has them, else last.
- Its last line is `다음: [title](target)`, and the target is the next page of the course (the nav order); the
  course's last page leads on to the first page the nav lists after the course (the appendix).
- Every numbered chapter opens with an `index.md` page (the sidebar label is a link, `navigation.indexes`).
"""

import re

import pytest
from site_support import ROOT, chapters, nav, nav_pages

DOCS = ROOT / "docs"
GOAL = '!!! abstract "이 페이지에서 배우는 것"'
SUMMARY = "## 정리"
EXERCISES = "## 연습 문제 { #exercises }"
NEXT = re.compile(r"^다음: \[(?P<title>[^\]\n]+)\]\((?P<target>[^)\s]+)\)$")


def course() -> list[str]:
    """Every page of the numbered chapters, in reading order."""
    return [page for _, pages in chapters() for page in pages]


def after_course() -> str:
    """The first page the nav lists after the last page of the course."""
    pages = [page for _, page in nav_pages(nav())]
    return pages[pages.index(course()[-1]) + 1]


def structure(text: str) -> dict:
    """The goal points, the summary points, the section after 정리, and the last line of a page."""
    head = re.split(r"^## ", text, maxsplit=1, flags=re.M)[0]
    goals: list[str] = []
    if GOAL in head:
        block = head.split(GOAL, 1)[1].split("\n")[1:]
        body = []
        for line in block:
            if line.strip() and not line.startswith("    "):
                break
            body.append(line)
        goals = [line for line in body if line.startswith("    - ")]
    summary: list[str] = []
    after = None
    if f"\n{SUMMARY}\n" in text:
        section = text.split(f"\n{SUMMARY}\n", 1)[1]
        following = re.search(r"^## .*$", section, flags=re.M)
        after = following.group(0) if following else None
        body = section[: following.start()] if following else section
        summary = [line for line in body.splitlines() if line.startswith("- ")]
    lines = [line for line in text.splitlines() if line.strip()]
    return {"goals": goals, "summary": summary, "after": after, "last": lines[-1] if lines else ""}


def resolve(page: str, target: str) -> str:
    """The docs-relative path a link on `page` points to (its anchor dropped)."""
    path = (DOCS / page).parent / target.split("#", 1)[0]
    return path.resolve().relative_to(DOCS.resolve()).as_posix()


PAGES = course()


def test_the_course_has_pages():
    assert len(PAGES) >= 20 and all((DOCS / page).is_file() for page in PAGES)


@pytest.mark.parametrize("page", PAGES)
def test_the_page_opens_with_what_it_teaches(page: str):
    found = structure((DOCS / page).read_text(encoding="utf-8"))["goals"]
    assert 2 <= len(found) <= 4, f"{page}: {len(found)} points under {GOAL} before the first section (want 2 to 4)"


@pytest.mark.parametrize("page", PAGES)
def test_the_page_sums_up_before_its_exercises_or_at_its_end(page: str):
    text = (DOCS / page).read_text(encoding="utf-8")
    found = structure(text)
    assert 3 <= len(found["summary"]) <= 5, f"{page}: {len(found['summary'])} points under {SUMMARY} (want 3 to 5)"
    assert found["after"] in (None, EXERCISES), f"{page}: {SUMMARY} is followed by {found['after']!r}"


@pytest.mark.parametrize("page", PAGES)
def test_the_page_ends_with_a_link_to_the_next_page(page: str):
    last = structure((DOCS / page).read_text(encoding="utf-8"))["last"]
    match = NEXT.match(last)
    assert match, f"{page}: the last line is {last!r}, not '다음: [title](next page)'"
    target = resolve(page, match["target"])
    assert (DOCS / target).is_file(), f"{page}: {match['target']} does not exist"
    pages = [*course(), after_course()]
    assert target == pages[pages.index(page) + 1], f"{page}: 다음 points to {target}, the course goes on with the next"


def test_every_chapter_opens_with_an_index_page():
    assert [title for title, pages in chapters() if len(pages) > 1 and not pages[0].endswith("index.md")] == []


def test_the_reader_sees_a_missing_block_a_long_summary_and_a_wrong_link():
    page = f"# 제목\n\n본문\n\n## 절\n\n{SUMMARY}\n\n- 하나\n- 둘\n\n## 다른 절\n\n다음: [없는 곳](nowhere.md)\n"
    found = structure(page)
    assert found["goals"] == [] and len(found["summary"]) == 2 and found["after"] == "## 다른 절"
    assert NEXT.match(found["last"])["target"] == "nowhere.md"
    good = f"# 제목\n\n{GOAL}\n\n    - 하나\n    - 둘\n\n    먼저 읽을 것: x\n\n본문\n\n- 목록은 세지 않는다\n"
    assert len(structure(good)["goals"]) == 2
    assert resolve("seq2seq/tensors.md", "../model-training/index.md#top") == "model-training/index.md"
