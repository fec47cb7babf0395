"""Pages a phone can read, seen in headless Chromium (the pattern of `test_site_browser.py`).

At 390 px (`phone_pages` in tests/conftest.py, one pass over every page for all the phone checks):

* no page is taller than `MAX_HEIGHT_PX` (a reader scrolls a long page without knowing where they are); the pages
  over it are listed in `TALL_PAGES` with the height measured when they were reviewed, and a listed page that has
  come under the limit, or grown by more than a tenth, fails too (the list shrinks and stays true);
* every plotted figure (an `<img>` in a page) has a visible cue under it that says a tap enlarges it, and that cue
  opens the figure by keyboard (Enter);
* no table is wider than its box (a table that needs a sideways scroll inside its box hides columns from a reader);
* every plotted figure opens in a lightbox at its own size, but a heatmap (two panels) opens without a sideways
  scroll, its panels one under the other, each at least `MIN_PANEL_SCALE` of its own size.

At 1280 px an identifier in a table (`by_english`) never breaks over two lines.
"""

import re

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait
from site_support import PAGE_LOAD_S, PHONE_WIDTH, BuiltSite, on_every_page_on_a_phone, open_page, reset_browser

MAX_HEIGHT_PX = 15_000
"""The tallest a page may be at 390 px: about 18 screens of a phone."""

TALL_PAGES: dict[str, int] = {
    # page (its URL in the site): its height in px at 390 px when reviewed (2026-11-27, headless Chromium, Noto CJK).
    # Not split or folded yet: each is a candidate for a split along its sections, or for folding an aside
    # (`/// details`, as bahdanau/attention.html does); each stays listed only while it is over the limit.
    "api/translation.html": 32433,  # generated API reference (mkdocstrings)
    "api/core.html": 19746,  # generated API reference (mkdocstrings)
}

LAYOUT_JS = r"""
const wider = (box) => box.scrollWidth > box.clientWidth + 1;
const boxes = [...document.querySelectorAll("article .md-typeset__scrollwrap, article .live-scroll")];
return {
  height: Math.round(document.documentElement.scrollHeight),
  wide_tables: boxes.filter((box) => box.offsetParent !== null && box.querySelector("table") && wider(box))
    .map((box) => box.querySelector("table").textContent.trim().replace(/\s+/g, " ").slice(0, 60)),
  figures: document.querySelectorAll("article img").length,
  figures_without_cue: [...document.querySelectorAll("article img")].filter((img) => {
    const cue = img.nextElementSibling;
    if (!cue || !cue.matches("button.lightbox-cue")) return true;
    const box = cue.getBoundingClientRect();
    return box.width < 1 || box.height < 1 || getComputedStyle(cue).visibility === "hidden";
  }).map((img) => img.getAttribute("src")),
};
"""
on_every_page_on_a_phone("layout", LAYOUT_JS)


def tall(phone_pages: dict[str, dict]) -> dict[str, int]:
    """Every page over `MAX_HEIGHT_PX` at 390 px, with its height (the 404 page left out)."""
    return {
        page: states["layout"]["height"]
        for page, states in phone_pages.items()
        if page != "404.html" and states["layout"]["height"] > MAX_HEIGHT_PX
    }


def test_no_page_is_taller_than_the_limit_on_a_phone(phone_pages: dict[str, dict]):
    heights = {page: states["layout"]["height"] for page, states in phone_pages.items()}
    assert len(heights) >= 30 and min(heights.values()) > 500, heights
    for page, height in sorted(heights.items(), key=lambda item: -item[1])[:8]:
        print(f"{height:>7} px  {page}")
    found = tall(phone_pages)
    problems = [f"{page}: {height} px at {PHONE_WIDTH} px (limit {MAX_HEIGHT_PX})" for page, height in found.items()
                if page not in TALL_PAGES]  # fmt: skip
    problems += [
        f"{page}: listed at {TALL_PAGES[page]} px, now {height} px (more than a tenth taller)"
        for page, height in found.items()
        if page in TALL_PAGES and height > TALL_PAGES[page] * 1.1
    ]
    problems += [
        f"{page}: listed in TALL_PAGES but {heights.get(page)} px now: take it off the list"
        for page in TALL_PAGES
        if page not in found
    ]
    assert problems == [], "\n".join(problems)


def test_every_figure_says_a_tap_enlarges_it(phone_pages: dict[str, dict]):
    figures = sum(states["layout"]["figures"] for states in phone_pages.values())
    assert figures >= 7, f"only {figures} figures (<img>) in the site"
    problems = [
        f"{page}: no visible enlarge cue under {src}"
        for page, states in phone_pages.items()
        for src in states["layout"]["figures_without_cue"]
    ]
    assert problems == [], "\n".join(problems)


def test_no_table_is_wider_than_its_box_on_a_phone(phone_pages: dict[str, dict]):
    problems = [
        f"{page}: {table!r}" for page, states in phone_pages.items() for table in states["layout"]["wide_tables"]
    ]
    assert problems == [], "tables wider than their box at 390 px:\n" + "\n".join(problems)


@pytest.fixture(scope="module")
def phone(session_browser: webdriver.Chrome) -> webdriver.Chrome:
    """The session's browser at 390 px wide."""
    driver = reset_browser(session_browser, PHONE_WIDTH, 900)
    yield driver
    driver.set_window_size(1280, 1000)


LIGHTBOX_JS = "const f = document.querySelector('.lightbox .lightbox__figure img'); return f && f.naturalWidth;"


def test_the_cue_opens_the_figure_by_keyboard(phone: webdriver.Chrome, site_server: str, built_site: BuiltSite):
    pages = [page for page in built_site.pages() if "<img " in page.read_text(encoding="utf-8")]
    assert pages, "no page of the site has a figure"
    open_page(phone, site_server + built_site.url_of(pages[0]))
    cues = WebDriverWait(phone, PAGE_LOAD_S, poll_frequency=0.05).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "article button.lightbox-cue")
    )
    phone.execute_script("arguments[0].scrollIntoView({block: 'center'}); arguments[0].focus();", cues[0])
    assert phone.switch_to.active_element == cues[0]
    cues[0].send_keys(Keys.ENTER)
    natural = WebDriverWait(phone, PAGE_LOAD_S, poll_frequency=0.05).until(lambda d: d.execute_script(LIGHTBOX_JS))
    assert natural > PHONE_WIDTH, "the figure opened is no larger than the phone's screen"
    phone.switch_to.active_element.send_keys(Keys.ESCAPE)
    WebDriverWait(phone, PAGE_LOAD_S, poll_frequency=0.05).until(
        lambda d: not d.find_elements(By.CSS_SELECTOR, ".lightbox")
    )
    assert phone.switch_to.active_element == cues[0], "closing the figure does not give the focus back to its cue"


ENLARGED_JS = r"""
const shown = [];
for (const figure of document.querySelectorAll("article img")) {
  figure.click();
  const box = document.querySelector(".lightbox");
  if (!box) { shown.push({src: figure.getAttribute("src"), opened: false}); continue; }
  shown.push({
    src: figure.getAttribute("src"), opened: true, wide: figure.naturalWidth >= 2 * figure.naturalHeight,
    sideways: box.scrollWidth - box.clientWidth,
    panels: [...box.querySelectorAll(".lightbox__figure img")].map((img) => {
      const panel = img.closest(".lightbox__panel") || img;
      const parts = Math.round(img.getBoundingClientRect().width / panel.getBoundingClientRect().width);
      return {shown: panel.getBoundingClientRect().width, own: img.naturalWidth / parts};
    }),
  });
  document.dispatchEvent(new KeyboardEvent("keydown", {key: "Escape"}));
}
return shown;
"""
MIN_PANEL_SCALE = 0.55
"""The least a heatmap's panel may be shrunk in the lightbox on a phone: the whole heatmap (1248 px) fitted into 390 px
would be shrunk to 0.3, its labels a few pixels tall; a panel on its own, as wide as the screen, is near 0.6."""


def test_a_heatmap_opens_on_a_phone_without_a_sideways_scroll(phone: webdriver.Chrome, site_server: str,
                                                              built_site: BuiltSite):  # fmt: skip
    """At 390 px a figure of two panels (twice as wide as tall: the heatmaps) opens without a sideways scroll, as its
    two panels one under the other, each as wide as the screen allows; every other figure opens at its own size."""
    pages = [page for page in built_site.pages() if "<img " in page.read_text(encoding="utf-8")]
    shown = []
    for page in pages:
        open_page(phone, site_server + built_site.url_of(page))
        WebDriverWait(phone, PAGE_LOAD_S, poll_frequency=0.05).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, "article button.lightbox-cue")
        )
        shown += [(built_site.url_of(page), figure) for figure in phone.execute_script(ENLARGED_JS)]
    wide = [figure for _, figure in shown if figure.get("wide")]
    assert len(wide) >= 4, shown  # the four heatmaps of attention/heatmaps.md
    problems = [f"{page}: {figure['src']} does not open" for page, figure in shown if not figure["opened"]]
    problems += [
        f"{page}: {figure['src']} opens {figure['sideways']} px wider than the screen"
        for page, figure in shown
        if figure.get("wide") and figure["sideways"] > 1
    ]
    problems += [
        f"{page}: {figure['src']} opens as {figure['panels']}, smaller than its own size"
        for page, figure in shown
        if figure["opened"] and not figure["wide"] and figure["panels"][0]["shown"] < figure["panels"][0]["own"] - 1
    ]
    problems += [
        f"{page}: {figure['src']} opens as {figure['panels']} (two panels, each at least {MIN_PANEL_SCALE} of its size)"
        for page, figure in shown
        if figure.get("wide")
        and (len(figure["panels"]) != 2 or any(p["shown"] < MIN_PANEL_SCALE * p["own"] for p in figure["panels"]))
    ]
    assert problems == [], "\n".join(problems)


BROKEN_CODE_JS = r"""
return [...document.querySelectorAll("article td code, article th code")]
  .filter((code) => code.getClientRects().length > 1).map((code) => code.textContent);
"""


def test_no_identifier_in_a_table_breaks_on_a_desktop(session_browser: webdriver.Chrome, site_server: str,
                                                       built_site: BuiltSite):  # fmt: skip
    driver = reset_browser(session_browser, 1280, 1000)
    pages = [page for page in built_site.pages() if re.search(r"<td[^>]*>[^<]*<code", page.read_text(encoding="utf-8"))]
    assert len(pages) >= 5, [str(page) for page in pages]
    problems = []
    for page in pages:
        open_page(driver, site_server + built_site.url_of(page))
        problems += [f"{built_site.url_of(page)}: {code!r}" for code in driver.execute_script(BROKEN_CODE_JS)]
    assert problems == [], "code broken over two lines in a table at 1280 px:\n" + "\n".join(problems)


def test_the_checks_see_a_tall_page_a_wide_table_and_a_figure_without_cue(phone: webdriver.Chrome, tmp_path):
    page = tmp_path / "bad.html"
    page.write_text(
        '<article><div style="height: 16000px"></div>'
        '<div class="md-typeset__scrollwrap" style="width: 200px; overflow-x: auto"><table><tr>'
        '<td style="white-space: nowrap">a very long cell that cannot fit two hundred pixels</td></tr></table></div>'
        '<img src="x.png" alt="x" width="10" height="10"></article>',
        encoding="utf-8",
    )
    open_page(phone, page.as_uri())
    layout = phone.execute_script(LAYOUT_JS)
    assert layout["height"] > MAX_HEIGHT_PX
    assert layout["wide_tables"] == ["a very long cell that cannot fit two hundred pixels"]
    assert layout["figures_without_cue"] == ["x.png"]
    assert tall({"bad.html": {"layout": layout}, "404.html": {"layout": layout}}) == {"bad.html": layout["height"]}
