"""hooks/layout.py: a table of five or more columns carries what a phone needs to stack it, one card per row; at
390 px those cards are as wide as the text column (docs/assets/stylesheets/extra.css)."""

import re

import layout  # hooks/layout.py (hooks/ is on the path like the other hook tests)
from selenium import webdriver
from site_support import PHONE_WIDTH, BuiltSite, open_page, reset_browser, wait_until_settled

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


CARDS_JS = r"""
const inner = (box) => {  // the width of an element's content box
  const style = getComputedStyle(box);
  return box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
};
return [...document.querySelectorAll("article table[data-stack] tbody tr")].filter((row) => row.offsetParent !== null)
  .map((row) => [Math.round(row.getBoundingClientRect().width),
                 Math.round(inner(row.closest(".md-typeset__scrollwrap").parentElement)),
                 row.closest("table").textContent.trim().replace(/\s+/g, " ").slice(0, 40)]);
"""
"""Each visible card (a row of a stacked table): its width, the width of the text column it stands in (the article,
or the box of an admonition), the start of its table's text."""


def test_stacked_cards_take_the_width_of_the_column_on_a_phone(session_browser: webdriver.Chrome, site_server: str,
                                                                built_site: BuiltSite):  # fmt: skip
    """A card is as wide as the text column: Material's box around a table is an inline-block as wide as the table
    needs, so a stacked table's cards took as little as 225 px of a 343 px column."""
    driver = reset_browser(session_browser, PHONE_WIDTH, 900)
    pages = [page for page in built_site.pages() if "<table data-stack>" in page.read_text(encoding="utf-8")]
    cards = []
    for page in pages:
        open_page(driver, site_server + built_site.url_of(page))
        wait_until_settled(driver)
        cards += [(built_site.url_of(page), *card) for card in driver.execute_script(CARDS_JS)]
    driver.set_window_size(1280, 1000)
    assert len({table for _, _, _, table in cards}) >= 8, cards
    narrow = {(page, width, column, table) for page, width, column, table in cards if width < column - 1}
    assert narrow == set(), (
        "stacked cards narrower than the column at 390 px (page, card, column, table):\n"
        + "\n".join(map(str, sorted(narrow)))
    )
