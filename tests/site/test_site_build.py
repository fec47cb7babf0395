"""The site builds with `mkdocs build --strict`, and every page in docs/ is built and in the navigation.

The build itself (one per session, shared with the link and browser tests) is the
`built_site` fixture in `tests/conftest.py`: strict mode turns every warning (a missing
snippet path, a broken link, a bad mkdocstrings reference) into a failed build.
"""

import json
import re
from html.parser import HTMLParser
from pathlib import Path

from site_support import ROOT, BuiltSite, chapters, nav, nav_pages

DOCS = ROOT / "docs"


def _built_page(site: BuiltSite, page: Path) -> Path:
    """Where a page is built: `page.html` (use_directory_urls is off, so the site works from disk)."""
    rel = page.relative_to(DOCS).with_suffix("")
    if rel.name in ("index", "README"):
        return site.root / rel.parent / "index.html"
    return site.root / rel.with_suffix(".html")


class _NavLinks(HTMLParser):
    """Collects the hrefs inside Material's primary navigation."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0
        self.hrefs: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        if self.depth:
            self.depth += tag == "nav"
            if tag == "a" and dict(attrs).get("href"):
                self.hrefs.add(dict(attrs)["href"])
        elif tag == "nav" and "md-nav--primary" in classes:
            self.depth = 1

    def handle_endtag(self, tag: str) -> None:
        if self.depth and tag == "nav":
            self.depth -= 1


def test_strict_build(built_site: BuiltSite):
    assert (built_site.root / "index.html").is_file()
    assert (built_site.root / "search" / "search_index.json").is_file()


PROGRESS = re.compile(
    r"INFO    -  (Cleaning site directory|Building documentation to directory: .*"
    r"|Documentation built in [\d.]+ seconds)"
)
"""MkDocs' own three lines of a build."""
EXPLAINED: dict[str, str] = {}
"""A line a clean build may print besides `PROGRESS` (a regular expression), with the reason it is there."""


def test_a_clean_build_is_quiet(built_site: BuiltSite):
    """A clean build prints at most 50 lines, and none that nobody explained: a real warning does not drown
    (hooks/quiet.py turns mkdocs-macros' listing of its ~900 variables off; Material's own notice about MkDocs 2 is
    off in the test build, NO_MKDOCS_2_WARNING)."""
    lines = [line for line in built_site.log.splitlines() if line.strip()]
    assert len(lines) <= 50, f"the build printed {len(lines)} lines"
    unexplained = [
        line for line in lines if not PROGRESS.fullmatch(line) and not any(re.search(p, line) for p in EXPLAINED)
    ]
    assert not unexplained, "the build printed lines nobody explained:\n" + "\n".join(
        line[:200] for line in unexplained
    )


def test_every_page_is_built_and_in_the_nav(built_site: BuiltSite):
    parser = _NavLinks()
    parser.feed((built_site.root / "index.html").read_text(encoding="utf-8"))
    linked = {(built_site.root / href.split("#")[0]).resolve() for href in parser.hrefs}
    linked |= {path.parent for path in linked if path.name == "index.html"}
    problems = []
    for page in sorted(DOCS.rglob("*.md")):
        built = _built_page(built_site, page)
        if not built.is_file():
            problems.append(f"{page.relative_to(ROOT)}: not built (expected {built.relative_to(built_site.root)})")
        elif built.resolve() not in linked and built.parent.resolve() not in linked:
            problems.append(f"{page.relative_to(ROOT)}: built, but not linked from the navigation (mkdocs.yml nav)")
    assert not problems, "\n".join(problems)


def test_search_splits_korean_words_from_punctuation(built_site: BuiltSite):
    """Material's search tokenises with this separator (a JS regex; these parts read the same in Python)."""
    config = json.loads((built_site.root / "search" / "search_index.json").read_text(encoding="utf-8"))["config"]
    assert config["lang"] == ["ko"]
    text = "“맥락벡터”는 ‘정렬’을 소프트맥스(softmax)는 바다나우/루옹, [어텐션] 'keys'와 인코더·디코더 torch.bmm"
    tokens = [token for token in re.split(config["separator"], text) if token]
    for word in ("맥락벡터", "정렬", "softmax", "루옹", "어텐션", "keys", "디코더", "bmm"):
        assert any(token.startswith(word) for token in tokens), f"{word!r} is not the start of a token in {tokens}"


HANGUL = re.compile(r"[\uac00-\ud7a3]")

COURSE = [
    # (what the chapter teaches, pages it must hold, in this order)
    ("seq2seq와 데이터", ["seq2seq/index.md", "seq2seq/data.md", "seq2seq/vocabulary.md", "seq2seq/tensors.md"]),
    ("모델과 학습", ["seq2seq/model.md", "seq2seq/training.md", "seq2seq/evaluation.md"]),
    ("어텐션", ["attention/index.md", "attention/dot-product.md", "attention/bahdanau-math.md", "attention/scores.md"]),
    (
        "바다나우",
        ["bahdanau/index.md", "bahdanau/attention.md", "bahdanau/decoder.md", "errata.md"],
    ),
    ("감성 분류기", ["classifier/index.md", "classifier/model.md", "classifier/results.md"]),
    ("속도", ["performance/index.md"]),
    ("직접 번역", ["live.md"]),
]


def test_the_navigation_reads_as_a_course():
    """Issue 19: concept and data, model and training, attention, the code line by line (errata inside),
    the classifier, speed, the live page; numbered 1., 2., ... in that order."""
    found = chapters()
    assert [title.split(". ", 1)[0] for title, _ in found] == [str(n) for n in range(1, len(COURSE) + 1)]
    for (title, pages), (topic, expected) in zip(found, COURSE, strict=True):
        assert topic in title, f"chapter {title!r} should be about {topic}"
        assert [page for page in pages if page in expected] == expected, f"{title}: {pages}"
    assert nav()[0] == {"홈": "index.md"}


def test_every_title_in_the_navigation_is_korean():
    """Korean titles everywhere (a code name may follow in parentheses): every title the nav gives, and every
    page's first heading, holds Hangul."""
    titles = [title for title, _ in nav_pages(nav()) if title is not None]
    titles += [title for title, _ in chapters()]
    problems = [title for title in titles if not HANGUL.search(title)]
    for page in sorted(DOCS.rglob("*.md")):
        heading = next((line for line in page.read_text(encoding="utf-8").splitlines() if line.startswith("# ")), "")
        if not HANGUL.search(heading):
            problems.append(f"{page.relative_to(DOCS)}: {heading!r}")
    assert problems == []
