"""What a page shows beyond plain Markdown comes from Python-Markdown extensions (mkdocs.yml's `markdown_extensions`),
so an engine that renders Python-Markdown and runs no MkDocs hook (Zensical) shows it too.

Here a page is rendered by Python-Markdown alone, with the extensions and options mkdocs.yml names, the page handed
over the way Zensical hands it (its rendering-context preprocessor, which holds the page's path and URL), and no
MkDocs at all; each feature must show as often as in the MkDocs build. The known differences of such an engine, with
their reasons:

1. the stamp has no notebook link: a page's notebook is a file a MkDocs hook adds to the whole site (`on_files` in
   hooks/fence_record.py);
2. search results show math as TeX: the text copy is made for MkDocs' search plugin (hooks/search_math.py);
3. `{{ value }}` is the engine's own macros' to render (Zensical has mkdocs-macros' `define_env` interface; a bare
   Python-Markdown render leaves it).
"""

import re
from pathlib import Path
from types import SimpleNamespace

import markdown
import pytest
import yaml
from markdown.preprocessors import Preprocessor
from site_support import ROOT, BuiltSite, _AnyTagLoader

PAGES = ["bahdanau/decoder.md", "attention/scores.md", "appendix/recipe-final.md", "index.md", "seq2seq/training.md"]
FEATURES = {
    "recorded outputs": 'class="fence-output',
    "verification stamp": 'class="fence-record"',
    "excerpt titles": '<span class="filename">',
    "steppers": "data-stepper=",
    "the stepper's trace": 'id="__stepper-trace"',
    "phone code lines": 'style="--indent:',
    "flags kept whole": 'class="nowrap"',
    "stacked tables": "<table data-stack>",
    "solutions out of search": "data-search-exclude",
}


class ContextPreprocessor(Preprocessor):
    """What Zensical registers on the Markdown instance it renders a page with (zensical.extensions.context)."""

    def __init__(self, md: markdown.Markdown, page: SimpleNamespace) -> None:
        super().__init__(md)
        self.page = page

    def run(self, lines: list[str]) -> list[str]:
        return lines


class Context(markdown.Extension):
    def __init__(self, page: SimpleNamespace) -> None:
        super().__init__()
        self.page = page

    def extendMarkdown(self, md: markdown.Markdown) -> None:  # noqa: N802
        md.preprocessors.register(ContextPreprocessor(md, self.page), "rendering_context", 0)


def render(page: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """`page` (under docs/) rendered by Python-Markdown with mkdocs.yml's extensions (no repository address)."""
    monkeypatch.chdir(ROOT)  # snippets' base_path and the extensions' files are relative to the repository
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_AnyTagLoader)
    names, options = [], {}
    for entry in config["markdown_extensions"]:
        name, settings = next(iter(entry.items())) if isinstance(entry, dict) else (entry, {})
        names.append(name)
        # `!ENV [REPO_URL, ""]` read as a plain list: the local build's value, none
        options[name] = {key: "" if isinstance(value, list) and value[:1] == ["REPO_URL"] else value
                         for key, value in (settings or {}).items()}  # fmt: skip
    url = (
        str(Path(page).with_suffix(".html")) if Path(page).name != "index.md" else str(Path(page).parent / "index.html")
    )
    context = Context(SimpleNamespace(path=page, url=url.removeprefix("./")))
    md = markdown.Markdown(extensions=[*names, context], extension_configs=options)
    return md.convert((ROOT / "docs" / page).read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", PAGES)
def test_a_plain_python_markdown_render_shows_what_the_mkdocs_build_shows(
    built_site: BuiltSite, page: str, monkeypatch: pytest.MonkeyPatch
):
    plain = render(page, monkeypatch)
    built = (built_site.root / Path(page).with_suffix(".html")).read_text(encoding="utf-8")
    article = built.split('<article class="md-content__inner', 1)[1].split("</article>", 1)[0]
    differences = {
        feature: (plain.count(marker), article.count(marker))
        for feature, marker in FEATURES.items()
        if plain.count(marker) != article.count(marker)
    }
    assert not differences, f"{page}: (plain render, MkDocs build) differ: {differences}"
    titles = re.findall(r'<span class="filename">(.*?)</span>', plain)
    assert titles == re.findall(r'<span class="filename">(.*?)</span>', article)
    stamps = [re.search(r'<p class="fence-record">(.*?)</p>', html) for html in (plain, article)]
    if stamps[1]:  # known difference 1: the MkDocs build's stamp links the page's notebook, a plain render's does not
        assert "노트북으로 받기" in stamps[1][1] and "노트북으로 받기" not in stamps[0][1]


def test_every_page_feature_shows_on_some_page(built_site: BuiltSite, monkeypatch: pytest.MonkeyPatch):
    """The pages above between them show every feature (else the comparison above proves nothing for it)."""
    shown = "".join(render(page, monkeypatch) for page in PAGES)
    assert [feature for feature, marker in FEATURES.items() if marker not in shown] == []
