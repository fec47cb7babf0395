"""Every shape tuple a page's prose states is one its excerpts, fences or traces produce.

A shape tuple is a parenthesised list of shape letters and sizes, ``(B, T, S)``, ``(B, 1, S, H)``, ``(2, 5)``
(the letters of docs/notation.md; at least one letter). A tuple in the prose (outside fences) must also appear in
what the page runs or shows: its fences (code and their shape comments, which the fences assert), the source
sections it excerpts (whose shape comments tests/site/test_shape_comments.py checks against a traced run) and, on the
pages the stepper covers, the recorded trace (docs/assets/traces/). The reference pages that define the notation
(`REFERENCE`) are held to the shapes the package's source states anywhere. So a page cannot teach one set of
shapes while its code has another.
"""

import json
import re
from pathlib import Path

import pytest
import snippets  # hooks/snippets.py: the snippet syntax, read in one place
from markdown_it import MarkdownIt
from support import ROOT

DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
TRACES = sorted((DOCS / "assets" / "traces").glob("*.json"))

ELEMENT = r"\s*(?:\d*(?:B|T|S|H|V|E|Hq|Hk|Hp|V_src)|\d+)\s*"
TUPLE = re.compile(rf"(?<![\w.])\(({ELEMENT}(?:,{ELEMENT})+)\)")  # not a call: Linear(Hq, H), F(S, T)
REFERENCE = {"notation.md", "index.md", "glossary.md", "model-training/index.md"}
DESCRIBES = {
    "live.md": ["src/seq2seq_attention/translation/export.py"],  # the exported graphs' inputs and outputs
    "performance/index.md": ["benchmarks/fused.py", "benchmarks/run.py"],  # the step's tensors and the FLOP model
    "performance/profile.md": ["benchmarks/fused.py"],  # the hand-fused step
    "appendix/performance.md": ["benchmarks/fused.py", "benchmarks/run.py"],  # the sweep's tensors, the fused step
}
"""Pages that describe code they do not excerpt: the shape comments of that code count as the page's."""
LINK = re.compile(r"\]\(([\w./-]+\.md)(?:#[\w-]+)?\)")


def normal(inside: str) -> str:
    return "(" + ", ".join(part.strip() for part in inside.split(",")) + ")"


ANNOTATION = re.compile(r"\[Tensor, \"([^\"]+)\"\]")  # jaxtyping's `Float[Tensor, "B S H"]` is the shape (B, S, H)


def tuples(text: str) -> set[str]:
    text += "\n".join(f"({', '.join(m.group(1).split())})" for m in ANNOTATION.finditer(text))
    return {normal(m.group(1)) for m in TUPLE.finditer(text) if re.search(r"[A-Z]", m.group(1))}


def section(path: str, name: str | None) -> str:
    file = ROOT / path
    if not file.is_file():
        return ""
    if not name:
        return file.read_text(encoding="utf-8")
    return snippets.section_text(file, name) or ""


def split(text: str) -> tuple[list[tuple[int, str]], str]:
    """(prose lines with their numbers, everything the page runs or includes as one text)."""
    skipped: set[int] = set()
    code = []
    for token in MarkdownIt("commonmark").parse(text):
        if token.type in ("fence", "code_block") and token.map:
            skipped.update(range(*token.map))
            code.append(token.content)
    code += [section(path, name) for path, name in snippets.includes(text)]
    lines = [(i + 1, line) for i, line in enumerate(text.splitlines()) if i not in skipped]
    return lines, "\n".join(code)


def traced(page: str) -> str:
    """The recorded trace's text on a page the stepper covers."""
    texts = []
    for path in TRACES:
        trace = json.loads(path.read_text(encoding="utf-8"))
        if f"docs/{page}" in [entry for entry in _pages(trace) if isinstance(entry, str)]:
            texts.append(path.read_text(encoding="utf-8"))
    return "\n".join(texts)


def _pages(trace: dict) -> list:
    pages = trace.get("pages", [])
    return list(pages) if isinstance(pages, list) else []


def package_shapes() -> set[str]:
    return {t for path in sorted((ROOT / "src").rglob("*.py")) for t in tuples(path.read_text(encoding="utf-8"))}


def produced_by(page: str, text: str) -> set[str]:
    _, code = split(text)
    described = "\n".join(section(path, None) for path in DESCRIBES.get(page, []))
    return tuples(code) | tuples(traced(page)) | tuples(described)


def unproduced(page: str, text: str, known: set[str] | None = None) -> list[str]:
    """Shapes in the prose that the page does not produce; a line that links another page (a table of corrections
    pointing to where each is shown) may also state that page's shapes."""
    lines, _ = split(text)
    produced = produced_by(page, text) | (known or set())
    problems = []
    for number, line in lines:
        linked = set()
        for target in LINK.findall(line):
            path = (DOCS / page).parent / target
            if path.resolve().is_file() and DOCS in path.resolve().parents:
                other = str(path.resolve().relative_to(DOCS))
                linked |= produced_by(other, path.read_text(encoding="utf-8"))
        for shape in sorted(tuples(line) - produced - linked):
            problems.append(
                f"{page}:{number}: {shape} is in the prose, but no excerpt, fence or trace of the page produces it"
            )
    return problems


@pytest.mark.parametrize("path", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_prose_shapes_are_produced_by_the_page(path: Path):
    page = str(path.relative_to(DOCS))
    known = package_shapes() if page in REFERENCE else None
    problems = unproduced(page, path.read_text(encoding="utf-8"), known)
    assert not problems, "\n".join(problems)


def test_a_planted_shape_is_found_and_a_fenced_or_excerpted_one_is_not():
    page = "x.md"
    fenced = "점수는 `(B, T, S)`입니다.\n\n```python\nscores = f(x)  # (B, T, S)\n```\n"
    assert unproduced(page, fenced) == []
    planted = fenced + "\n튜토리얼처럼 `(B, S, 1)`이 됩니다.\n"
    assert unproduced(page, planted) == [
        "x.md:7: (B, S, 1) is in the prose, but no excerpt, fence or trace of the page produces it"
    ]
    excerpted = '```{.python notest}\n--8<-- "src/seq2seq_attention/model/attention.py:score"\n```\n\n`(B, T, 1, H)`\n'
    assert unproduced(page, excerpted) == []
    assert tuples("$(-1, 1)$, (0, 1), `(2, 5)`, (B, 1, S, H)") == {"(B, 1, S, H)"}


def test_the_core_page_teaches_the_four_dimensional_shapes_and_the_errata_keeps_the_tutorials():
    """bahdanau/attention.md walks through the code it excerpts ((B, T, 1, H) + (B, 1, S, H) -> (B, T, S),
    squeeze(-1)); the tutorial's three-dimensional variant ((B, S, 1), squeeze(2)) is only in the errata."""
    core = (DOCS / "bahdanau/attention.md").read_text(encoding="utf-8")
    lines, _ = split(core)
    prose = "\n".join(line for _, line in lines)
    assert {"(B, T, 1, H)", "(B, 1, S, H)", "(B, T, S, H)", "(B, T, S)"} <= tuples(prose)
    assert "(B, S, 1)" not in tuples(prose) and "squeeze(2)`:" not in prose
    errata_lines, _ = split((DOCS / "errata.md").read_text(encoding="utf-8"))
    errata = "\n".join(line for _, line in errata_lines)
    assert "튜토리얼의 판" in errata and "(B, S, 1)" in tuples(errata)
