"""The page gets back the HTML that hooks/search_math.py set aside while the search plugin indexed its text copy."""

from mkdocs.plugins import event_priority
from search_math import ORIGINAL


@event_priority(-100)  # after the search plugin (priority 0); before the page is rendered into its template
def on_page_context(context, page, **_):
    page.content = page.__dict__.pop(ORIGINAL)
    return context
