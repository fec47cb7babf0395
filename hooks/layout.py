"""Markdown extension `layout`: what the page's HTML needs for a phone, and solutions kept out of search.

Postprocessors on the page's HTML (after the raw HTML is back), changing markup only (what the copy button copies
and search indexes stays): `code_lines` writes each code line's indentation on its `pymdownx.highlight` line span
(``style="--indent:8"``: the stylesheet makes a wrapped line hang under its own text) and keeps flags and hyphenated
words whole (``<span class="nowrap">``); `stack_tables` gives a table of `STACK_FROM` columns or more `data-stack`
and each body cell a `data-label` (extra.css stacks it, one block per row, below 45em); `hide_solutions` marks each
folded ``/// solution`` `data-search-exclude`, so a search result never shows the answer under its question.
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
