"""Every page of the numbered chapters reads like a textbook section: it says what it teaches, sums up, and leads on.

- It opens with a goal block, `!!! abstract "이 페이지에서 배우는 것"`, before its first `## ` section, holding 2 to 4
  points. A "먼저 읽을 것" line there names a real prerequisite: a page other than the one just before it in the
  course (the reader who reads in order has just read that one; the sidebar and the footer show it).
- It has a `## 정리` section of 3 to 5 points, right before the exercises where the page has them, else last.
- It leads on through the footer's previous and next links (`navigation.footer`; after the course's last page the
  footer leads on to the appendix): no `다음: [title](target)` line repeats it.
- Every numbered chapter opens with an `index.md` page (the sidebar label is a link, `navigation.indexes`).
- Every topic of the seed notes is taught on the main path: `SEED_TOPICS` names the section of each, and that
  section's text outside folded blocks (`/// details`, `//// details`, `/// solution`, `???`) holds what teaches it.
"""

import re

import pytest
from site_support import ROOT, chapters

DOCS = ROOT / "docs"
GOAL = '!!! abstract "이 페이지에서 배우는 것"'
SUMMARY = "## 정리"
EXERCISES = "## 연습 문제 { #exercises }"
NEXT = re.compile(r"^다음: \[(?P<title>[^\]\n]+)\]\((?P<target>[^)\s]+)\)$", re.M)
FIRST_READ = re.compile(r"^\s*먼저 읽을 것:(?P<line>.*)$", re.M)
LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")


def course() -> list[str]:
    """Every page of the numbered chapters, in reading order."""
    return [page for _, pages in chapters() for page in pages]


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


def test_the_footer_leads_on():
    """The footer's previous and next links (Material's `navigation.footer`) are what a page ends with."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert re.search(r"^\s*- navigation\.footer\s*$", config, flags=re.M), "mkdocs.yml: navigation.footer is off"


@pytest.mark.parametrize("page", PAGES)
def test_no_next_line_repeats_the_footer(page: str):
    found = [match.group(0) for match in NEXT.finditer((DOCS / page).read_text(encoding="utf-8"))]
    assert found == [], f"{page}: {found} repeats the footer's next link"


def prerequisites(page: str, text: str) -> list[str]:
    """The pages a "먼저 읽을 것" line of `page` names (docs-relative paths)."""
    return [resolve(page, link["target"]) for line in FIRST_READ.finditer(text) for link in LINK.finditer(line["line"])]


@pytest.mark.parametrize("page", PAGES)
def test_a_prerequisite_is_not_just_the_previous_page(page: str):
    previous = PAGES[PAGES.index(page) - 1] if PAGES.index(page) else None
    named = prerequisites(page, (DOCS / page).read_text(encoding="utf-8"))
    assert previous not in named, f"{page}: 먼저 읽을 것 names {previous}, the page just before it (the nav says so)"
    assert all((DOCS / target).is_file() for target in named), f"{page}: {named}"


def test_every_chapter_opens_with_an_index_page():
    assert [title for title, pages in chapters() if len(pages) > 1 and not pages[0].endswith("index.md")] == []


def test_the_reader_sees_a_missing_block_a_long_summary_and_a_wrong_link():
    page = f"# 제목\n\n본문\n\n## 절\n\n{SUMMARY}\n\n- 하나\n- 둘\n\n## 다른 절\n\n다음: [없는 곳](nowhere.md)\n"
    found = structure(page)
    assert found["goals"] == [] and len(found["summary"]) == 2 and found["after"] == "## 다른 절"
    assert [m["target"] for m in NEXT.finditer(page)] == ["nowhere.md"]
    goal = f"{GOAL}\n\n    - 하나\n\n    먼저 읽을 것: 2장의 [모델](../seq2seq/model.md), [데이터](data.md)\n"
    assert prerequisites("seq2seq/tensors.md", goal) == ["seq2seq/model.md", "seq2seq/data.md"]
    good = f"# 제목\n\n{GOAL}\n\n    - 하나\n    - 둘\n\n    먼저 읽을 것: x\n\n본문\n\n- 목록은 세지 않는다\n"
    assert len(structure(good)["goals"]) == 2
    assert resolve("seq2seq/tensors.md", "../model-training/index.md#top") == "model-training/index.md"


# The seed notes' topics and the main-path section that teaches each: (page, heading, what the unfolded section holds).
SEED_TOPICS: dict[str, tuple[str, str, str]] = {
    "shapes per step": ("attention/dot-product.md", "## 다섯 단계 레시피", "`(B, 1, S)`"),
    "squeeze": ("bahdanau/attention.md", "### 5. `squeeze(-1)`", "squeeze"),
    "bmm": ("bahdanau/attention.md", "### 7. `bmm`: 가중합", "bmm"),
    "teacher forcing": ("seq2seq/training.md", "## 교사 강요", "교사 강요"),
    "exposure bias": ("seq2seq/training.md", "## 노출 편향", "노출 편향"),
    "topk without softmax": ("bahdanau/decoder.md", "## `topk`에 소프트맥스가 필요 없는 이유", "topk"),
    "the heatmap": ("attention/heatmaps.md", "## 학습한 모델의 히트맵", "heatmap_1.png"),
    "the BiLSTM classifier": ("classifier/model.md", "### 첫 BiLSTM", "BiLSTM"),
    "the errata of the transcribed code": ("errata.md", "## `super().init()`", "init"),
}
FOLD = re.compile(r"^(/{3,}) *(?:details|solution)\b.*?^\1[ \t]*$|^\?\?\?.*?(?=^\S)", re.M | re.S)


def main_path(text: str) -> str:
    """The page as a reader sees it with every fold closed: folded blocks dropped."""
    return FOLD.sub("", text)


def section(text: str, heading: str) -> str | None:
    """The body of the section whose heading line starts with `heading`, up to the next heading (None: no such one)."""
    match = re.search(r"^" + re.escape(heading) + r".*$", text, re.M)
    if not match:
        return None
    following = re.search(r"^#{1,6} ", text[match.end() :], re.M)
    return text[match.end() : match.end() + following.start()] if following else text[match.end() :]


@pytest.mark.parametrize("topic", SEED_TOPICS)
def test_each_seed_topic_is_taught_on_the_main_path(topic: str):
    page, heading, holds = SEED_TOPICS[topic]
    assert page in course(), f"{topic}: {page} is not a course page"
    body = section(main_path((DOCS / page).read_text(encoding="utf-8")), heading)
    assert body is not None, f"{topic}: {page} has no main-path section {heading!r}"
    assert holds in body, f"{topic}: {page} {heading!r} does not hold {holds!r} outside its folds"


def test_the_main_path_leaves_folds_out():
    text = (
        "## 교사 강요\n\n정답을 넣습니다.\n\n"
        "/// details | 확인 코드 펼치기\n    type: note\n\n노출 편향\n///\n\n"
        "//// details | 더 보기: 자세히\n    type: note\n\n"
        "/// details | 확인 코드 펼치기\n    type: note\n\nbmm\n///\n////\n"
        '??? note "접힘"\n\n    squeeze\n\n끝\n'
    )
    shown = main_path(text)
    assert "정답을 넣습니다" in shown and "끝" in shown
    assert "노출 편향" not in shown and "bmm" not in shown and "squeeze" not in shown
    assert section(shown, "## 교사 강요") is not None and section(shown, "## 노출 편향") is None
