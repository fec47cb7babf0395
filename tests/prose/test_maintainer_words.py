"""Lessons speak to learners: no maintainer words in the course prose.

How the site is built, tested, measured or maintained (test files, pytest, issues and their targets, commits, the
machine's load, the GPU model a record was made on, flags that re-record outputs, the history of edits to a page)
belongs in README.md or on the appendix page `docs/appendix/verification.md`, not in the lessons. This test reads
the prose of the numbered chapters and the home page (fenced code blocks, snippet includes and link targets aside:
code may import pytest, a link may point anywhere) and fails naming page:line and the word. Inline code is read only
for paths and flags (`tests/...`, `test_x.py`, `--record-fences`): `pytest.raises` in a sentence names what a spec
on the page calls, a test file's path names nothing the learner runs.

A word a lesson needs for the learner's sake goes on `EXCEPTIONS` with the reason.
"""

import re

import pytest
from site_support import ROOT, chapters

DOCS = ROOT / "docs"

# (label, pattern): what a maintainer says and a learner does not need.
# Korean particles glue to an English word ("H200에서", "CI가"), so the edges are ASCII edges, not \\b.
A, Z = r"(?<![A-Za-z0-9_])", r"(?![A-Za-z0-9_])"
WORDS = [
    ("tests/", re.compile(A + r"tests/")),
    ("test file", re.compile(A + r"test_\w+\.py" + Z)),
    ("pytest", re.compile(r"pytest", re.I)),
    ("이슈", re.compile(r"이슈")),
    ("issue", re.compile(A + r"issues?" + Z, re.I)),
    ("커밋", re.compile(r"커밋")),
    ("commit", re.compile(A + r"commit", re.I)),
    ("부하 평균", re.compile(r"부하\s*평균|load\s+average", re.I)),
    # the machine a measurement ran on and what else ran there: 2코어 CPU, 공유 기계, 다른 학습과 함께
    (
        "machine load",
        re.compile(
            r"\d+\s*코어|공유\s*기계|가상\s*머신|다른\s*(?:작업|학습|실행)(?:과|와)\s*함께|CPU\s*두\s*개를\s*나눠"
        ),
    ),
    ("--record", re.compile(r"--record")),
    ("GPU model", re.compile(A + r"(?:[AH]100|H200|B200|L40S?)" + Z)),
    ("issue number", re.compile(r"(?<![\w&/])#\d+" + Z)),
    ("CI", re.compile(A + r"CI" + Z)),
    ("edit history", re.compile(r"이 페이지를 고칠 때|고치기 전의 페이지|이 페이지를 고친")),
]

# what inline code may not hold either (paths and flags of the test machinery)
IN_CODE_TOO = {"tests/", "test file", "--record"}

# (page, label, reason): a maintainer word a lesson keeps, reviewed. Empty: every lesson speaks to learners.
EXCEPTIONS: list[tuple[str, str, str]] = []

# TEMPORARY: what docs/live.md said when this test was written (another branch rewrites that page for issue 38).
# The lead empties this list after merging that branch; an entry whose word is gone from live.md fails below.

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<mark>```+|~~~+).*?^(?P=indent)(?P=mark)\s*$", re.M | re.S)
INLINE_CODE = re.compile(r"(`+)(?!`).+?(?<!`)\1")
LINK_TARGET = re.compile(r"\]\([^)\s]*\)")
SNIPPET = re.compile(r"^\s*--8<--.*$", re.M)


def course_pages() -> list[str]:
    """The home page and every page of the numbered chapters, in reading order."""
    return ["index.md"] + [page for _, pages in chapters() for page in pages]


def prose(text: str, inline_code: bool = False) -> str:
    """The page's prose: fenced blocks, snippet includes, link targets and (unless asked) inline code blanked."""
    text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    text = SNIPPET.sub("", text)
    if not inline_code:
        text = INLINE_CODE.sub(lambda m: " " * len(m.group(0)), text)
    return LINK_TARGET.sub("]()", text)


def found_in(text: str) -> list[tuple[int, str, str]]:
    """(line, label, the matched text) of every maintainer word in a page's prose."""
    hits = []
    lines = prose(text).splitlines()
    with_code = prose(text, inline_code=True).splitlines()
    for number, (line, code_line) in enumerate(zip(lines, with_code, strict=True), start=1):
        for label, pattern in WORDS:
            where = code_line if label in IN_CODE_TOO else line
            hits += [(number, label, m.group(0)) for m in pattern.finditer(where)]
    return hits


def allowed(page: str) -> set[str]:
    return {label for where, label, _ in EXCEPTIONS if where == page}


@pytest.mark.parametrize("page", course_pages())
def test_the_lesson_has_no_maintainer_words(page: str):
    text = (DOCS / page).read_text(encoding="utf-8")
    hits = [f"{page}:{line}: {label} ({word!r})" for line, label, word in found_in(text) if label not in allowed(page)]
    assert hits == [], (
        "maintainer words in a lesson (move them to README.md or docs/appendix/verification.md):\n" + "\n".join(hits)
    )


def test_every_exception_has_a_reason_and_is_still_needed():
    labels = {label for label, _ in WORDS}
    stale = []
    for page, label, reason in EXCEPTIONS:
        assert label in labels and len(reason.split()) >= 4, f"{page}: {label}: say why the lesson needs it"
        if label not in {hit[1] for hit in found_in((DOCS / page).read_text(encoding="utf-8"))}:
            stale.append(f"{page}: {label}")
    assert stale == [], f"exceptions no longer on their page (remove them): {stale}"


def test_the_scan_finds_planted_words_and_skips_code():
    planted = (
        "이 페이지를 고칠 때 1분 부하 평균은 17이었습니다.\n"
        "`pytest.raises`는 페이지의 명세가 부르는 것이지만 `tests/test_live.py`는 아닙니다.\n"
        "이슈가 예상한 것, H200에서 기록, python -m pytest --record-fences, 커밋된 파일, issue #38.\n"
        "2코어 CPU 머신에서 다른 학습과 함께 돌며 잰 시간, 공유 기계라.\n"
        "```python\nimport pytest  # code is not prose\n```\n"
        "[링크](https://github.com/o/r/issues/38)는 건너뜁니다.\n"
    )
    labels = [(line, label) for line, label, _ in found_in(planted)]
    assert (1, "edit history") in labels and (1, "부하 평균") in labels
    assert (2, "tests/") in labels and (2, "test file") in labels and (2, "pytest") not in labels
    for label in ("이슈", "GPU model", "pytest", "--record", "커밋", "issue", "issue number"):
        assert (3, label) in labels, label
    assert [label for line, label in labels if line == 4] == ["machine load"] * 3
    assert not [hit for hit in labels if hit[0] >= 5], labels
