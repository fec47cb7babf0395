"""Markdown extension `layout`: what the page's HTML needs for a phone, and solutions kept out of search.

Postprocessors on the page's HTML (after the raw HTML is back), changing markup only (what the copy button copies
and search indexes stays): `code_lines` writes each code line's indentation on its `pymdownx.highlight` line span
(``style="--indent:8"``: the stylesheet makes a wrapped line hang under its own text) and keeps flags and hyphenated
words whole (``<span class="nowrap">``); `stack_tables` gives a table of `STACK_FROM` columns or more `data-stack`
and each body cell a `data-label` (extra.css stacks it, one block per row, below 45em); each folded ``/// solution``
(`SOLUTION`) gets `data-search-exclude`, so a search result never shows the answer under its question.
"""

import html
import re

from markdown import Extension, Markdown
from markdown.postprocessors import Postprocessor

CODE = re.compile(r"(<code\b[^>]*>)(.*?)(</code>)", re.S)
LINE = re.compile(r'<span id="__span-\d+-\d+">')
TAG = re.compile(r"(<[^>]+>)")
UNBROKEN = re.compile(r"(?<![\w-])--?[A-Za-z][\w.-]*|\b[\w.]+(?:-[\w.]+)+")


def code_lines(html: str) -> str:
    """Each code line's indentation on its span; flags and hyphenated words kept whole. Code marked once stays as it
    is: mkdocstrings renders a docstring with these extensions, then its page renders the result again."""

    def indent(line: re.Match) -> str:  # how many spaces the line that the span starts begins with (tags skipped)
        end = line.string.find("\n", line.end())
        text = TAG.sub("", line.string[line.end() : end if end >= 0 else None])
        return f'{line[0][:-1]} style="--indent:{len(text) - len(text.lstrip(" "))}">'

    def mark(match: re.Match) -> str:
        if 'class="nowrap"' in match[2]:
            return match[0]
        parts = TAG.split(LINE.sub(indent, match[2]))  # text between tags (even indices); tags stay as they are
        parts[::2] = [UNBROKEN.sub(r'<span class="nowrap">\g<0></span>', text) for text in parts[::2]]
        return match[1] + "".join(parts) + match[3]

    return CODE.sub(mark, html)


TABLE = re.compile(r"<table>(.*?)</table>", re.S)
HEADER = re.compile(r"<th[^>]*>(.*?)</th>", re.S)
ROW = re.compile(r"<tr>(.*?)</tr>", re.S)
CELL = re.compile(r"<td(?=[\s>])")
STACK_FROM = 5


def stack_tables(html_text: str) -> str:
    """Every table of `STACK_FROM` columns or more, marked to stack on a phone: each body cell labelled with its
    header cell's text as an attribute value (tags dropped, entities and quotes escaped)."""

    def stack(table: re.Match) -> str:
        head, _, rows = table[1].partition("</thead>")
        labels = [html.escape(html.unescape(TAG.sub("", cell)).strip(), quote=True) for cell in HEADER.findall(head)]
        if len(labels) < STACK_FROM or not rows:
            return table[0]

        def labelled(row: re.Match) -> str:
            cells = iter(labels)
            return "<tr>" + CELL.sub(lambda m: f'<td data-label="{next(cells, "")}"', row[1]) + "</tr>"

        return f"<table data-stack>{head}</thead>{ROW.sub(labelled, rows)}</table>"

    return TABLE.sub(stack, html_text)


SOLUTION = re.compile(r'<details class="note">(\s*<summary>풀이</summary>)')


class _Layout(Postprocessor):
    def run(self, text: str) -> str:
        return stack_tables(SOLUTION.sub(r'<details class="note" data-search-exclude>\1', code_lines(text)))


class LayoutExtension(Extension):
    def extendMarkdown(self, md: Markdown) -> None:  # noqa: N802 (Python-Markdown's name)
        md.postprocessors.register(_Layout(md), "layout", 10)  # after the raw HTML is back (30) and excerpt links (15)


makeExtension = LayoutExtension  # noqa: N816 (Python-Markdown's name)
