"""Pictures and phones, seen in headless Chromium (the pattern of `test_site_browser.py`), from disk (file://); the
code checks read what `CODE_JS` found in the one pass over every served page at 390 px (`phone_pages`, conftest.py).

* Every diagram that `scripts/draw_diagrams.py` draws is on exactly one page, as an inline SVG with its Korean
  labels; at 390 px it fits the screen, no label is smaller than 10.5 px and no label leaves its box; in the
  light and the dark (slate) scheme every label stands out from what is behind it (contrast 4.5:1 at least).
* At 390 px no wrapped code line continues left of its own indentation, and no shell flag (`--epochs`) is split
  over two lines; Material's copy button still copies one line break per line.
* Every figure (an image or a diagram) opens full size in the overlay, larger than on the page, and Escape
  closes it.

Each check also runs once on a page built to break it (`test_the_checks_see_*`), so it cannot pass vacuously.
"""

import re
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait
from site_support import PAGE_LOAD_S, PHONE_WIDTH, ROOT, BuiltSite, on_every_page_on_a_phone, open_page, reset_browser
from support import load_script

PHONE = PHONE_WIDTH
SCHEMES = ("default", "slate")
SMALLEST_LABEL_PX = 10.5
CONTRAST = 4.5
LABELS = {
    "seq2seq-unrolled": ("인코더", "디코더", "문맥 벡터", "s0 = h4", "<sos>", "<eos>"),
    "teacher-forcing": ("교사 강요", "추론", "정답", "노출 편향", "<sos>"),
    "bahdanau-step": ("쿼리 st−1", "키 h1", "Wa st−1", "Ua hj", "점수", "소프트맥스", "어텐션", "αt1", "문맥 벡터 ct"),
    "bahdanau-luong": ("바다나우", "루옹", "쿼리 = st−1", "쿼리 = st", "GRU", "새 은닉 상태 st"),
    "padding-mask": ("<pad>", "마스크", "False", "점수", "어텐션 가중치", "0"),
    "classifier": ("BiLSTM", "쿼리 q", "키 hj", "바다나우 어텐션", "문맥 벡터 c", "로짓"),
}
"""Words each diagram must show (its SVG's text, whitespace collapsed; a subscript reads inline: "st−1")."""


def _drawing_script():
    return load_script("draw_diagrams")


@pytest.fixture(scope="module")
def phone(session_browser: webdriver.Chrome) -> webdriver.Chrome:
    """The session's browser at a phone's width."""
    return reset_browser(session_browser, PHONE, 900)


def _scheme(driver: webdriver.Chrome, scheme: str) -> None:
    """What Material's palette toggle does: the scheme is an attribute of <body>."""
    driver.execute_script("document.body.setAttribute('data-md-color-scheme', arguments[0]);", scheme)


DIAGRAM_JS = r"""
const svg = document.getElementById(arguments[0]);
if (!svg) return null;
const view = svg.viewBox.baseVal, box = svg.getBoundingClientRect(), scale = box.width / view.width;
const rgba = c => { const m = c.match(/[\d.]+/g).map(Number); return [m[0], m[1], m[2], m.length > 3 ? m[3] : 1]; };
const over = (top, under) => top.slice(0, 3).map((v, i) => v * top[3] + under[i] * (1 - top[3]));
const lum = c => { const l = c.map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
                   return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2]; };
const contrast = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
const page = rgba(getComputedStyle(document.body).backgroundColor);
const problems = [];
for (const text of svg.querySelectorAll("text")) {
  const label = text.textContent.trim();
  if (!label) continue;
  const px = parseFloat(text.getAttribute("font-size")) * scale;
  if (px < arguments[1]) problems.push(`'${label}' is ${px.toFixed(1)} px`);
  const b = text.getBBox();
  const rect = text.closest("g.dg-node")?.querySelector("rect");
  const frame = rect ? rect.getBBox() : {x: 0, y: 0, width: view.width, height: view.height};
  if (b.x < frame.x - 0.5 || b.y < frame.y - 0.5 || b.x + b.width > frame.x + frame.width + 0.5
      || b.y + b.height > frame.y + frame.height + 0.5)
    problems.push(`'${label}' leaves its ${rect ? "box" : "drawing"}`);
  const behind = rect ? over(rgba(getComputedStyle(rect).fill), page) : page.slice(0, 3);
  const ratio = contrast(over(rgba(getComputedStyle(text).fill), behind), behind);
  if (ratio < arguments[2]) problems.push(`'${label}' has contrast ${ratio.toFixed(2)}`);
}
return {
  text: [...svg.querySelectorAll("text")].map(t => t.textContent).join(" ").replace(/\s+/g, " "),
  texts: svg.querySelectorAll("text").length,
  shapes: svg.querySelectorAll("rect, path").length,
  left: box.left, right: box.right, width: box.width, screen: document.documentElement.clientWidth,
  page_scrolls_sideways: document.documentElement.scrollWidth > window.innerWidth + 1,
  problems,
};
"""


def _diagram_pages(built_site: BuiltSite) -> dict[str, list[Path]]:
    found: dict[str, list[Path]] = {}
    for page in built_site.pages():
        for name in re.findall(r'<svg [^>]*\bid="dg-([\w-]+)"', page.read_text(encoding="utf-8")):
            found.setdefault(name, []).append(page)
    return found


def test_the_committed_diagrams_are_what_the_script_draws():
    drawn = _drawing_script().drawn()
    assert len(drawn) >= 6 and set(drawn) == {f"{name}.svg" for name in LABELS}
    committed = {path.name for path in (ROOT / "docs" / "assets" / "diagrams").glob("*.svg")}
    assert committed == set(drawn), "docs/assets/diagrams/ holds other files than the script draws"
    stale = [name for name, text in drawn.items() if (ROOT / "docs/assets/diagrams" / name).read_text() != text]
    assert not stale, f"run `python scripts/draw_diagrams.py`: {stale} differ from the drawing"


def test_every_diagram_renders_fits_a_phone_and_reads_in_both_schemes(phone: webdriver.Chrome, built_site: BuiltSite):
    pages = _diagram_pages(built_site)
    assert set(pages) == set(LABELS), f"diagrams on the pages: {sorted(pages)}, drawn: {sorted(LABELS)}"
    problems = [f"{name}: on {len(where)} pages" for name, where in pages.items() if len(where) != 1]
    for name, [page] in ((n, w) for n, w in pages.items() if len(w) == 1):
        open_page(phone, page.as_uri())
        for scheme in SCHEMES:
            _scheme(phone, scheme)
            state = phone.execute_script(DIAGRAM_JS, f"dg-{name}", SMALLEST_LABEL_PX, CONTRAST)
            where = f"{name} ({page.relative_to(built_site.root)}, {scheme})"
            if state is None:
                problems.append(f"{where}: no <svg id='dg-{name}'> in the page")
                continue
            if state["texts"] < 5 or state["shapes"] < 5 or state["width"] < 200:
                problems.append(f"{where}: barely drawn ({state['texts']} labels, {state['shapes']} shapes)")
            problems += [f"{where}: no label {label!r}" for label in LABELS[name] if label not in state["text"]]
            if state["left"] < 0 or state["right"] > state["screen"] + 0.5 or state["page_scrolls_sideways"]:
                problems.append(f"{where}: wider than a {PHONE} px screen ({state['left']:.0f}..{state['right']:.0f})")
            problems += [f"{where}: {problem}" for problem in state["problems"]]
    assert not problems, "\n".join(problems)


CODE_JS = r"""
// folded solutions: as a reader opens them (and folded again at the end: other phone scripts run after this one)
const folded = [...document.querySelectorAll("details:not([open])")];
folded.forEach(d => { d.open = true; });
const problems = [];
const lineTops = range =>
  [...new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)))];
for (const line of document.querySelectorAll("pre > code > span[id^='__span-']")) {
  const text = line.textContent.replace(/\n$/, "");
  const indent = text.length - text.trimStart().length;
  if (!text.trim()) continue;
  // the line's own text (an annotation's marker and its hidden tooltip live in the line too: not part of it)
  const own = document.createTreeWalker(line, NodeFilter.SHOW_TEXT,
    {acceptNode: n => n.parentElement.closest(".md-annotation") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
  const rects = [];
  while (own.nextNode()) {
    const range = document.createRange();
    range.selectNodeContents(own.currentNode);
    rects.push(...[...range.getClientRects()].filter(r => r.width > 0));
  }
  if (!rects.length) continue;
  const first = Math.min(...rects.map(r => r.top));
  const later = rects.filter(r => r.top > first + 2);
  if (!later.length) continue;
  // where the line's own text starts: the first character after the indentation
  const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
  let seen = 0, start = null;
  while (walker.nextNode() && start === null) {
    const node = walker.currentNode;
    if (seen + node.length > indent) {
      start = document.createRange();
      start.setStart(node, indent - seen);
      start.setEnd(node, indent - seen + 1);
    }
    seen += node.length;
  }
  const textLeft = start.getClientRects()[0].left;
  const lost = later.filter(r => r.left < textLeft - 1);
  if (lost.length) problems.push(`wrapped line restarts left of its indentation: '${text.trim().slice(0, 50)}'`);
}
for (const code of document.querySelectorAll("article code")) {
  const nodes = [], starts = [];
  const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
  let text = "";
  while (walker.nextNode()) {
    nodes.push(walker.currentNode);
    starts.push(text.length);
    text += walker.currentNode.data;
  }
  const at = i => { let k = starts.length - 1; while (starts[k] > i) k--; return [nodes[k], i - starts[k]]; };
  for (const m of text.matchAll(/(?<![\w-])--[A-Za-z][\w-]*/g)) {
    const range = document.createRange();
    range.setStart(...at(m.index));
    range.setEnd(...at(m.index + m[0].length - 1));
    range.setEnd(range.endContainer, range.endOffset + 1);
    if (lineTops(range).length > 1) problems.push(`flag split over lines: '${m[0]}'`);
  }
}
const copied = [...document.querySelectorAll("pre > code")].filter(code => {
  code.setAttribute("data-md-copying", "");  // what Material does while it copies (then it reads innerText)
  const text = code.innerText;
  code.removeAttribute("data-md-copying");
  const lines = code.querySelectorAll(":scope > span[id^='__span-']").length;
  return lines && text.trimEnd().split("\n").length !== lines;
}).map(code => code.textContent.slice(0, 50));
problems.push(...copied.map(c => `the copy button would not copy the code as written: '${c}'`));
const lines = document.querySelectorAll("pre > code > span[id^='__span-']").length;
folded.forEach(d => { d.open = false; });
return {problems, lines};
"""
on_every_page_on_a_phone("code", CODE_JS)


def test_code_on_a_phone_keeps_indentation_and_flags(phone_pages: dict[str, dict]):
    """Every page as `phone_pages` (tests/conftest.py) saw it at 390 px: `CODE_JS`'s findings there."""
    problems, lines = [], 0
    for page, states in phone_pages.items():
        lines += states["code"]["lines"]
        problems += [f"{page}: {problem}" for problem in states["code"]["problems"]]
    assert lines > 1000, f"only {lines} code lines in their own <span> (pymdownx.highlight line_spans)"
    assert not problems, "\n".join(problems)


def test_the_checks_see_lost_indentation_split_flags_and_small_labels(phone: webdriver.Chrome, tmp_path: Path):
    """Without the site's stylesheet a long line wraps to column 0 and `--epochs` breaks after its hyphens."""
    page = tmp_path / "bad.html"
    long = "    result = function_name(argument_one, argument_two, argument_three, argument_four)"
    page.write_text(
        '<article><pre style="width: 200px; white-space: pre-wrap"><code>'
        f'<span id="__span-0-1">{long}\n</span></code></pre>'
        '<p style="width: 110px">run <code style="overflow-wrap: anywhere">train --epochs 40</code> now</p>'
        '<svg id="dg-bad" viewBox="0 0 100 50" width="100" height="50"><g class="dg-node"><rect x="0" y="0" '
        'width="30" height="20" fill="#fff"/>'
        '<text x="2" y="14" font-size="8" fill="#eee">바깥으로 나가는 긴 글</text></g></svg>'
        "</article>",
        encoding="utf-8",
    )
    open_page(phone, page.as_uri())
    problems = phone.execute_script(CODE_JS)["problems"]
    assert any("restarts left of its indentation" in p for p in problems), problems
    assert any("flag split over lines: '--epochs'" in p for p in problems), problems
    labels = phone.execute_script(DIAGRAM_JS, "dg-bad", SMALLEST_LABEL_PX, CONTRAST)["problems"]
    assert any("px" in p for p in labels) and any("leaves its box" in p for p in labels), labels
    assert any("contrast" in p for p in labels), labels


FIGURES_JS = "return [...document.querySelectorAll('article img, article figure.diagram svg')];"
OVERLAY_JS = r"""
const copy = document.querySelector(".lightbox .lightbox__figure > *");
const image = copy && (copy.querySelector("img") || copy);  // a picture stands in its panel (lightbox.js)
return copy && {width: copy.getBoundingClientRect().width,
                natural: image.naturalWidth || image.viewBox.baseVal.width,
                panels: copy.parentElement.classList.contains("lightbox__figure--panels"),
                scrolls: document.querySelector(".lightbox").scrollWidth > window.innerWidth};
"""
"""The overlay's first picture: its width, its own width, whether it is one of a heatmap's panels (shown one under the
other on a phone, each as wide as the screen: larger than the whole on the page, smaller than the picture's width)."""


def test_every_figure_opens_full_size(phone: webdriver.Chrome, built_site: BuiltSite):
    opened, problems = 0, []
    for page in built_site.pages():
        if not re.search(r'<img |<figure class="diagram"', page.read_text(encoding="utf-8")):
            continue  # the overlay is for figures: a page without one is not opened
        open_page(phone, page.as_uri())
        for index, figure in enumerate(phone.execute_script(FIGURES_JS)):
            where = f"{page.relative_to(built_site.root)} figure {index + 1}"
            phone.execute_script("arguments[0].scrollIntoView({block: 'center'});", figure)
            on_page = figure.rect["width"]
            figure.click()
            overlay = WebDriverWait(phone, PAGE_LOAD_S, poll_frequency=0.05).until(
                lambda d: d.execute_script(OVERLAY_JS)
            )
            if overlay["width"] < (on_page + 1 if overlay["panels"] else max(on_page + 1, overlay["natural"] - 1)):
                problems.append(f"{where}: opens at {overlay['width']:.0f} px, on the page {on_page:.0f} px")
            if overlay["width"] > PHONE and not overlay["scrolls"]:
                problems.append(f"{where}: larger than the screen but the overlay does not scroll")
            phone.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
            WebDriverWait(phone, PAGE_LOAD_S, poll_frequency=0.05).until(
                lambda d: not d.find_elements(By.CSS_SELECTOR, ".lightbox")
            )
            opened += 1
    assert opened >= 13, f"only {opened} figures opened (7 images and 6 diagrams expected at least)"
    assert not problems, "\n".join(problems)
