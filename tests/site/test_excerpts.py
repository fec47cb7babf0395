"""Excerpts and imports: every section in src/ is on a page, and a page imports each name from one place."""

import ast
import html
import os
import re
from pathlib import Path

import excerpts  # hooks/excerpts.py (hooks/ is on pytest's path: pyproject.toml)
import pytest
import snippets  # hooks/snippets.py: the snippet syntax, read in one place
from support import ROOT

import seq2seq_attention

SRC = ROOT / "src" / "seq2seq_attention"
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```(?:python|\{\.python[^}]*\})\n(.*?)^```", re.M | re.S)


def _sections() -> set[str]:
    return {
        f"{path.relative_to(ROOT)}:{name}"
        for path in SRC.rglob("*.py")
        for name in snippets.marks(path.read_text(encoding="utf-8"))
    }


def _included(pages: list[Path]) -> set[str]:
    return {
        f"{path}:{name}"
        for page in pages
        for path, name in snippets.includes(page.read_text(encoding="utf-8"))
        if path.startswith("src/") and path.endswith(".py") and name
    }


def test_every_excerpt_section_in_src_is_included_by_a_page():
    pages = sorted(DOCS.rglob("*.md"))
    assert sorted(_sections() - _included(pages)) == []


def test_the_section_check_sees_a_dead_section():
    pages = [p for p in DOCS.rglob("*.md") if "model/tensors.py:mask" not in p.read_text(encoding="utf-8")]
    assert "src/seq2seq_attention/model/tensors.py:mask" in _sections() - _included(pages)


def _defined(module: str) -> set[str]:
    """The names a module defines at its top level (functions, classes, assignments), not those it imports."""
    path = SRC / (module.removeprefix("seq2seq_attention.").replace(".", "/") + ".py")
    if not path.is_file():
        path = path.with_suffix("") / "__init__.py"
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {target.id for target in node.targets if isinstance(target, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def import_problems(code: str) -> list[str]:
    """Imports from the package that a reader following them would not land on the definition with.

    A name the package exports (`seq2seq_attention.__all__`) is imported from `seq2seq_attention`;
    any other name from the module that defines it, never through a module that only imports it.
    """
    exported = set(seq2seq_attention.__all__)
    try:
        tree = ast.parse(code)
    except SyntaxError:  # a notest fence that shows something other than Python (a traceback, a wrong line)
        return []
    problems = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "seq2seq_attention"):
            continue
        for name in (alias.name for alias in node.names):
            if node.module == "seq2seq_attention" and name not in exported:
                problems.append(f"{name} is not exported by seq2seq_attention")
            elif node.module != "seq2seq_attention" and name in exported:
                problems.append(f"{name}: import it from seq2seq_attention, not {node.module}")
            elif node.module != "seq2seq_attention" and name not in _defined(node.module):
                problems.append(f"{name} is not defined in {node.module}")
    return problems


@pytest.mark.parametrize("page", sorted(DOCS.rglob("*.md")), ids=lambda p: str(p.relative_to(DOCS)))
def test_pages_import_each_name_from_one_place(page: Path):
    problems = [
        problem
        for fence in FENCE.findall(page.read_text(encoding="utf-8"))
        if not fence.lstrip().startswith("--8<--")
        for problem in import_problems(fence)
    ]
    assert problems == []


def test_the_import_check_sees_a_re_export_and_an_exported_name_from_its_module():
    assert import_problems("from seq2seq_attention.translation.corpus import Vocabulary") == [
        "Vocabulary: import it from seq2seq_attention, not seq2seq_attention.translation.corpus"
    ]
    assert import_problems("from seq2seq_attention.translation.corpus import TranslationDataset, Pair") == []
    assert import_problems("from seq2seq_attention.translation.corpus import checksum_split") == [
        "checksum_split is not defined in seq2seq_attention.translation.corpus"
    ]
    assert import_problems("from seq2seq_attention import build_model, TrainConfig") == [
        "TrainConfig is not exported by seq2seq_attention"
    ]


@pytest.mark.parametrize("page", sorted(DOCS.rglob("*.md")), ids=lambda p: str(p.relative_to(DOCS)))
def test_no_excerpt_title_is_typed_by_hand(page: Path):
    """`hooks/excerpts.py` names every excerpt from its section; a typed title could only drift from the code."""
    typed = [
        match["options"]
        for match in snippets.EXCERPT.finditer(page.read_text(encoding="utf-8"))
        if excerpts.is_source_excerpt(match) and "title=" in match["options"]
    ]
    assert typed == []


def test_titles_name_what_the_section_defines_and_links_land_on_its_lines():
    path = "src/seq2seq_attention/model/attention.py"
    assert excerpts.excerpt_title(path, "project_keys") == f"{path} · BahdanauAttention.project_keys"
    scores = "src/seq2seq_attention/model/scores.py"
    assert excerpts.excerpt_title(scores, "registry") == f"{scores} · SCORES, register_score"
    assert excerpts.section_names("src/seq2seq_attention/model/classifier.py", "init").endswith("__init__ (일부)")
    assert excerpts.section_names("src/seq2seq_attention/core/batching.py", "pad") == "collate, pad_sequences, Batch"
    # `@checked(...)` stands above the start marker, outside the excerpt: the section still holds the whole function
    assert excerpts.section_names("src/seq2seq_attention/core/split.py", "split") == "checksum_split"
    evaluate = "src/seq2seq_attention/translation/evaluate.py"
    assert excerpts.section_names(evaluate, "bootstrap") == "bootstrap_interval, resampled_bleu"
    first, last = excerpts.section_lines(path, "project_keys")
    lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
    assert lines[first - 1].strip().startswith("def project_keys(") and lines[first - 2].endswith(
        "[start:project_keys]"
    )
    assert lines[last].strip() == "" or lines[last].endswith("[end:project_keys]")
    url = excerpts.line_url("https://example.invalid/o/r/", path, "project_keys")
    assert re.fullmatch(rf"https://example\.invalid/o/r/blob/(\w+)/{path}#L{first}-L{last}", url)
    with pytest.raises(Exception, match="no section 'nowhere'"):
        excerpts.section_lines(path, "nowhere")


def _filenames(page: Path) -> list[str]:
    return re.findall(r'<span class="filename">(.*?)</span>', page.read_text(encoding="utf-8"))


def test_a_build_without_a_repository_address_shows_titles_and_no_links(built_site):
    if os.environ.get("REPO_URL"):
        pytest.skip("REPO_URL is set: this build has links (the next test checks them)")
    titles = _filenames(built_site.root / "bahdanau" / "attention.html")
    for name in ("Attention.forward", "BahdanauAttention.score"):  # the shared forward, then Bahdanau's score
        assert any(title.startswith(f"src/seq2seq_attention/model/attention.py · {name}") for title in titles)
    assert not any("<a " in title for title in titles)
    assert 'class="md-source"' not in (built_site.root / "index.html").read_text(encoding="utf-8")


def test_a_build_with_a_repository_address_links_the_header_and_every_excerpt(site_with_repository_links):
    repository = "https://example.invalid/someone/seq2seq-attention"  # REPO_URL of that build (tests/conftest.py)
    site = site_with_repository_links.root
    home = (site / "index.html").read_text(encoding="utf-8")
    assert f'<a href="{repository}" title="' in home and 'class="md-source"' in home
    assert 'data-md-component="source"' not in home  # the page asks no other host for stars and forks
    titles = _filenames(site / "bahdanau" / "attention.html")
    assert titles and all(title.startswith(f'<a href="{repository}/blob/') for title in titles)
    first, last = excerpts.section_lines("src/seq2seq_attention/model/attention.py", "forward")
    assert any(f"src/seq2seq_attention/model/attention.py#L{first}-L{last}" in title for title in titles)


LISTING_PAGE = DOCS / "bahdanau" / "index.md"
LISTING_LABEL = re.compile(r'<span class="c1">(# [\w.]+\.py · [^<]*)</span>')
"""A listing's part label, ``# file · names`` (the code's own comments have no file name and dot)."""


def _listing_parts() -> list[tuple[str, str]]:
    (listing,) = snippets.LISTING.finditer(LISTING_PAGE.read_text(encoding="utf-8"))
    return excerpts.listing_parts(listing["body"])


def _listing_html(site: Path) -> str:
    """The HTML of the chapter 4 listing's block (from its title to the end of its code)."""
    page = (site / "bahdanau" / "index.html").read_text(encoding="utf-8")
    start = page.index('<span class="filename">', page.index('id="listing"'))
    return page[start : page.index("</pre>", start)]


def test_a_listing_names_its_folder_and_each_part():
    parts = _listing_parts()
    assert len(parts) == 6 and parts[0] == ("src/seq2seq_attention/model/attention.py", "init")
    folder, title, labels = excerpts.listing_titles(parts)
    assert folder == "src/seq2seq_attention/model"
    assert title == "src/seq2seq_attention/model/ · attention.py, decoders.py"
    assert labels[0] == "attention.py · BahdanauAttention.__init__"  # the two __init__ told apart by their class
    assert labels[4] == "decoders.py · AttnDecoderRNN.__init__"
    assert labels == [f"{path.rsplit('/', 1)[1]} · {excerpts.section_names(path, name)}" for path, name in parts]
    assert (
        excerpts.listing_parts('--8<-- "src/seq2seq_attention/model/attention.py:init"\n--8<-- "README.md"\n') is None
    )


def test_a_built_listing_shows_its_title_and_a_label_above_each_part(built_site):
    if os.environ.get("REPO_URL"):
        pytest.skip("REPO_URL is set: this build has links (the next test checks them)")
    block = _listing_html(built_site.root)
    _, title, labels = excerpts.listing_titles(_listing_parts())
    assert block.startswith(f'<span class="filename">{title}</span>')
    assert LISTING_LABEL.findall(block) == [f"# {label}" for label in labels]
    code = re.sub(r"<[^>]+>", "", block)
    for label, (path, name) in zip(labels, _listing_parts(), strict=True):  # each label stands right above its code
        first, _ = excerpts.section_lines(path, name)
        first_line = (ROOT / path).read_text(encoding="utf-8").splitlines()[first - 1].strip()
        assert f"# {label}\n{first_line}" in "\n".join(line.strip() for line in html.unescape(code).splitlines())


def test_a_built_listing_links_its_title_to_the_folder_and_each_label_to_its_lines(site_with_repository_links):
    repository = "https://example.invalid/someone/seq2seq-attention"  # REPO_URL of that build (tests/conftest.py)
    block = _listing_html(site_with_repository_links.root)
    folder, title, _ = excerpts.listing_titles(_listing_parts())
    assert re.match(
        rf'<span class="filename"><a href="{repository}/tree/\w+/{folder}" title="[^"]+">{title}</a>', block
    )
    links = re.findall(r'<span class="c1"><a href="([^"]+)"', block)
    wanted = []
    for path, name in _listing_parts():
        first, last = excerpts.section_lines(path, name)
        wanted.append(rf"{repository}/blob/\w+/{path}#L{first}-L{last}")
    assert len(links) == len(wanted) and all(re.fullmatch(w, link) for w, link in zip(wanted, links, strict=True))
