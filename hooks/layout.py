"""Markdown extension `layout`: what the page's HTML needs for a phone, and solutions kept out of search.

Three postprocessors on the page's HTML (after Python-Markdown has put the raw HTML back), so that any engine that
renders Python-Markdown runs them:

* Code on a phone: a wrapped line keeps its indentation, and a shell flag is never split. `pymdownx.highlight`
  (`line_spans: __span` in mkdocs.yml) puts every line of a code block in its own `<span id="__span-B-L">`;
  `code_lines` writes the line's indentation on it (`style="--indent:8"`), and the stylesheet turns that into a
  hanging indent: a line too long for the box continues under its own text, 4 columns further in, instead of at
  column 0. In every `<code>` (blocks and inline), a flag such as `--epochs` or a hyphenated word such as
  `seq2seq-attention` goes in a `<span class="nowrap">`, so the line never breaks after its hyphens. Only markup
  changes: the text (what the copy button copies, and what search indexes) stays as it was.
* Wide tables stack on a phone: a table of five or more columns gets `data-stack`, and each body cell a
  `data-label` with its header's text; `docs/assets/stylesheets/extra.css` shows such a table as usual on a wide
  screen and, below 45em, as one block per row with the label before each value. Narrower tables only shrink there.
* Folded exercise solutions stay out of search: a search result must not show the answer under its question. Each
  `/// solution` block renders as `<details class="note"><summary>풀이</summary>...`; `hide_solutions` marks it
  `data-search-exclude` (Material's search skips such an element and everything inside it).
"""

import html
import re

from markdown import Extension, Markdown
from markdown.postprocessors import Postprocessor

CODE = re.compile(r"(<code\b[^>]*>)(.*?)(</code>)", re.S)
LINE = re.compile(r'<span id="__span-\d+-\d+">')
TAG = re.compile(r"(<[^>]+>)")
UNBROKEN = re.compile(r"(?<![\w-])--?[A-Za-z][\w.-]*|\b[\w.]+(?:-[\w.]+)+")


def _indent(code: str, start: int) -> int:
    """How many spaces the line that starts at `start` begins with (tags skipped)."""
    end = code.find("\n", start)
    text = TAG.sub("", code[start : end if end >= 0 else len(code)])
    return len(text) - len(text.lstrip(" "))


def _mark_lines(code: str) -> str:
    return LINE.sub(lambda m: f'{m.group(0)[:-1]} style="--indent:{_indent(code, m.end())}">', code)


def _keep_together(code: str) -> str:
    parts = TAG.split(code)
    for i in range(0, len(parts), 2):  # text between tags (even indices); tags stay as they are
        parts[i] = UNBROKEN.sub(lambda m: f'<span class="nowrap">{m.group(0)}</span>', parts[i])
    return "".join(parts)


def code_lines(html: str) -> str:
    """Each code line's indentation on its span; flags and hyphenated words kept whole. Code marked once stays as it
    is: mkdocstrings renders a docstring with these extensions, then its page renders the result again."""

    def mark(match: re.Match) -> str:
        if 'class="nowrap"' in match.group(2):
            return match.group(0)
        return match.group(1) + _keep_together(_mark_lines(match.group(2))) + match.group(3)

    return CODE.sub(mark, html)


TABLE = re.compile(r"<table>(.*?)</table>", re.S)
HEADER = re.compile(r"<th[^>]*>(.*?)</th>", re.S)
ROW = re.compile(r"<tr>(.*?)</tr>", re.S)
CELL = re.compile(r"<td(?=[\s>])")
STACK_FROM = 5


def label(cell_html: str) -> str:
    """A header cell's text as an attribute value: tags dropped, entities and quotes escaped."""
    return html.escape(html.unescape(re.sub(r"<[^>]+>", "", cell_html)).strip(), quote=True)


def stack(match: re.Match) -> str:
    body = match.group(1)
    head, _, rows = body.partition("</thead>")
    labels = [label(cell) for cell in HEADER.findall(head)]
    if len(labels) < STACK_FROM or not rows:
        return match.group(0)

    def labelled(row: re.Match) -> str:
        cells = iter(labels)
        return "<tr>" + CELL.sub(lambda m: f'<td data-label="{next(cells, "")}"', row.group(1)) + "</tr>"

    return f"<table data-stack>{head}</thead>{ROW.sub(labelled, rows)}</table>"


def stack_tables(html_text: str) -> str:
    """Every table of `STACK_FROM` columns or more, marked to stack on a phone."""
    return TABLE.sub(stack, html_text)


SOLUTION = re.compile(r'<details class="note">(\s*<summary>풀이</summary>)')


def hide_solutions(html: str) -> str:
    """Every folded solution marked to stay out of search."""
    return SOLUTION.sub(r'<details class="note" data-search-exclude>\1', html)


class _Layout(Postprocessor):
    def run(self, text: str) -> str:
        return stack_tables(hide_solutions(code_lines(text)))


class LayoutExtension(Extension):
    def extendMarkdown(self, md: Markdown) -> None:  # noqa: N802 (Python-Markdown's name)
        md.postprocessors.register(_Layout(md), "layout", 10)  # after the raw HTML is back (30) and excerpt links (15)


def makeExtension(**kwargs) -> LayoutExtension:  # noqa: N802
    return LayoutExtension(**kwargs)
