"""Wide tables stack on a phone: each row becomes a card whose cells carry their column's name.

A table of five or more columns gets `data-stack`, and each body cell a `data-label` with its header's text;
`docs/assets/stylesheets/extra.css` shows such a table as usual on a wide screen and, below 45em, as one block per
row with the label before each value. Narrower tables only shrink there (the same stylesheet).
"""

import html
import re

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


def on_page_content(html_text: str, **_) -> str:
    return TABLE.sub(stack, html_text)
