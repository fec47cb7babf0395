"""Every internal link and `#anchor` of the built site resolves, and no asset comes from another host.

Read from the HTML that `mkdocs build --strict` wrote (the `built_site` fixture), so links made
by the theme, by mkdocstrings and by `toc` are checked too, not only those in the Markdown:

* every `href`/`src`/`srcset` inside the site names a file that exists, and its `#fragment`
  an `id` (or `<a name>`) on the target page;
* scripts, stylesheets, icons, images, frames and media, and every `url(...)`/`@import` in
  CSS (files, `<style>`, `style=""`), stay on the site: the pages must work offline and
  leak no reader to a third party. Links a reader clicks (`<a href="https://...">`) may
  leave the site.
"""

import re
from functools import cache
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

from site_support import BuiltSite

SITE_HOST = "site.invalid"
NON_FETCHING_SCHEMES = {"mailto", "tel", "javascript", "data", "blob", "about"}
ASSET_RELS = {
    "stylesheet",
    "icon",
    "shortcut",
    "apple-touch-icon",
    "mask-icon",
    "preload",
    "modulepreload",
    "prefetch",
    "manifest",
}
ASSET_TAGS = {"script", "img", "source", "iframe", "video", "audio", "embed", "track", "input", "object", "image"}
URL_ATTRS = {"href", "src", "poster", "data", "xlink:href"}
CSS_URL = re.compile(r"""url\(\s*(['"]?)([^'")]*)\1\s*\)|@import\s+(['"])([^'"]+)\3""")


class _Page(HTMLParser):
    """The ids of a page, the URLs it references and its inline CSS."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.refs: list[tuple[str, str, bool]] = []  # (what, url, is an asset)
        self.css: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        for key in ("id",) + (("name",) if tag == "a" else ()):
            if values.get(key):
                self.ids.add(values[key])
        rels = set(values.get("rel", "").lower().split())
        asset = tag in ASSET_TAGS or (tag == "link" and bool(rels & ASSET_RELS))
        for name, value in values.items():
            if name in URL_ATTRS and value:
                self.refs.append((f"<{tag} {name}>", value.strip(), asset))
            elif name in ("srcset", "imagesrcset") and value:
                for candidate in value.split(","):
                    if candidate.strip():
                        self.refs.append((f"<{tag} {name}>", candidate.split()[0], True))
            elif name == "style" and value:
                self.css.append(value)
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        if tag == "style":
            self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.css.append(data)


@cache
def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    page.close()
    return page


def _target_file(site: BuiltSite, url: str) -> tuple[Path | None, str]:
    """The file a same-site URL names (None for another host), and its unquoted fragment."""
    split = urlsplit(url)
    if split.netloc != SITE_HOST:
        return None, ""
    path = unquote(split.path)
    if not path.startswith(site.base_path):
        return site.root / "__outside_the_site__" / path.lstrip("/"), unquote(split.fragment)
    target = site.root / path[len(site.base_path) :]
    if path.endswith("/") or target.is_dir():
        target = target / "index.html"
    return target, unquote(split.fragment)


def _is_external(url: str) -> bool:
    split = urlsplit(url)
    return bool(split.netloc) or split.scheme in ("http", "https")


def test_internal_links_and_anchors_resolve(built_site: BuiltSite):
    problems = []
    checked = 0
    for page_path in built_site.pages():
        page = _parse(page_path)
        base = f"http://{SITE_HOST}{built_site.base_path}{built_site.url_of(page_path)}"
        for what, ref, _ in page.refs:
            if urlsplit(ref).scheme in NON_FETCHING_SCHEMES:
                continue
            target, fragment = _target_file(built_site, urljoin(base, ref))
            if target is None:
                continue
            checked += 1
            where = f"{page_path.relative_to(built_site.root)}: {what}={ref!r}"
            if not target.is_file():
                problems.append(f"{where}: no such file {target.relative_to(built_site.root)}")
            elif fragment and target.suffix == ".html" and fragment not in _parse(target).ids:
                problems.append(f"{where}: {target.relative_to(built_site.root)} has no id {fragment!r}")
    assert checked, "found no internal links at all: is the site empty?"
    assert not problems, f"{len(problems)} broken internal links:\n" + "\n".join(problems)


def test_no_asset_from_another_host(built_site: BuiltSite):
    problems = []
    for page_path in built_site.pages():
        page = _parse(page_path)
        where = page_path.relative_to(built_site.root)
        problems += [f"{where}: {what}={ref!r}" for what, ref, asset in page.refs if asset and _is_external(ref)]
        for css in page.css:
            problems += [f"{where}: inline CSS loads {url!r}" for url in _css_urls(css) if _is_external(url)]
    for sheet in sorted(built_site.root.rglob("*.css")):
        urls = _css_urls(sheet.read_text(encoding="utf-8", errors="replace"))
        problems += [f"{sheet.relative_to(built_site.root)}: loads {url!r}" for url in urls if _is_external(url)]
    assert not problems, "assets must be served by the site itself (vendor them under docs/assets/):\n" + "\n".join(
        problems
    )


def _css_urls(css: str) -> list[str]:
    return [(match.group(2) or match.group(4) or "").strip() for match in CSS_URL.finditer(css)]


def test_the_checks_see_broken_links_and_external_assets(tmp_path: Path):
    """The parser finds what the two tests above reject (so they cannot pass by seeing nothing)."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "index.html").write_text(
        '<h2 id="here">x</h2><a href="#here">ok</a><a href="../b/#nowhere">bad anchor</a>'
        '<a href="../missing/">missing</a><a href="https://example.org/">a click, fine</a>'
        '<script src="https://cdn.example.org/x.js"></script><link rel="stylesheet" href="//fonts.example/f.css">'
        "<div style=\"background: url('https://example.org/i.png')\"></div>",
        encoding="utf-8",
    )
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "index.html").write_text('<p id="there">y</p>', encoding="utf-8")
    site = BuiltSite(root=tmp_path, base_path="/", log="")
    page = _parse(tmp_path / "a" / "index.html")
    base = f"http://{SITE_HOST}/a/"
    resolved = {ref: _target_file(site, urljoin(base, ref)) for _, ref, _ in page.refs}
    assert resolved["#here"] == (tmp_path / "a" / "index.html", "here")
    assert resolved["../b/#nowhere"][1] not in _parse(tmp_path / "b" / "index.html").ids
    assert not resolved["../missing/"][0].is_file()
    assert resolved["https://example.org/"][0] is None
    external_assets = [ref for _, ref, asset in page.refs if asset and _is_external(ref)]
    assert external_assets == ["https://cdn.example.org/x.js", "//fonts.example/f.css"]
    assert [url for css in page.css for url in _css_urls(css)] == ["https://example.org/i.png"]
