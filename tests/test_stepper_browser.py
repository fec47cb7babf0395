"""The step-through in headless Chromium: a reader on a phone, in the dark theme, with the keyboard only.

The built site (the `built_site` fixture) is opened from disk (file://, where the page cannot fetch
a JSON file: the trace is inside the page) at 390 px, switched to the dark theme with Material's own
toggle, and the excerpt of `Attention.attend` on the Bahdanau attention page is stepped through with
keys only. Each step must highlight the traced line, and the panel must show that line's tensor with
its letters and sizes and its values as recorded (`docs/assets/traces/bahdanau.json`, rounded to 4
decimals); the panel stays inside the screen, and its text is legible on the dark background.

Skipped, with the reason, only where Chromium or chromedriver is missing (`.ci/run` installs both).
"""

import json
import re

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait
from site_support import ROOT, BuiltSite, chromium, open_page

PAGE = "bahdanau/attention.html"
WAIT_S = 30
TRACE = json.loads((ROOT / "docs" / "assets" / "traces" / "bahdanau.json").read_text(encoding="utf-8"))
S = len(TRACE["sentence"]["source_tokens"])


def _weights_step(steps: list[dict]) -> int | None:
    """The first step whose first value is attention weights: a (B=1, T=1, S) tensor whose values sum to 1."""
    for k, step in enumerate(steps):
        value = step["values"][0] if step["values"] else {}
        if value.get("dims") and value["dims"][-1] == f"S={S}" and value["shape"] == [1, 1, S]:
            if abs(sum(value["values"]) - 1) < 1e-4:
                return k
    return None


REF = next(
    ref
    for ref in TRACE["sections"]
    if f'--8<-- "{ref}"' in (ROOT / "docs" / "bahdanau" / "attention.md").read_text(encoding="utf-8")
    and _weights_step(TRACE["sections"][ref]) is not None
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
return {
  position: box.querySelector(".stepper__position").textContent,
  current,
  names: [...panel.querySelectorAll(".stepper__name")].map(n => n.textContent),
  shapes: [...panel.querySelectorAll(".stepper__shape")].map(n => n.textContent),
  header: table ? [...table.querySelectorAll("thead th")].map(c => c.textContent) : [],
  cells: table ? [...table.querySelectorAll("tbody td")].map(c => c.textContent) : [],
  table_fits: scroller ? scroller.scrollWidth <= scroller.clientWidth + 1 : null,
  live: panel.getAttribute("aria-live"),
  cell_colors: [...panel.querySelectorAll("td.stepper__cell")]
    .map(c => [c.textContent, getComputedStyle(c).color, getComputedStyle(c).backgroundColor]),
  buttons: [...box.querySelectorAll(".stepper__bar > *")].filter(b => b.tagName === "BUTTON")
    .map(b => ({text: b.textContent.trim(), type: b.type, disabled: b.getAttribute("aria-disabled") === "true"})),
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


def _expected(step: dict) -> tuple[list[str], list[str], list[str]]:
    """A step's names, its shapes as the page writes them, and the first value's cells rounded to 4 decimals."""
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
    cells = [f"{v:.4f}" for v in tables[0]["values"]]
    return names, shapes, ["0.0000" if c == "-0.0000" else c for c in cells]


@pytest.fixture(scope="module")
def phone():
    with chromium() as driver:
        driver.set_window_size(390, 900)
        yield driver


def test_a_reader_steps_through_attend_with_the_keyboard_on_a_phone_in_the_dark_theme(phone, built_site: BuiltSite):
    driver = phone
    open_page(driver, (built_site.root / PAGE).as_uri())
    state = lambda: driver.execute_script(STATE_JS, REF)  # noqa: E731
    WebDriverWait(driver, WAIT_S, poll_frequency=0.05).until(lambda d: state() is not None)

    driver.find_element(By.CSS_SELECTOR, "label[for='__palette_1']").click()  # Material's toggle: to the dark theme
    WebDriverWait(driver, WAIT_S).until(lambda d: state()["scheme"] == "slate")

    steps = TRACE["sections"][REF]
    first = state()
    assert first["position"] == f"0 / {len(steps)}" and first["current"] == []
    assert first["live"] == "polite"
    assert [b["type"] for b in first["buttons"]] == ["button", "button"]
    assert "이전" in first["buttons"][0]["text"] and "다음" in first["buttons"][1]["text"]
    assert first["buttons"][0]["disabled"] and not first["buttons"][1]["disabled"]

    box = driver.find_element(By.CSS_SELECTOR, f".stepper[data-ref='{REF}']")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", box)
    box.find_element(By.CSS_SELECTOR, "button[data-move='1']").send_keys(Keys.ARROW_RIGHT)  # focused, then the key
    shown = []
    for k, step in enumerate(steps):
        if k:
            driver.switch_to.active_element.send_keys("j" if k % 2 else Keys.ARROW_RIGHT)
        now = state()
        assert now["focus_inside"]
        names, shapes, cells = _expected(step)
        assert now["position"] == f"{k + 1} / {len(steps)}"
        assert now["current"] and now["current"][0].startswith(step["text"][0].split("  #")[0]), (now["current"], step)
        assert now["names"] == names and now["shapes"] == shapes, (now, step)
        if cells:
            assert now["cells"][: len(cells)] == cells
        for text, color, background in now["cell_colors"]:  # every shade of the grey scale stays legible
            assert _contrast(color, _over(background, now["background"])) >= 4.5, (text, color, background)
        shown.append(now)

    weights = shown[_weights_step(steps)]
    assert f"(B=1, T=1, S={S})" in weights["shapes"]
    assert weights["header"][1:] == TRACE["sentence"]["source_tokens"]  # the columns are the sentence's tokens
    assert sum(float(c) for c in weights["cells"][:S]) == pytest.approx(1.0, abs=1e-3)
    assert any("H" in shape and "=256" in shape for now in shown for shape in now["shapes"])  # a context over H

    assert state()["buttons"][1]["disabled"]  # at the last line; the focus stays (aria-disabled)
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
