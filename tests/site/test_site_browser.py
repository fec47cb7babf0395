"""The built site, opened in headless Chromium: what a reader sees is what the pages promise.

Every page of the strict build (the `built_site` fixture) is served on 127.0.0.1 and opened
once in Debian's `chromium` driven by `chromedriver` (selenium); then

* every `.arithmatex` span is rendered by the vendored KaTeX, no `.katex-error` shows and no
  raw `$$`, `\\(` or `\\[` is left in the text (at least one page must have math);
* every code block has Material's copy button;
* Material's search finds the Korean term 어텐션: every page where a word starts with it (particles
  glued on, or in quotes or brackets), and only pages that have it;
* no page, script, stylesheet, font or worker requests anything outside 127.0.0.1 (read from
  Chromium's network log; the host resolver maps every other host to nothing, so such a
  request fails fast instead of leaking).

It is skipped, with the reason, only where no Chromium or no chromedriver is installed
(`.ci/run` installs Debian's `chromium` and `chromium-driver`).
"""

import html
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import numpy as np
import pytest
from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from site_support import PHONE_WIDTH, ROOT, BuiltSite, on_every_page_on_a_phone, open_page, reset_browser

SEARCH_TERM = "어텐션"
WAIT_S = 30
"""How long a page may take to settle (KaTeX, copy buttons) or search to answer; a wait ends as soon as it holds."""

# What one page load shows, read in one round trip once the page has settled.
PAGE_STATE_JS = r"""
const codes = [...document.querySelectorAll("pre > code")];
const math = [...document.querySelectorAll(".arithmatex")];
const article = (document.querySelector("article") || document.body).cloneNode(true);
article.querySelectorAll("pre, code, script, style, .katex").forEach(e => e.remove());
const text = article.textContent;
return {
  settled: document.readyState === "complete"
    && codes.every(c => c.parentElement.querySelector("[data-clipboard-target]"))
    && math.every(m => m.querySelector(".katex, .katex-error")),
  code_blocks: codes.length,
  without_copy: codes.filter(c => !c.parentElement.querySelector("[data-clipboard-target]"))
    .map(c => c.textContent.trim().slice(0, 60)),
  math: math.length,
  unrendered: math.filter(m => !m.querySelector(".katex")).map(m => m.textContent.trim().slice(0, 60)),
  katex_errors: [...document.querySelectorAll(".katex-error")].map(e => e.textContent.trim().slice(0, 60)),
  // the TeX KaTeX rendered (its annotation): a control character there (a TAB where "\\t" of "\\times" was
  // meant) renders silently wrong ("2HimesH")
  tex_with_control: [...document.querySelectorAll("annotation[encoding='application/x-tex']")]
    .map(a => a.textContent).filter(t => /[\u0000-\u0009\u000b-\u001f\u007f]/.test(t)).map(t => t.slice(0, 60)),
  raw_delimiters: ["$$", "\\(", "\\)", "\\[", "\\]"].filter(d => text.includes(d))
    .map(d => d + " in '" + text.slice(Math.max(0, text.indexOf(d) - 30), text.indexOf(d) + 30).trim() + "'"),
};
"""


@pytest.fixture(scope="module")
def browser(session_browser: webdriver.Chrome) -> webdriver.Chrome:
    """The session's browser at 1280 px, its cache on and its network log empty."""
    return reset_browser(session_browser)


def _requests(driver: webdriver.Chrome) -> list[str]:
    """The URLs requested since the last call (pages, assets, workers' fetches), from the network log."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
        elif message["method"] == "Network.webSocketCreated":
            urls.append(message["params"]["url"])
    return urls


def _leaves_the_site(url: str) -> bool:
    split = urlsplit(url)
    return split.scheme not in ("data", "blob", "about", "chrome", "devtools") and split.hostname != "127.0.0.1"


@dataclass
class Visit:
    state: dict
    requests: list[str] = field(default_factory=list)
    fit: dict = field(default_factory=dict)


@pytest.fixture(scope="module")
def visits(browser: webdriver.Chrome, site_server: str, built_site: BuiltSite) -> dict[str, Visit]:
    """Every page of the site, opened once at 1280 px: its settled state, the requests it made and what fits
    (`FIT_JS`)."""
    result = {}
    for page in built_site.pages():
        open_page(browser, site_server + built_site.url_of(page))
        try:
            state = WebDriverWait(browser, WAIT_S, poll_frequency=0.05).until(
                lambda d: (s := d.execute_script(PAGE_STATE_JS))["settled"] and s
            )
        except TimeoutException:
            state = browser.execute_script(PAGE_STATE_JS)
        result[built_site.url_of(page) or "/"] = Visit(state, _requests(browser), browser.execute_script(FIT_JS))
    return result


def test_math_is_rendered_by_katex(visits: dict[str, Visit]):
    with_math = [page for page, visit in visits.items() if visit.state["math"]]
    assert with_math, "no page of the site has math (no .arithmatex element in any built page)"
    problems = []
    for page, visit in visits.items():
        state = visit.state
        problems += [f"{page}: not rendered by KaTeX: {tex!r}" for tex in state["unrendered"]]
        problems += [f"{page}: KaTeX error: {tex!r}" for tex in state["katex_errors"]]
        problems += [f"{page}: raw math delimiter left: {raw}" for raw in state["raw_delimiters"]]
        problems += [f"{page}: control character in rendered TeX: {tex!r}" for tex in state["tex_with_control"]]
    assert not problems, "\n".join(problems)


def test_every_code_block_has_a_copy_button(visits: dict[str, Visit]):
    assert any(visit.state["code_blocks"] for visit in visits.values()), "no page of the site has a code block"
    problems = [f"{page}: no copy button on {code!r}" for page, v in visits.items() for code in v.state["without_copy"]]
    assert not problems, "\n".join(problems)


def test_pages_request_nothing_outside_the_site(visits: dict[str, Visit]):
    assert all(visit.requests for visit in visits.values()), "the network log recorded no request for some page"
    leaks = [f"{page}: {url}" for page, visit in visits.items() for url in visit.requests if _leaves_the_site(url)]
    assert not leaks, "requests outside 127.0.0.1:\n" + "\n".join(leaks)


def _pages_with_term(built_site: BuiltSite, term: str) -> tuple[set[str], set[str]]:
    """Pages whose indexed text has `term` anywhere, and those where a search token starts with it.

    Tokens are cut with the search's own separator (from the index's config), so a word with a
    Korean particle glued on (어텐션은) counts, and so does one in quotes or brackets.
    """
    index = json.loads((built_site.root / "search" / "search_index.json").read_text(encoding="utf-8"))
    separator = re.compile(index["config"]["separator"])
    anywhere, token_start = set(), set()
    for doc in index["docs"]:
        text = html.unescape(re.sub(r"<[^>]+>", " ", f"{doc['title']} {doc['text']}"))
        page = doc["location"].split("#")[0]
        if term in text:
            anywhere.add(page)
        if any(token.startswith(term) for token in separator.split(text)):
            token_start.add(page)
    return anywhere, token_start


RESULT_LINKS_JS = "return [...document.querySelectorAll('.md-search-result__item > a')].map(a => a.href);"
"""All result links, read in one script call: the list re-renders while it is read, so holding
element references across calls can go stale."""


def _final_results(driver: webdriver.Chrome, term: str) -> list[str]:
    """The result links once they answer `term` itself, not a prefix typed on the way (어, 어텐)."""
    hrefs = driver.execute_script(RESULT_LINKS_JS) or []
    highlights = {parse_qs(urlsplit(href).query).get("h", [""])[0] for href in hrefs} - {""}
    return hrefs if highlights == {term} else []


def test_korean_search_finds_the_pages(browser: webdriver.Chrome, site_server: str, built_site: BuiltSite):
    anywhere, expected = _pages_with_term(built_site, SEARCH_TERM)
    assert expected, f"no page of the site has the word {SEARCH_TERM}"
    _requests(browser)
    open_page(browser, site_server)
    search = browser.find_element(By.CSS_SELECTOR, "input.md-search__input")
    if not search.is_displayed():  # a narrow window hides the field behind the search icon
        browser.find_element(By.CSS_SELECTOR, "label[for='__search']").click()
    search.click()
    search.send_keys(SEARCH_TERM)
    try:
        items = WebDriverWait(browser, WAIT_S, poll_frequency=0.05).until(lambda d: _final_results(d, SEARCH_TERM))
    except TimeoutException:
        meta = browser.find_element(By.CSS_SELECTOR, ".md-search-result__meta").get_attribute("textContent")
        pytest.fail(f"searching {SEARCH_TERM} showed no result within {WAIT_S} s (search says: {meta!r})")
    found = set()
    for href in items:
        path = unquote(urlsplit(href).path)
        found.add(path.removeprefix(urlsplit(site_server).path))
    assert found <= anywhere, f"results without the word {SEARCH_TERM}: {sorted(found - anywhere)}"
    shown_all = len(items) < 10  # Material renders results ten at a time
    assert found == expected or not shown_all, f"pages with {SEARCH_TERM} not found: {sorted(expected - found)}"
    leaks = [url for url in _requests(browser) if _leaves_the_site(url)]
    assert not leaks, "the search made requests outside 127.0.0.1:\n" + "\n".join(leaks)


def test_a_request_elsewhere_would_be_seen(browser: webdriver.Chrome, site_server: str):
    """The network log does record a request to another host (so the check above can fail)."""
    open_page(browser, site_server)
    _requests(browser)
    browser.execute_script("const i = new Image(); i.src = 'https://example.org/tracker.png'; document.body.append(i);")
    seen: list[str] = []
    WebDriverWait(browser, WAIT_S, poll_frequency=0.05).until(
        lambda d: seen.extend(_requests(d)) or any(map(_leaves_the_site, seen))
    )
    assert "https://example.org/tracker.png" in seen


def test_state_script_sees_raw_math_and_missing_buttons(browser: webdriver.Chrome, tmp_path: Path):
    """PAGE_STATE_JS reports an unrendered formula, a raw `$$` and a code block without a button."""
    page = tmp_path / "bad.html"
    page.write_text(
        '<article><p>before $$x^2$$ after</p><span class="arithmatex">\\(x\\)</span><pre><code>print(1)</code></pre>'
        '<math><annotation encoding="application/x-tex">2H \timesH</annotation></math></article>',
        encoding="utf-8",
    )
    open_page(browser, page.as_uri())
    state = browser.execute_script(PAGE_STATE_JS)
    assert state["unrendered"] == ["\\(x\\)"] and state["without_copy"] == ["print(1)"]
    assert any(raw.startswith("$$") for raw in state["raw_delimiters"])
    assert state["tex_with_control"] == ["2H \timesH"]  # the TAB of "\t" + "imes"


NAV_LINKS_JS = "return [...document.querySelectorAll('.md-nav__link[href]')].map(a => a.href);"


def test_the_site_works_opened_from_disk(browser: webdriver.Chrome, built_site: BuiltSite):
    """A reader who downloads the site opens index.html as a file: links open pages, search finds 어텐션.

    Every step waits for the document it asked for (`open_page`), never for whatever the window shows: under
    load, `driver.get` could return before the next page had parsed its heading (it once failed so).
    """
    home = (built_site.root / "index.html").as_uri()
    open_page(browser, home)
    links = [href for href in browser.execute_script(NAV_LINKS_JS) if href.startswith("file:")]
    pages = sorted({href.split("#")[0] for href in links} - {home})
    assert len(pages) >= 10, pages
    for href in pages:
        assert href.endswith(".html"), f"{href} is a folder, not a page: from disk it would show a file listing"
        assert Path(unquote(urlsplit(href).path)).is_file(), href
    for href in (pages[0], pages[-1]):
        open_page(browser, href)
        assert browser.find_elements(By.CSS_SELECTOR, "article h1"), f"{href} did not open as a page"
    open_page(browser, home)
    search = browser.find_element(By.CSS_SELECTOR, "input.md-search__input")
    if not search.is_displayed():
        browser.find_element(By.CSS_SELECTOR, "label[for='__search']").click()
    search.click()
    search.send_keys(SEARCH_TERM)
    try:
        hrefs = WebDriverWait(browser, WAIT_S, poll_frequency=0.05).until(lambda d: _final_results(d, SEARCH_TERM))
    except TimeoutException:
        meta = browser.find_element(By.CSS_SELECTOR, ".md-search-result__meta").get_attribute("textContent")
        pytest.fail(f"from disk, searching {SEARCH_TERM} showed no result within {WAIT_S} s (search says: {meta!r})")
    assert all(href.startswith("file:") for href in hrefs)


FIT_JS = r"""
const wide = e => e.scrollWidth > e.clientWidth + 1;
return {
  code: [...document.querySelectorAll("pre > code")].filter(wide).map(e => e.textContent.slice(0, 60)),
  math: [...document.querySelectorAll(".katex-display")].filter(wide).map(e => e.textContent.slice(0, 60)),
  math_without_scroll: [...document.querySelectorAll(".katex-display")]
    .filter(e => wide(e) && getComputedStyle(e).overflowX !== "auto").map(e => e.textContent.slice(0, 60)),
  page_scrolls_sideways: document.documentElement.scrollWidth > window.innerWidth + 1,
};
"""


on_every_page_on_a_phone("fit", FIT_JS)


def test_nothing_is_cut_off_on_a_desktop_or_scrolls_the_page_on_a_phone(
    visits: dict[str, Visit], phone_pages: dict[str, dict]
):
    """At 1280 px every code block and display formula fits its box; at 390 px no page scrolls sideways
    (a formula wider than the column scrolls inside its own box). The 404 page is left out.

    The pages as `visits` saw them at 1280 px, and as `phone_pages` (tests/conftest.py) saw them at 390 px."""
    problems = []
    desktop = {page: visit.fit for page, visit in visits.items() if page != "404.html"}
    phone = {page: states["fit"] for page, states in phone_pages.items() if page != "404.html"}
    assert desktop and set(phone) == set(desktop), (sorted(desktop), sorted(phone))
    for page, state in desktop.items():
        where = f"1280px {page}"
        problems += [f"{where}: code wider than its box: {c!r}" for c in state["code"]]
        problems += [f"{where}: formula wider than its box: {m!r}" for m in state["math"]]
    for page, state in phone.items():
        where = f"{PHONE_WIDTH}px {page}"
        problems += [f"{where}: the page scrolls sideways"] * state["page_scrolls_sideways"]
        problems += [f"{where}: formula overflows without scrolling: {m!r}" for m in state["math_without_scroll"]]
    assert not problems, "\n".join(problems)


LIVE_STATE_JS = """
const root = document.getElementById("live-translator");
return {ready: root.dataset.ready, done: root.dataset.done, first: window.liveFirstTranslationMs || null,
        result: window.liveResult || null, message: root.querySelector("[data-live=message]").textContent,
        output: root.querySelector("[data-live=output]").textContent};
"""


def test_the_live_page_translates_like_python_offline(browser: webdriver.Chrome, engine_server: str):
    """50 held-out sentences typed into the page give PyTorch's tokens and attention with the page's weights
    (`page_model`); unknown words are named. On the build of each engine (`engine_server`: MkDocs, Zensical)."""
    import torch

    from seq2seq_attention import collate, load_checkpoint, load_pairs, split_pairs
    from seq2seq_attention.model.search import greedy_search
    from seq2seq_attention.model.tokens import EOS_IDX
    from seq2seq_attention.translation.export import page_model
    from seq2seq_attention.translation.pretrained import PRETRAINED_DIR

    checkpoint = load_checkpoint(PRETRAINED_DIR / "bahdanau")
    model, vocabs = page_model(checkpoint.model, ROOT / "docs" / "assets" / "live" / "weights.bin"), checkpoint.vocabs
    _requests(browser)
    open_page(browser, engine_server + "live.html")
    WebDriverWait(browser, WAIT_S, poll_frequency=0.05).until(
        lambda d: (
            d.execute_script(LIVE_STATE_JS)["done"] == "true" or d.execute_script(LIVE_STATE_JS)["ready"] == "error"
        )
    )
    state = browser.execute_script(LIVE_STATE_JS)
    assert state["ready"] == "true", state["message"]
    print(f"first translation {state['first']:.0f} ms after the page started loading")
    browser.execute_script("document.getElementById('live-translator').dataset.stepMs = '0';")
    sentences = [pair.source for pair in split_pairs(load_pairs())[1]]
    known = [s for s in dict.fromkeys(sentences) if all(w in vocabs.source.word2index for w in s.split())][:50]
    assert len(known) == 50
    for sentence in known:
        browser.execute_script(
            "const r = document.getElementById('live-translator');"
            "r.querySelector('[data-live=input]').value = arguments[0];"
            "r.dataset.done = 'false'; r.querySelector('[data-live=button]').click();",
            sentence,
        )
        WebDriverWait(browser, WAIT_S, poll_frequency=0.02).until(
            lambda d: d.execute_script(LIVE_STATE_JS)["done"] == "true"
        )
        result = browser.execute_script(LIVE_STATE_JS)["result"]
        batch = collate([(vocabs.source.encode(sentence), [EOS_IDX])])
        with torch.no_grad():
            state = model.decoder.init_state(*model.encode(batch.source, batch.lengths))
            tokens, _, weights, _ = greedy_search(model.decoder.forward_step, state)
        tokens, weights = tokens[0].tolist(), weights[0].numpy()  # (T,), (T, S)
        assert result["tokens"] == tokens, sentence
        assert np.abs(np.array(result["weights"]) - weights).max() < 1e-5, sentence
    browser.execute_script(
        "const r = document.getElementById('live-translator');"
        "r.querySelector('[data-live=input]').value = 'Je suis un xylophoniste.';"
        "r.dataset.done = 'false'; r.querySelector('[data-live=button]').click();"
    )
    WebDriverWait(browser, WAIT_S, poll_frequency=0.02).until(
        lambda d: d.execute_script(LIVE_STATE_JS)["done"] == "true"
    )
    message = browser.execute_script(LIVE_STATE_JS)["message"]
    assert "사전에 없는 단어" in message and "'xylophoniste'" in message and "'un'" not in message
    leaks = [url for url in _requests(browser) if _leaves_the_site(url)]
    assert not leaks, "the live page made requests outside 127.0.0.1:\n" + "\n".join(leaks)
