"""Folded exercise solutions stay out of search: a search result must not show the answer under its question.

Each `/// solution` block renders as `<details class="note"><summary>풀이</summary>...`. This hook marks those
blocks `data-search-exclude` (Material's search skips such an element and everything inside it) before the
search plugin reads the page in `on_page_context`.
"""

import re

SOLUTION = re.compile(r'<details class="note">(\s*<summary>풀이</summary>)')


def on_page_content(html: str, **_) -> str:
    return SOLUTION.sub(r'<details class="note" data-search-exclude>\1', html)
