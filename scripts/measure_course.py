"""How much a learner reads: the rendered prose and code of the course's pages in a built site.

Usage:

    mkdocs build -d /tmp/site                   # this script builds nothing
    python scripts/measure_course.py /tmp/site  # per-page counts, then the two totals

The course is the home page and every page of the numbered chapters of mkdocs.yml's nav (1. to 7.). Each page is
opened in headless Chromium (selenium, as the site tests drive it) at 1280 px with every folded block closed; the
count is the length of the article's `innerText`, as a reader sees it. **Code** is the text of every visible `<pre>`
(excerpts, spec fences and their recorded outputs); **prose** is the rest of the article. Issue 48's target: at
most 100,000 characters of prose and 90,000 of code.
"""

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from site_support import (  # noqa: E402  (tests/ holds the browser and nav helpers the site tests use)
    BuiltSite,
    chapters,
    chromium,
    open_page,
    serve_site,
    site_url_path,
    wait_until_settled,
)

PROSE_LIMIT = 100_000
CODE_LIMIT = 90_000

MEASURE_JS = r"""
const article = document.querySelector("article");
if (!article) return null;
for (const details of article.querySelectorAll("details[open]")) details.open = false;
const style = document.createElement("style");
style.textContent = "details:not([open]) > :not(summary) { display: none !important; }";
document.head.append(style);
const visible = e => (e.checkVisibility ? e.checkVisibility() : e.offsetParent !== null);
const pres = [...article.querySelectorAll("pre")].filter(p => visible(p) && !p.parentElement.closest("pre"));
const code = pres.reduce((sum, p) => sum + p.innerText.length, 0);
const total = article.innerText.length;
style.remove();
return [total - code, code];
"""


def course_pages() -> list[str]:
    """The home page, then every page of the numbered chapters, in nav order (paths under docs/)."""
    return ["index.md"] + [page for _, pages in chapters() for page in pages]


def html_of(page: str) -> str:
    """`a/b.md` -> `a/b.html` (use_directory_urls: false)."""
    return page.removesuffix(".md") + ".html"


def measure(site: Path) -> list[tuple[str, int, int]]:
    """(page, prose characters, code characters) for every course page of the site built in `site`."""
    rows = []
    built = BuiltSite(root=site, base_path=site_url_path(), log="")
    with serve_site(built) as url, chromium() as driver:
        for page in course_pages():
            if not (site / html_of(page)).is_file():
                raise SystemExit(f"{site / html_of(page)} is missing: build the site first (mkdocs build -d {site})")
            open_page(driver, url + html_of(page))
            wait_until_settled(driver)
            counts = driver.execute_script(MEASURE_JS)
            if counts is None:
                raise SystemExit(f"{page}: the built page has no <article>")
            rows.append((page, *counts))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path, help="a built site folder (mkdocs build -d FOLDER)")
    args = parser.parse_args(argv)
    rows = measure(args.site.resolve())
    width = max(len(page) for page, _, _ in rows)
    print(f"{'page':<{width}}  {'prose':>7}  {'code':>7}")
    for page, prose, code in rows:
        print(f"{page:<{width}}  {prose:>7,}  {code:>7,}")
    prose = sum(row[1] for row in rows)
    code = sum(row[2] for row in rows)
    print(f"{'total (' + str(len(rows)) + ' pages)':<{width}}  {prose:>7,}  {code:>7,}")
    print(f"prose {prose:,} of at most {PROSE_LIMIT:,}; code {code:,} of at most {CODE_LIMIT:,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
