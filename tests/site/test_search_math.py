"""Search results show math as text, never as TeX source (hooks/search_math.py), over http and from disk.

The built site's search index (search_index.json, read over http, and the offline plugin's search_index.js,
read from disk) is compared with the pages themselves: no formula a page shows appears in the index as its TeX
(`\\(s_{t-1}\\)`), and each appears as the hook's plain text (sₜ₋₁). The pages keep their TeX for KaTeX.
"""

import html
import json
import re

import pytest
import search_math  # hooks/search_math.py (on pytest's path: pyproject.toml)
from hypothesis import given
from hypothesis import strategies as st
from site_support import BuiltSite

ARITHMATEX = re.compile(r'<(span|div) class="arithmatex">(.*?)</\1>', re.S)
EXCLUDED = re.compile(r"<details[^>]*\bdata-search-exclude\b[^>]*>.*?</details>", re.S)
"""An element search leaves out, with its formulas (a folded exercise solution: hooks/layout.py)."""


def _indexes(built_site: BuiltSite) -> dict[str, dict]:
    folder = built_site.root / "search"
    script = (folder / "search_index.js").read_text(encoding="utf-8")
    assert script.startswith("var __index = "), script[:40]
    return {
        "search_index.json (http)": json.loads((folder / "search_index.json").read_text(encoding="utf-8")),
        "search_index.js (from disk)": json.loads(script.removeprefix("var __index = ")),
    }


def _formulas(built_site: BuiltSite) -> dict[str, set[str]]:
    """Every formula of every page that search reads (not inside a folded solution), as the TeX (with its
    delimiters) the page carries for KaTeX."""
    found = {}
    for page in built_site.pages():
        searched = EXCLUDED.sub("", page.read_text(encoding="utf-8"))
        tex = {html.unescape(m.group(2)).strip() for m in ARITHMATEX.finditer(searched)}
        if tex:
            found[page.relative_to(built_site.root).as_posix()] = tex
    return found


def test_search_index_has_no_tex(built_site: BuiltSite):
    formulas = _formulas(built_site)
    assert sum(map(len, formulas.values())) > 100, "the pages have (almost) no math: nothing was checked"
    math_as_text = search_math.math_as_text
    for name, index in _indexes(built_site).items():
        by_page: dict[str, str] = {}
        for doc in index["docs"]:
            page = doc["location"].split("#")[0]
            by_page[page] = by_page.get(page, "") + " " + html.unescape(f"{doc['title']} {doc['text']}")
        problems = []
        for page, tex in formulas.items():
            text = by_page.get(page, "")
            for formula in tex:
                if formula in text:
                    problems.append(f"{page}: TeX in the index: {formula[:60]!r}")
                inner = re.sub(r"^\\[(\[]|\\[)\]]$", "", formula).strip()
                if math_as_text(inner) not in text:
                    problems.append(f"{page}: {math_as_text(inner)!r} (for {formula[:40]!r}) is not in the index")
        assert not problems, f"{name}:\n" + "\n".join(problems[:40])


def test_math_reads_as_text_in_titles_and_snippets(built_site: BuiltSite):
    index = _indexes(built_site)["search_index.json (http)"]
    titles = {doc["title"] for doc in index["docs"]}
    text = " ".join(doc["text"] for doc in index["docs"])
    assert "쿼리는 sₜ₋₁" in titles, sorted(t for t in titles if "쿼리" in t)
    for shown in ("αₜⱼ", "vₐᵀ tanh(Wₐ sₜ₋₁ + Uₐ hⱼ)", "√H"):
        assert shown in text, shown


@pytest.mark.parametrize(
    ("tex", "text"),
    [
        (r"s_{t-1}", "sₜ₋₁"),
        (r"\alpha_{ij}", "αᵢⱼ"),
        (r"v_a^\top \tanh\left(W_a\, s_{t-1} + U_a\, h_j\right)", "vₐᵀ tanh(Wₐ sₜ₋₁ + Uₐ hⱼ)"),
        (r"\frac{1}{\sqrt{H}}", "1/√H"),
        (r"p(y_t \mid y_{<t}, x)", "p(yₜ | y_(<t), x)"),
        (r"\mathbb{R}^{B \times S}", "ℝ^(B × S)"),
        (r"\text{평가용} \iff \mathrm{crc32}(x) \bmod 10 = 0", "평가용 ⇔ crc32(x) mod 10 = 0"),
    ],
)
def test_math_as_text(tex: str, text: str):
    assert search_math.math_as_text(tex) == text


TEX_PIECES = st.sampled_from(
    [r"\alpha", r"\sum_{j=1}^{S}", r"h_j", r"s_{t-1}", r"\frac{a}{b}", r"\sqrt{d_k}", r"\left(", r"\right)", "x^2"]
    + [r"\mathrm{softmax}", r"\tanh", r"\,", r"\;", r"\top", r"\hat{y}_t", r"\overrightarrow{h}", "+", " ", "&", r"\\"]
)


@given(st.lists(TEX_PIECES, max_size=12))
def test_no_tex_survives(pieces: list[str]):
    """Whatever the formula is built from, its text has no command, no braces and no `_{`/`^{` left."""
    text = search_math.math_as_text("".join(pieces))
    assert "\\" not in text and "{" not in text and "}" not in text, text
