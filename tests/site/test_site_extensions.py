"""The site as Zensical builds it shows what the MkDocs build shows: what a page shows beyond plain Markdown comes from
Python-Markdown extensions (mkdocs.yml's `markdown_extensions`), which both engines run.

Both builds here have a repository address (`site_with_repository_links`, `zensical_site`), so that excerpt titles
link to their lines. On every page the article (recorded fence outputs and the verification mark, excerpt titles and
links, steppers and their trace, rendered values, folded solutions, the phone layout of code and tables) is the same
HTML in both, up to what the engines write differently without a reader seeing it (`_normalised`) and the known
differences below. The browser tests (test_site_browser, test_stepper_browser, test_accessibility) run on both builds
(`engine_site`).

`KNOWN_DIFFERENCES`, what Zensical 0.0.73 cannot do yet, each with its reason; a test fails when one no longer
holds, so that the list shrinks as Zensical grows.
"""

import json
import posixpath
import re

import pytest
from site_support import BuiltSite

KNOWN_DIFFERENCES = {
    "notebooks": "A page's notebook (and the stamp's link to it) is a file a MkDocs hook adds to the whole site "
    "(`on_files` in hooks/fence_record.py); Zensical runs no MkDocs hooks.",
    "search": "Zensical has its own search (search.json, its own dialog); the copy of the math as text for search "
    "results (hooks/search_math.py) is made for MkDocs' search plugin, so Zensical's results show the TeX.",
}
NOTEBOOK_LINKS = re.compile(r' · <a download[^>]*\.ipynb">노트북으로 받기</a>(?: · <a [^>]*>Colab에서 열기</a>)?')
FEATURES = {
    "recorded outputs": 'class="fence-output',
    "verification marks": 'class="fence-record"',
    "excerpt titles": '<span class="filename">',
    "excerpt links": 'title="저장소에서 이 줄 보기"',
    "steppers": "data-stepper=",
    "folded solutions": "<summary>풀이</summary>",
    "stacked tables": "<table data-stack>",
    "phone code lines": 'style="--indent:',
}


def _article(site: BuiltSite, page: str) -> str:
    text = (site.root / page).read_text(encoding="utf-8")
    return text.split('<article class="md-content__inner', 1)[1].split("</article>", 1)[0]


def _normalised(article: str, page: str) -> str:
    """What the engines write differently without a reader seeing it: Zensical's skip-link anchor, blank lines, a
    relative link spelled through its own folder (`../appendix/recipe.html` from appendix/), and `data-search-exclude`
    (which Zensical honours in its search index and then drops from the page: `test_solutions_stay_out_of_search`)."""
    article = article.replace('<a id="__skip" tabindex="-1"></a>', "").replace(" data-search-exclude", "")
    folder = posixpath.dirname(page)

    def href(match: re.Match) -> str:
        target = match.group(1)
        if re.match(r"[a-z]+:|#|/", target):
            return match.group(0)
        return 'href="' + posixpath.relpath(posixpath.normpath(posixpath.join(folder, target)), folder or ".") + '"'

    article = re.sub(r'href="([^"]*)"', href, article)
    return "\n".join(line.strip() for line in article.splitlines() if line.strip())


def _pages(site: BuiltSite) -> list[str]:
    return [page.relative_to(site.root).as_posix() for page in site.pages()]


def test_zensical_builds_every_page_with_the_same_article(site_with_repository_links: BuiltSite,
                                                          zensical_site: BuiltSite):  # fmt: skip
    mkdocs, zensical = site_with_repository_links, zensical_site
    assert _pages(zensical) == _pages(mkdocs)
    counts, notebook_links, different = {}, 0, []
    for page in _pages(mkdocs):
        ours, theirs = _article(mkdocs, page), _article(zensical, page)
        for name, marker in FEATURES.items():
            counts[name] = counts.get(name, (0, 0))
            counts[name] = (counts[name][0] + ours.count(marker), counts[name][1] + theirs.count(marker))
        notebook_links += len(NOTEBOOK_LINKS.findall(ours))
        assert "{{" not in theirs, f"{page}: a value left unrendered by Zensical's macros"
        if _normalised(NOTEBOOK_LINKS.sub("", ours), page) != _normalised(theirs, page):
            different.append(page)
    print("(MkDocs, Zensical) on every page:", counts, "notebook links:", (notebook_links, 0))
    assert not different, f"pages whose article Zensical builds differently: {different}"
    assert all(count > 0 for count, _ in counts.values()), counts  # every feature shows (else the check proves little)
    # known difference "notebooks": the MkDocs build links a notebook from every stamp, Zensical none
    assert notebook_links == counts["verification marks"][0]
    assert not list(zensical.root.rglob("*.ipynb")) and "notebooks" in KNOWN_DIFFERENCES


def _search_texts(site: BuiltSite) -> str:
    """Everything the engine's search index holds (MkDocs' search/search_index.json, Zensical's search.json)."""
    mkdocs = site.root / "search" / "search_index.json"
    path = mkdocs if mkdocs.is_file() else site.root / "search.json"
    index = json.loads(path.read_text(encoding="utf-8"))
    return re.sub(r"<[^>]+>|\s+", " ", " ".join(entry["text"] for entry in index.get("docs") or index["items"]))


@pytest.mark.parametrize("engine", ["mkdocs", "zensical"])
def test_solutions_stay_out_of_search(built_site: BuiltSite, zensical_site: BuiltSite, engine: str):
    site = built_site if engine == "mkdocs" else zensical_site
    solutions = []
    for page in _pages(site):
        for body in re.findall(r"<summary>풀이</summary>\s*<p>(.*?)</p>", _article(site, page), flags=re.S):
            text = re.sub(r"<[^>]+>|\s+", " ", body).strip()
            solutions.append(text[:40])
    assert len(solutions) >= 5
    indexed = _search_texts(site)
    assert "어텐션" in indexed
    assert [text for text in solutions if text in indexed] == []


def test_zensical_search_shows_math_as_tex(built_site: BuiltSite, zensical_site: BuiltSite):
    """Known difference "search": none of a page's formulas is in MkDocs' index as TeX, in Zensical's they are."""
    page = _article(built_site, "attention/bahdanau-math.html")
    formulas = {tex for tex in re.findall(r'<span class="arithmatex">(.+?)</span>', page) if "&" not in tex}
    assert len(formulas) >= 10
    indexed = {site: sum(tex in _search_texts(site) for tex in formulas) for site in (built_site, zensical_site)}
    assert (indexed[built_site], indexed[zensical_site] > len(formulas) // 2) == (0, True), (len(formulas), indexed)
    assert "search" in KNOWN_DIFFERENCES
