"""The step-through in headless Chromium: a reader on a phone, with the keyboard only, in both themes.

The site as each engine builds it (the `engine_site` fixture: MkDocs, then Zensical) is opened from disk (file://,
where the page cannot fetch a JSON file: the trace is inside the page) at 390 px. Here a reader

* steps through the excerpt of `Attention.attend` on the Bahdanau attention page with keys only, in the dark
  theme (switched with Material's own toggle): each step highlights the traced line, and the panel shows
  that line's tensor with its letters and sizes and its values as recorded (`docs/assets/traces/bahdanau.json`,
  rounded to 4 decimals), legible, inside the screen;
* steps the decoding loop on `bahdanau/decoder.md` pass by pass to the last and reads the word chosen at each,
  which is what the packaged model translates; sees the lines that feed its guess light up, and the
  teacher-forced training step with its loss and gradient norms;
* switches `masked_softmax` to the padded batch and reads the padded position's weight, exactly 0, in a table
  that scrolls sideways with a cue;
* sees one grey scale for attention weights: the same weight gets the same grey in both themes, on 0-1 (weight 1
  white), which is matplotlib's "gray" (the heatmap figures) as greyscale.js defines it for the stepper and the
  live page; signed values on a diverging scale; and under every coloured table a legend that says which;
* follows the link to the live page and the live page's link back (its fragment opens the step).

Skipped, with the reason, only where Chromium or chromedriver is missing (`.ci/run` installs both).
"""

import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait
from site_support import ROOT, BuiltSite, chromium, open_page

WAIT_S = 30
TRACE = json.loads((ROOT / "docs" / "assets" / "traces" / "bahdanau.json").read_text(encoding="utf-8"))
SENTENCE = TRACE["runs"]["sentence"]
S = len(SENTENCE["sentences"][0]["source_tokens"])
LOOP = "src/seq2seq_attention/model/decoders.py:loop"
MASKED_SOFTMAX = "src/seq2seq_attention/model/attention.py:masked_softmax"


def _steps(run: dict, ref: str) -> list[tuple[dict, list[str]]]:
    section = run["sections"][ref]
    return [(step, section["lines"][step["line"]]["text"]) for step in section["steps"]]


def _weights_step(steps: list[tuple[dict, list[str]]]) -> int | None:
    """The first step whose first value is attention weights: a (B=1, T=1, S) tensor whose values sum to 1."""
    for k, (step, _) in enumerate(steps):
        value = step["values"][0] if step["values"] else {}
        if value.get("dims") and value["dims"][-1] == f"S={S}" and value["shape"] == [1, 1, S]:
            if abs(sum(value["values"]) - 1) < 1e-4:
                return k
    return None


REF = next(
    ref
    for ref in SENTENCE["sections"]
    if f'--8<-- "{ref}"' in (ROOT / "docs" / "bahdanau" / "attention.md").read_text(encoding="utf-8")
    and _weights_step(_steps(SENTENCE, ref)) is not None
)
"""The attention page's excerpt that makes the weights (today `Attention.forward` and `attend`)."""

STATE_JS = r"""
const box = [...document.querySelectorAll(".stepper")].find(b => b.dataset.ref === arguments[0]);
if (!box) return null;
const block = box.previousElementSibling;
const current = [...block.querySelectorAll("code > span.stepper-current")].map(s => s.textContent.trim());
const panel = box.querySelector(".stepper__panel");
const table = panel.querySelector(".stepper__table");
const scroller = panel.querySelector(".stepper__scroll");
const rect = box.getBoundingClientRect();
const text = (selector) => (box.querySelector(selector) || {}).textContent || "";
return {
  run: box.querySelector("select.stepper__run").value,
  position: text(".stepper__position"),
  pass: text(".stepper__pass"),
  passinfo: text(".stepper__passinfo"),
  about: text(".stepper__about"),
  summary: text(".stepper__summary"),
  norms: box.querySelectorAll(".stepper__norms li").length,
  live: [...box.querySelectorAll("a.stepper__live")].map(a => a.getAttribute("href")),
  current,
  names: [...panel.querySelectorAll(".stepper__name")].map(n => n.textContent),
  shapes: [...panel.querySelectorAll(".stepper__shape")].map(n => n.textContent),
  header: table ? [...table.querySelectorAll("thead th")].map(c => c.textContent) : [],
  rows: table ? [...table.querySelectorAll("tbody tr")].map(r => [...r.children].map(c => c.textContent)) : [],
  cells: table ? [...table.querySelectorAll("tbody td")].map(c => c.textContent) : [],
  table_fits: scroller ? scroller.scrollWidth <= scroller.clientWidth + 1 : null,
  overflow_cue: scroller && scroller.dataset.overflow === "true"
    ? getComputedStyle(scroller, "::before").content : null,
  legend: !!panel.querySelector(".grey-legend .grey-legend__bar"),
  aria_live: panel.getAttribute("aria-live"),
  levels: [...panel.querySelectorAll("td.stepper__cell")].map(c => Number(c.dataset.level)),
  cell_colors: [...panel.querySelectorAll("td.stepper__cell")]
    .map(c => [c.textContent, getComputedStyle(c).color, getComputedStyle(c).backgroundColor]),
  buttons: [...box.querySelectorAll(".stepper__bar > button")]
    .map(b => ({text: b.textContent.trim(), kind: b.dataset.kind, move: b.dataset.move, type: b.type,
                disabled: b.getAttribute("aria-disabled") === "true"})),
  focus_inside: box.contains(document.activeElement),
  box_right: rect.right,
  viewport: document.documentElement.clientWidth,
  page_width: document.documentElement.scrollWidth,
  scheme: document.body.getAttribute("data-md-color-scheme"),
  shape_color: getComputedStyle(panel.querySelector(".stepper__shape") || panel).color,
  background: getComputedStyle(document.body).backgroundColor,
  line_background: current.length
    ? getComputedStyle(block.querySelector("code > span.stepper-current")).backgroundColor : null,
  other_background: getComputedStyle(block.querySelector("code > span:not(.stepper-current)")).backgroundColor,
};
"""


def _rgb(css: str) -> tuple[float, ...]:
    """`rgb(...)`, `rgba(...)` or `color(srgb r g b / a)` (Chromium's color-mix) as 0-255 channels and alpha."""
    parts = [float(x) for x in re.findall(r"[\d.]+(?:e-?\d+)?", css)]
    scale = 255 if css.startswith("color(") else 1
    return tuple(c * scale for c in parts[:3]) + ((parts[3],) if len(parts) > 3 else (1.0,))


def _over(top: str, bottom: str) -> str:
    """`top` drawn over the opaque `bottom`, as rgb()."""
    t, b = _rgb(top), _rgb(bottom)
    return "rgb(" + ", ".join(str(t[3] * x + (1 - t[3]) * y) for x, y in zip(t[:3], b[:3], strict=True)) + ")"


def _luminance(rgb: tuple[float, ...]) -> float:
    def channel(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(fg: str, bg: str) -> float:
    fg_rgb, bg_rgb = _rgb(fg), _rgb(bg)
    alpha = fg_rgb[3]  # text drawn with alpha over the background
    mixed = tuple(alpha * f + (1 - alpha) * b for f, b in zip(fg_rgb[:3], bg_rgb[:3], strict=True))
    lighter, darker = sorted((_luminance(mixed), _luminance(bg_rgb)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def _number(v: float) -> str:
    """A recorded float as the page writes it (stepper.js `number`)."""
    if v == 0:
        return "0"
    if abs(v) >= 1e6 or abs(v) < 0.5e-4:
        mantissa, exponent = f"{v:.{2 if abs(v) >= 1e6 else 1}e}".split("e")
        return f"{mantissa}e{'+' if int(exponent) >= 0 else '-'}{abs(int(exponent))}"
    return f"{v:.4f}"


def _expected(step: dict) -> tuple[list[str], list[str], list[str]]:
    """A step's names, its shapes as the page writes them, and the first value's cells as the page writes them."""
    names = [v["name"] for v in step["values"]]
    shapes = []
    for value in step["values"]:
        if value["kind"] == "tensor":
            shapes.append("(" + ", ".join(value.get("dims") or map(str, value["shape"])) + ")")
        elif value["kind"] in ("module", "object"):
            shapes.append(value.get("repr") or value["type"])
    tables = [v for v in step["values"] if v["kind"] == "tensor" and ("values" in v or "top" in v)]
    if not tables or "values" not in tables[0] or isinstance(tables[0]["values"][0], list):
        return names, shapes, []
    if not tables[0]["dtype"].startswith("float"):
        return names, shapes, []
    return names, shapes, [_number(v) for v in tables[0]["values"]]


@pytest.fixture(scope="module")
def phone():
    with chromium() as driver:
        driver.set_window_size(390, 900)
        yield driver


def _open(driver, engine_site: BuiltSite, page: str, ref: str, fragment: str = ""):
    open_page(driver, (engine_site.root / page).as_uri() + fragment)
    state = lambda: driver.execute_script(STATE_JS, ref)  # noqa: E731
    WebDriverWait(driver, WAIT_S, poll_frequency=0.05).until(lambda d: state() is not None)
    box = driver.find_element(By.CSS_SELECTOR, f".stepper[data-ref='{ref}']")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", box)
    return state, box


def _scheme(driver, scheme: str) -> None:
    """Material's own toggle, clicked until the page is in `scheme` (default or slate)."""
    for _ in range(3):
        if driver.execute_script("return document.body.getAttribute('data-md-color-scheme')") == scheme:
            return
        toggle = next(
            e
            for e in driver.find_elements(By.CSS_SELECTOR, "form[data-md-component=palette] label")
            if e.is_displayed()
        )
        toggle.click()
    assert driver.execute_script("return document.body.getAttribute('data-md-color-scheme')") == scheme


def test_a_reader_steps_through_attend_with_the_keyboard_on_a_phone_in_the_dark_theme(phone, engine_site: BuiltSite):
    driver = phone
    state, box = _open(driver, engine_site, "bahdanau/attention.html", REF)
    driver.find_element(By.CSS_SELECTOR, "label[for='__palette_1']").click()  # Material's toggle: to the dark theme
    WebDriverWait(driver, WAIT_S).until(lambda d: state()["scheme"] == "slate")

    steps = _steps(SENTENCE, REF)
    first = state()
    assert first["run"] == "sentence"
    assert first["position"] == f"0 / {len(steps)}" and first["current"] == []
    assert first["aria_live"] == "polite"
    lines = [b for b in first["buttons"] if b["kind"] == "line"]
    assert [b["type"] for b in first["buttons"]] == ["button"] * 4
    assert "이전" in lines[0]["text"] and "다음" in lines[1]["text"]
    assert lines[0]["disabled"] and not lines[1]["disabled"]

    box.find_element(By.CSS_SELECTOR, "button[data-kind='line'][data-move='1']").send_keys(Keys.ARROW_RIGHT)
    shown = []
    for k, (step, text) in enumerate(steps):
        if k:
            driver.switch_to.active_element.send_keys("j" if k % 2 else Keys.ARROW_RIGHT)
        now = state()
        assert now["focus_inside"]
        names, shapes, cells = _expected(step)
        assert now["position"] == f"{k + 1} / {len(steps)}"
        assert now["current"] and now["current"][0].startswith(text[0].split("  #")[0]), (now["current"], text)
        assert now["names"] == names and now["shapes"] == shapes, (now, step)
        assert now["pass"] == (
            "t = 0 (디코딩 전)" if step["t"] == 0 else f"t = {step['t']} / {len(SENTENCE['passes'])}"
        )
        if cells:
            assert now["cells"][: len(cells)] == cells
        for cell, color, background in now["cell_colors"]:  # every shade of the grey scale stays legible
            assert _contrast(color, _over(background, now["background"])) >= 4.5, (cell, color, background)
        shown.append(now)

    weights = shown[_weights_step(steps)]
    assert f"(B=1, T=1, S={S})" in weights["shapes"] and weights["legend"]
    assert weights["header"][1:] == SENTENCE["sentences"][0]["source_tokens"]  # the columns are the sentence's tokens
    assert sum(float(c) for c in weights["cells"][:S]) == pytest.approx(1.0, abs=1e-3)
    assert any("H" in shape and "=256" in shape for now in shown for shape in now["shapes"])  # a context over H

    assert [b for b in state()["buttons"] if b["kind"] == "line"][1]["disabled"]  # the last line; the focus stays
    driver.switch_to.active_element.send_keys("k")
    assert state()["position"] == f"{len(steps) - 1} / {len(steps)}"
    driver.switch_to.active_element.send_keys(Keys.HOME)
    assert state()["position"] == f"1 / {len(steps)}" and state()["names"] == shown[0]["names"]
    driver.switch_to.active_element.send_keys(Keys.ARROW_LEFT)
    assert state()["position"] == f"1 / {len(steps)}"  # the first step is as far back as it goes
    driver.switch_to.active_element.send_keys("j")

    # readable at 390 px: nothing leaves the screen, the weights' table fits, the text stands out in the dark
    now = state()
    assert now["page_width"] <= now["viewport"] and now["box_right"] <= now["viewport"] + 0.5, now
    assert weights["table_fits"], "the weights over S scroll sideways at 390 px"
    assert _contrast(now["shape_color"], now["background"]) >= 4.5, now
    assert now["line_background"] != now["other_background"], "the highlighted line does not stand out"


def test_the_loop_steps_pass_by_pass_to_the_word_the_packaged_model_chooses_last(phone, engine_site: BuiltSite):
    from seq2seq_attention.core.checkpoint import load_checkpoint
    from seq2seq_attention.translation.translator import translate

    checkpoint = load_checkpoint(ROOT / TRACE["model"]["path"])
    source = TRACE["runs"]["free"]["sentences"][0]["source"]
    (translation,) = translate(checkpoint.model, checkpoint.vocabs, [source])

    driver = phone
    state, box = _open(driver, engine_site, "bahdanau/decoder.html", LOOP)
    _scheme(driver, "default")
    assert state()["run"] == "free"  # the loop fed its own guesses: a translation
    T = len(TRACE["runs"]["free"]["passes"])
    box.find_element(By.CSS_SELECTOR, "button[data-kind='line'][data-move='1']").send_keys(Keys.ARROW_RIGHT)
    assert state()["pass"] == "t = 0 (디코딩 전)"
    chosen, fed = [], []
    for t in range(1, T + 1):
        driver.switch_to.active_element.send_keys("]")
        now = state()
        assert now["focus_inside"] and now["pass"] == f"t = {t} / {T}", now["pass"]
        match = re.fullmatch(r"디코딩 스텝 t = (\d+): 입력 «(.+)» → 고른 단어 «(.+)»", now["passinfo"])
        assert match and int(match[1]) == t, now["passinfo"]
        fed.append(match[2])
        chosen.append(match[3])
        assert any(f"#s={source.replace(' ', '+')}&step.bahdanau={t}" in href for href in now["live"]), now["live"]
    assert chosen == [*translation.split(), "<eos>"], (chosen, translation)  # the last pass: <eos>, as the model
    assert fed == ["<sos>", *chosen[:-1]]  # each pass fed the word chosen at the one before
    assert state()["pass"] == f"t = {T} / {T}"
    driver.switch_to.active_element.send_keys("]")
    assert state()["pass"] == f"t = {T} / {T}"  # the last pass is as far as it goes

    # the lines that feed the guess light up, in a pass after the first
    driver.switch_to.active_element.send_keys("[")
    for _ in range(12):
        if state()["current"][0].startswith("guess = "):
            break
        driver.switch_to.active_element.send_keys("j")
    now = state()
    assert now["current"][0].startswith("guess = ") and now["names"] == ["guess"], now
    assert now["pass"] == f"t = {T - 1} / {T}" and len(now["cells"]) == 1
    assert now["cells"][0].endswith(" " + chosen[T - 3]), now["cells"]  # the index of the word chosen a pass before
    driver.switch_to.active_element.send_keys("j")
    assert state()["current"][0].startswith("step_input = torch.where(")

    # the training step: each pass feeds the target; the loss and the gradient norms
    Select(box.find_element(By.CSS_SELECTOR, "select.stepper__run")).select_by_value("training")
    training = TRACE["runs"]["training"]
    now = state()
    assert now["run"] == "training" and now["position"].startswith("0 / ")
    assert f"{training['training_step']['loss']:.4f}" in now["summary"]
    assert now["norms"] == len(training["training_step"]["grad_norms"]) >= 5
    box.find_element(By.CSS_SELECTOR, "button[data-kind='pass'][data-move='1']").send_keys("]")
    for t in range(2, 4):
        driver.switch_to.active_element.send_keys("]")
        now = state()
        target = training["passes"][t - 1]["target"][0]
        assert f"입력 «{training['passes'][t - 2]['target'][0]}»" in now["passinfo"]
        assert f"정답 «{target}»" in now["passinfo"] and "손실 " in now["passinfo"]
    while not state()["current"][0].startswith("step_input = embedded"):
        driver.switch_to.active_element.send_keys("j")
    assert state()["names"] == ["step_input"]


def test_a_padded_position_is_weighted_exactly_zero_in_a_table_that_scrolls_with_a_cue(phone, engine_site: BuiltSite):
    driver = phone
    state, box = _open(driver, engine_site, "bahdanau/attention.html", MASKED_SOFTMAX)
    Select(box.find_element(By.CSS_SELECTOR, "select.stepper__run")).select_by_value("batch")
    batch = TRACE["runs"]["batch"]
    short, long = (s["source_tokens"] for s in batch["sentences"])
    assert state()["run"] == "batch" and all(f"«{s['source']}»" in state()["about"] for s in batch["sentences"])
    box.find_element(By.CSS_SELECTOR, "button[data-kind='line'][data-move='1']").send_keys(Keys.ARROW_RIGHT)
    for _ in range(6):
        if state()["current"][0].startswith("return F.softmax(scores, dim=-1).masked_fill"):
            break
        driver.switch_to.active_element.send_keys("j")
    now = state()
    assert now["shapes"] == [f"(B=2, T=1, S={len(long)})"], now
    padded = now["rows"][0][1 + len(short) :]
    assert now["rows"][0][0] == "b=0" and padded == ["0 <pad>"] * (len(long) - len(short)), now["rows"]
    assert all(not cell.startswith("0 ") for cell in now["rows"][1][1:])  # no real token is weighted 0
    assert now["rows"][0][1].endswith(" je")
    # 390 px: the table scrolls inside its box, says so, and the page does not scroll sideways
    assert not now["table_fits"] and now["overflow_cue"] and "옆으로" in now["overflow_cue"], now
    assert now["page_width"] <= now["viewport"] and now["box_right"] <= now["viewport"] + 0.5


def test_the_most_likely_word_is_the_emphasised_end_of_the_grey_scale(phone, engine_site: BuiltSite):
    ref = "src/seq2seq_attention/model/decoders.py:after_loop"
    state, box = _open(phone, engine_site, "bahdanau/decoder.html", ref)
    box.find_element(By.CSS_SELECTOR, "button[data-kind='line'][data-move='1']").send_keys(Keys.ARROW_RIGHT)
    while not state()["current"][0].startswith("decoder_outputs = F.log_softmax"):
        phone.switch_to.active_element.send_keys("j")
    now = state()
    T = len(TRACE["runs"]["free"]["passes"])
    levels = [now["levels"][5 * t : 5 * t + 5] for t in range(T)]  # each pass: its five most likely words, best first
    assert all(row == sorted(row, reverse=True) and row[0] > row[-1] for row in levels), levels  # likelier, lighter
    assert max(map(max, levels)) == 255 and all(row[0] >= 250 for row in levels), levels  # each chosen word: ~white
    assert now["legend"]


PANEL_JS = r"""
const box = [...document.querySelectorAll(".stepper")].find(b => b.dataset.ref === arguments[0]);
return [...box.querySelectorAll(".stepper__panel .stepper__value")].map(v => ({
  name: (v.querySelector(".stepper__name") || {}).textContent,
  legend: (v.querySelector(".grey-legend") || {}).textContent || "",
  cells: [...v.querySelectorAll("td.stepper__cell")].map(c => [c.textContent, getComputedStyle(c).backgroundColor,
    c.dataset.level === undefined ? null : Number(c.dataset.level)]),
}));
"""
NUMBER = re.compile(r"^-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def test_each_coloured_table_has_a_legend_that_is_true_for_its_colours(phone, engine_site: BuiltSite):
    """Every line of the attention page's excerpt and the decoder page's `step`, one sentence: attention weights on the
    0-1 grey scale (weight w is grey floor(256 w), the legend says 0 to 1); a table with a negative number on the
    diverging scale (blue below 0, white at 0, red above, the legend says so), so -1 and +1 never look alike;
    other numbers by value over the table's largest, and the legend says that instead of the heatmaps' scale."""
    driver = phone
    seen = set()
    step_ref = "src/seq2seq_attention/model/decoders.py:step"
    for page, ref in (("bahdanau/attention.html", REF), ("bahdanau/decoder.html", step_ref)):
        state, box = _open(driver, engine_site, page, ref)
        box.find_element(By.CSS_SELECTOR, "button[data-kind='line'][data-move='1']").send_keys(Keys.HOME)
        for k in range(len(_steps(SENTENCE, ref))):
            if k:
                driver.switch_to.active_element.send_keys("j")
            for table in driver.execute_script(PANEL_JS, ref):
                numbers = [NUMBER.match(text) for text, _, _ in table["cells"]]
                if not table["cells"] or not all(numbers):  # a mask (True/False) or no table
                    continue
                values = [float(match[0]) for match in numbers]
                legend = " ".join(table["legend"].split())
                where = (page, k, table["name"], legend)
                if "어텐션 가중치" in legend:
                    seen.add("weights")
                    assert legend.startswith("0") and "1" in legend and all(0 <= v <= 1 for v in values), where
                    for (_, _, level), v in zip(table["cells"], values, strict=True):
                        assert abs(level - min(255, int(256 * v))) <= 1, (where, v, level)  # shown to 4 decimals
                elif "부호 있는 값" in legend:
                    seen.add("signed")
                    assert min(values) < 0, where
                    for (_, background, _), v in zip(table["cells"], values, strict=True):
                        red, _, blue = _rgb(background)[:3]
                        assert (blue > red) if v < 0 else (red > blue) if v > 0 else red == blue, (where, v, background)
                elif "로그 확률" in legend:
                    seen.add("log")
                else:
                    seen.add("magnitude")
                    assert "이 표에서 가장 큰 값이 흰색" in legend and min(values) >= 0, where
                    assert "히트맵" not in legend, where
    assert {"weights", "signed"} <= seen, seen


GREY_JS = r"""
const g = window.greyScale;
return {cmap: g.CMAP, low: g.LOW, high: g.HIGH, levels: arguments[0].map(g.level),
        colours: arguments[0].map(g.colour)};
"""


def test_one_grey_scale_for_the_stepper_the_heatmaps_and_the_live_page_in_both_themes(phone, engine_site: BuiltSite):
    import matplotlib

    from seq2seq_attention.translation.plotting import ATTENTION_CMAP

    driver = phone
    state, box = _open(driver, engine_site, "bahdanau/attention.html", REF)
    shares = [0.0, 0.001, 0.1, 0.25, 0.5, 0.5019, 0.75, 0.999, 1.0]
    grey = driver.execute_script(GREY_JS, shares)
    cmap = matplotlib.colormaps[ATTENTION_CMAP]
    assert grey["cmap"] == ATTENTION_CMAP
    assert grey["low"] == [round(255 * c) for c in cmap(0.0)[:3]] and grey["high"] == [
        round(255 * c) for c in cmap(1.0)[:3]
    ]
    assert grey["levels"] == [round(255 * cmap(s)[0]) for s in shares]  # the figures' grey for every share

    steps = _steps(SENTENCE, REF)
    k = _weights_step(steps)
    weights = steps[k][0]["values"][0]["values"]
    seen = {}
    for scheme in ("default", "slate"):
        _scheme(driver, scheme)
        box.find_element(By.CSS_SELECTOR, "button[data-kind='line'][data-move='1']").send_keys(Keys.HOME)
        for _ in range(k):
            driver.switch_to.active_element.send_keys("j")
        seen[scheme] = state()["cell_colors"][:S]
    assert seen["default"] == seen["slate"]  # the same weight, the same grey, in either theme
    for j in range(S):  # a weight w is grey floor(256 w) on 0-1, as the figures and the live page draw it
        assert _rgb(seen["default"][j][2])[:3] == (min(255, int(256 * weights[j])),) * 3, (j, weights[j])

    # the live page draws its heatmap with the same definition, which every page loads
    live = (ROOT / "docs" / "assets" / "javascripts" / "live.js").read_text(encoding="utf-8")
    assert "window.greyScale.level(w)" in live and "Math.round(255 * w)" not in live
    page = (engine_site.root / "live.html").read_text(encoding="utf-8")
    # before live.js, which draws as soon as the model answers, maybe before the scripts at the end of the page run
    assert -1 < page.find('src="assets/javascripts/greyscale.js"') < page.find('src="assets/javascripts/live.js"')


def test_the_stepper_links_to_the_live_page_and_the_live_page_links_back(phone, engine_site: BuiltSite):
    driver = phone
    state, box = _open(driver, engine_site, "bahdanau/decoder.html", "src/seq2seq_attention/model/decoders.py:step")
    href = state()["live"][0]
    target = (engine_site.root / "bahdanau" / href.split("#")[0]).resolve()
    assert target == (engine_site.root / "live.html").resolve()
    assert parse_qs(urlsplit(href).fragment)["s"] == [SENTENCE["sentences"][0]["source"]]

    # the live page's link back (live.js): the step page with the sentence and the step in its fragment
    live = (ROOT / "docs" / "assets" / "javascripts" / "live.js").read_text(encoding="utf-8")
    page = re.search(r'const STEP_PAGE = "([^"]+)"', live)[1]
    assert (engine_site.root / page).is_file()
    fragment = "#" + "&".join([f"s={SENTENCE['sentences'][0]['source'].replace(' ', '+')}", "t=3"])
    state, box = _open(driver, engine_site, page, "src/seq2seq_attention/model/decoders.py:step", fragment)
    now = state()
    assert now["run"] == "sentence" and now["pass"] == f"t = 3 / {len(SENTENCE['passes'])}", now
    assert now["current"] and "디코딩 스텝 t = 3" in now["passinfo"]


LIVE_JS = r"""
const link = document.querySelector("[data-live=line-by-line]");
const cells = [...document.querySelectorAll("[data-model-column=bahdanau] table.live-heatmap td")];
const root = document.getElementById("live-translator");
return {
  link: link ? link.getAttribute("href") : null,
  ready: root && root.dataset.ready, busy: root && root.dataset.busy, hash: location.hash,
  message: (document.querySelector("[data-live=message]") || {}).textContent, errors: window.__liveErrors || null,
  greys: cells.map(c => [window.greyScale.colour(Number(c.title)), getComputedStyle(c).backgroundColor]),
};
"""


def test_the_live_page_opens_the_stepper_sentence_and_links_back_to_its_step(phone, engine_server: str):
    """Both ways through the URLs: the stepper's link opens the live page on the sentence at step t, the live page
    draws its heatmap on the same grey scale, and its link back opens the stepper at that step."""
    driver = phone
    driver.set_window_size(1280, 1000)  # as the live page's own tests open it
    source = SENTENCE["sentences"][0]["source"]
    open_page(driver, engine_server + "bahdanau/decoder.html")
    stepper = driver.find_element(By.CSS_SELECTOR, ".stepper[data-ref$=':forward_step']")  # the page's one-step excerpt
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", stepper)
    stepper.find_element(By.CSS_SELECTOR, "button[data-kind='pass'][data-move='1']").click()
    stepper.find_element(By.CSS_SELECTOR, "button[data-kind='pass'][data-move='1']").click()
    href = stepper.find_element(By.CSS_SELECTOR, "a.stepper__live").get_attribute("href")
    assert parse_qs(urlsplit(href).fragment) == {"s": [source], "step.bahdanau": ["2"]}, href
    open_page(driver, href)
    try:
        WebDriverWait(driver, 120, poll_frequency=0.2).until(lambda d: d.execute_script(LIVE_JS)["link"])
    except TimeoutException:
        pytest.fail(f"the live page did not translate the stepper's sentence: {driver.execute_script(LIVE_JS)}")
    live = driver.execute_script(LIVE_JS)
    assert parse_qs(urlsplit(live["link"]).fragment) == {"s": [source], "t": ["2"]}, live["link"]
    assert live["greys"] and all(
        abs(_rgb(want)[0] - _rgb(got)[0]) <= 1 and _rgb(got)[0] == _rgb(got)[1] == _rgb(got)[2]
        for want, got in live["greys"]
    ), live["greys"]  # the heatmap's cells: greyscale.js's grey for their weight (to the title's 6 decimals)
    link = driver.find_element(By.CSS_SELECTOR, "[data-live=line-by-line]")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", link)
    link.click()
    ref = "src/seq2seq_attention/model/decoders.py:forward_step"
    WebDriverWait(driver, WAIT_S, poll_frequency=0.05).until(lambda d: d.execute_script(STATE_JS, ref))
    now = driver.execute_script(STATE_JS, ref)
    assert now["run"] == "sentence" and now["pass"] == f"t = 2 / {len(SENTENCE['passes'])}", now
    assert "디코딩 스텝 t = 2" in now["passinfo"] and now["current"]
    driver.set_window_size(390, 900)


def test_the_luong_page_steps_through_input_feeding_and_says_the_model_is_untrained(phone, engine_site: BuiltSite):
    ref = "src/seq2seq_attention/model/decoders.py:luong_step"
    state, box = _open(phone, engine_site, "attention/dot-product.html", ref)
    now = state()
    assert now["run"] == "luong" and "학습 전 모델" in now["about"] and now["live"] == [], now["about"]
    # the run's whole description is read once per page, in the first stepper that shows the run
    abouts = [e.text for e in phone.find_elements(By.CSS_SELECTOR, ".stepper__about") if "학습하지 않았고" in e.text]
    assert len(abouts) == 1, abouts
    title = Select(box.find_element(By.CSS_SELECTOR, "select.stepper__run")).first_selected_option.text
    assert title == TRACE["runs"]["luong"]["title"]
    box.find_element(By.CSS_SELECTOR, "button[data-kind='line'][data-move='1']").send_keys(Keys.HOME)
    while not now["current"] or not now["current"][0].startswith("embedded = torch.cat((embedded, state.feed)"):
        phone.switch_to.active_element.send_keys("j")
        now = state()
    H = TRACE["runs"]["luong"]["model"]["hidden_size"]
    assert now["names"] == ["embedded"] and now["shapes"] == [f"(B=1, 1, 2H={2 * H})"], now
