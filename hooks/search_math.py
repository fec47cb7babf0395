"""Search shows math as text: `s_{t-1}` is indexed as "sₜ₋₁", `\\alpha_{ij}` as "αᵢⱼ", never as TeX source.

Material's search indexes a page's HTML, where arithmatex leaves the TeX (`\\(s_{t-1}\\)`) for KaTeX to render
in the browser; the result snippets showed it raw. Just before the search plugin reads a page, this hook gives
it a copy in which every arithmatex span or block is plain text (`math_as_text`); right after
(hooks/search_math_restore.py), the page gets its HTML back, so what a reader sees is unchanged. The same
index serves the site over http (search_index.json) and from disk (the offline plugin's search_index.js).
"""

import html
import re

from mkdocs.plugins import event_priority

ARITHMATEX = re.compile(r'<(span|div) class="arithmatex">(.*?)</\1>', re.S)
DELIMITERS = re.compile(r"^\s*(?:\\\(|\\\[|\$\$?)(.*?)(?:\\\)|\\\]|\$\$?)\s*$", re.S)
GREEK = "alpha beta gamma delta epsilon eta theta lambda mu pi rho sigma tau phi psi omega Delta Sigma Omega"
OPERATORS = (
    "varepsilon=ε sum=Σ prod=Π times=× cdot=· dots=… ldots=… cdots=⋯ top=T in=∈ to=→ rightarrow=→ leftarrow=← "
    "Rightarrow=⇒ iff=⇔ mid=| le=≤ leq=≤ ge=≥ geq=≥ neq=≠ approx=≈ infty=∞ odot=⊙ otimes=⊗ partial=∂ nabla=∇ "
    "sim=~ propto=∝ lVert=‖ rVert=‖ lvert=| rvert=| langle=⟨ rangle=⟩ bmod=mod"
)
SYMBOLS = dict(zip(GREEK.split(), "αβγδεηθλμπρστφψωΔΣΩ", strict=True))
SYMBOLS.update(pair.split("=", 1) for pair in OPERATORS.split())
SYMBOLS.update({"quad": " ", "qquad": " ", ",": " ", ";": " ", ":": " ", "!": "", " ": " ", "\\": " "})
SUB = dict(zip("0123456789+-=()aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ", strict=True))
SUP = dict(zip("0123456789+-=()abcdefghijklmnoprstuvwxyzHT", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴴᵀ", strict=True))
ARGUMENT = r"\{((?:[^{}]|\{[^{}]*\})*)\}"
DROPPED = r"\\(?:left|right|big|Big|bigg|Bigg|displaystyle|limits|begin\{\w+\*?\}|end\{\w+\*?\})"


def _group(text: str) -> str:
    """A fraction's or root's part, in parentheses unless it is one word or number (or the root of one)."""
    return text if re.fullmatch(r"√?[\w.]+", text) else f"({text})"


def _script(body: str, table: dict[str, str], mark: str) -> str:
    body = body.strip()
    if body and all(c in table for c in body):
        return "".join(table[c] for c in body)
    mark = "\x02" if mark == "_" else "\x03"  # put back at the end: a second pass must not read "_(" as a subscript
    return f"{mark}{body}" if len(body) == 1 else f"{mark}({body})"


def math_as_text(tex: str) -> str:
    """TeX as readable plain text: Greek and operators as Unicode, simple sub/superscripts as Unicode ones."""
    text = re.sub(DROPPED, "", tex)
    for _ in range(3):  # commands with arguments, innermost first
        text = re.sub(r"\\sqrt" + ARGUMENT, lambda m: "√" + _group(m[1]), text)
        text = re.sub(r"\\(?:[td]?frac)" + ARGUMENT + ARGUMENT, lambda m: f"{_group(m[1])}/{_group(m[2])}", text)
        text = re.sub(r"\\overrightarrow" + ARGUMENT, r"\1→", text)
        text = re.sub(r"\\overleftarrow" + ARGUMENT, r"\1←", text)
        text = re.sub(r"\\hat" + ARGUMENT, "\\1\u0302", text)
        text = re.sub(r"\\mathbb\{R\}", "ℝ", text)
        text = re.sub(r"\\(?:underbrace|overbrace)" + ARGUMENT, r"\1", text)
        text = re.sub(r"\\[a-zA-Z]+" + ARGUMENT, r"\1", text)  # \mathrm, \text, \operatorname, \texttt, ...
    text = re.sub(r"\\([a-zA-Z]+|.)", lambda m: SYMBOLS.get(m.group(1), m.group(1)), text)
    for _ in range(2):
        text = re.sub(r"_" + ARGUMENT + r"|_(\S)", lambda m: _script(m.group(1) or m.group(2), SUB, "_"), text)
        text = re.sub(r"\^" + ARGUMENT + r"|\^(\S)", lambda m: _script(m.group(1) or m.group(2), SUP, "^"), text)
    text = text.replace("&", " ").replace("{", "").replace("}", "").replace("\x02", "_").replace("\x03", "^")
    return re.sub(r"\s+", " ", text).strip()


def _as_text(match: re.Match) -> str:
    inner = DELIMITERS.match(tex := html.unescape(match.group(2)))
    return html.escape(math_as_text(inner.group(1) if inner else tex), quote=False)


ORIGINAL = "_html_before_search_math"
"""Where the page's own HTML waits while the search plugin reads the text copy (hooks/search_math_restore.py)."""


@event_priority(100)  # before the search plugin (priority 0) indexes the page
def on_page_context(context, page, **_):
    setattr(page, ORIGINAL, page.content)
    page.content = ARITHMATEX.sub(_as_text, page.content)
    return context
