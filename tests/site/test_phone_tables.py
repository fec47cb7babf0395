"""hooks/layout.py: a table of five or more columns carries what a phone needs to stack it, one card per row."""

import re

import layout  # hooks/layout.py (hooks/ is on the path like the other hook tests)
from site_support import BuiltSite

WIDE = (
    "<table>\n<thead>\n<tr>\n<th>모델</th>\n<th>점수</th>\n<th>매개변수</th>\n<th>에폭</th>\n"
    '<th style="text-align: right;">BLEU <code>"x"</code></th>\n</tr>\n</thead>\n<tbody>\n'
    "<tr>\n<td>내적</td>\n<td><code>dot</code></td>\n<td>934,247</td>\n<td>30</td>\n"
    '<td style="text-align: right;">23.62</td>\n</tr>\n'
    "</tbody>\n</table>"
)


def test_a_wide_table_gets_its_labels_and_a_narrow_one_is_left_alone():
    out = layout.stack_tables(WIDE)
    assert out.startswith("<table data-stack>")
    assert re.findall(r'data-label="([^"]*)"', out) == ["모델", "점수", "매개변수", "에폭", "BLEU &quot;x&quot;"]
    assert '<td data-label="BLEU &quot;x&quot;" style="text-align: right;">23.62</td>' in out
    narrow = (
        "<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n"
        "<tbody>\n<tr>\n<td>1</td>\n<td>2</td>\n</tr>\n</tbody>\n</table>"
    )
    assert layout.stack_tables(narrow) == narrow


def test_every_wide_table_of_the_site_is_labelled(built_site: BuiltSite):
    checked = 0
    for page in built_site.pages():
        for table in re.findall(r"<table[^>]*>.*?</table>", page.read_text(encoding="utf-8"), re.S):
            columns = len(re.findall(r"<th[\s>]", table.split("</thead>")[0]))
            if columns >= layout.STACK_FROM and "<tbody>" in table:
                assert table.startswith("<table data-stack>"), page
                cells = re.findall(r"<td[\s>][^>]*", table)
                assert all("data-label=" in cell for cell in cells), page
                checked += 1
    assert checked >= 10
