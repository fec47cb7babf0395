"""The live page in headless Chromium, used as a reader uses it: by mouse and by keyboard, checked against PyTorch.

The built site is served on 127.0.0.1 (`site_server`); Chromium opens `live.html` with its cache off, so
every load downloads everything. Every test that opens the page also checks that the page raised no
uncaught error and left no promise rejection unhandled (`errors`). Parity runs the page's own decoding
functions (`window.liveApi`, the functions the buttons call, computing with `assets/live/model.js`) on the 80
held-out parity sentences and compares them with the PyTorch models holding the weights of the page's
`weights.bin` files (`live_support`): identical greedy translations, top-k lists, log-probabilities within 1e-4,
probabilities within 1e-5, raw attention scores within 1e-4 (relative 1e-5), attention rows within 1e-5,
forced continuations, beam search for k = 1..5 (identical results, scores within 1e-4), both models. The
controls are then used one by one: the step buttons (step 2's candidates with step 1 kept), the force buttons,
reset, k = 1..5, both columns, the linked highlight, the URL's fragment (also opened from disk), focus after
every run.

No test here measures time: how long the first translation takes is `benchmarks/live_page.py`'s job.
"""

import functools
import json
import math
import os
import subprocess
import sys
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import numpy as np
import pytest
import torch
from live_support import (
    BEAM_SIZES,
    TOP_K,
    checkpoint_with_max_words,
    encode,
    forced_prefix,
    held_out_sentences,
    live_model,
    reference_beam,
    reference_greedy,
    stated_files,
)
from selenium import webdriver
from selenium.webdriver import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait
from site_support import PAGE_LOAD_S, ROOT
from test_site_browser import WAIT_S, _leaves_the_site, _requests, browser  # noqa: F401 (browser: a fixture)

MODELS = ("bahdanau", "luong")
THROTTLE_BYTES_PER_S = 10_000_000 / 8  # 10 Mbit/s
PAGE_BUDGET = 20_000_000
FIRST_TRANSLATION_BUDGET = 4_000_000
"""Bytes the page may download before its first translation (the site's own pages, scripts and fonts included)."""

# Runs before the page's own scripts on every document: uncaught errors and unhandled rejections are kept.
WATCH_JS = """
if (!window.__liveErrors) {
  window.__liveErrors = [];
  addEventListener("error", (e) => window.__liveErrors.push(`error: ${e.message} (${e.filename}:${e.lineno})`));
  addEventListener("unhandledrejection", (e) => window.__liveErrors.push(`unhandled rejection: ${e.reason}`));
}
"""

STATE_JS = """
const r = document.getElementById("live-translator");
const column = (m) => r.querySelector(`[data-model-column="${m}"]`);
const table = (m) => [...column(m).querySelectorAll("table.live-heatmap")].map((t) => ({
  header: [...t.tHead.rows[0].cells].map((c) => c.textContent),
  rows: [...t.tBodies[0].rows].map((row) => [...row.cells].map((c) => c.textContent)),
}));
const bar = r.querySelector("[data-live=progress-bar]");
return {ready: r.dataset.ready, done: r.dataset.done, busy: r.dataset.busy, luong: r.dataset.luong || null,
        downloaded: Number(r.dataset.downloaded || 0), first: window.liveFirstTranslationMs || null,
        result: window.liveResult || null, beam: window.liveBeam || null,
        message: r.querySelector("[data-live=message]").innerText,
        problems: [...r.querySelectorAll("[data-live=message] li")].map((li) => li.textContent),
        origin: r.querySelector("[data-live=origin]").dataset.kind || null,
        progress: r.querySelector("[data-live=progress-text]").textContent,
        bar: !bar.hidden, value: bar.value, max: bar.max, phase: bar.dataset.phase || null,
        disabled: [...r.querySelectorAll("form button, form input")].map((c) => c.disabled),
        controls: [...r.querySelectorAll("button, input, select")].filter((c) => !c.hidden)
          .map((c) => [c.dataset.live || c.textContent, c.disabled]),
        outputs: Object.fromEntries(["bahdanau", "luong"].map(
          (m) => [m, column(m).querySelector("[data-live=output]").textContent])),
        selected: Object.fromEntries(["bahdanau", "luong"].map((m) => {
          const topk = column(m).querySelector(".live-topk");
          return [m, topk ? Number(topk.dataset.step) : null];
        })),
        tables: Object.fromEntries(["bahdanau", "luong"].map((m) => [m, table(m)])),
        errors: window.__liveErrors || []};
"""
SET_AND_CLICK_JS = """
const r = document.getElementById("live-translator");
r.querySelector("[data-live=input]").value = arguments[0];
r.querySelector("[data-live=button]").click();
"""
API_JS = """
const done = arguments[arguments.length - 1];
const [call, args] = [arguments[0], arguments[1]];
window.liveApi[call](...args).then(done, (error) => done({error: String(error)}));
"""
CANDIDATES_JS = """
const panel = document.querySelector(`[data-model-column="${arguments[0]}"] [data-live=candidates]`);
const rows = (selector) => [...panel.querySelectorAll(`${selector} tbody tr`)]
  .map((row) => [...row.cells].map((c) => c.textContent));
const topk = panel.querySelector(".live-topk");
return {step: topk ? Number(topk.dataset.step) : null, topk: rows(".live-topk"), scores: rows(".live-scores")};
"""


def _state(driver) -> dict:
    return driver.execute_script(STATE_JS)


def _idle(driver, luong: bool = True) -> dict:
    """Wait until the page has loaded (both models when `luong`) and no run is going; the state then."""
    WebDriverWait(driver, 60, poll_frequency=0.05).until(
        lambda d: (
            (s := _state(d))["ready"] == "error"
            or (s["ready"] == "true" and s["done"] == "true" and s["busy"] == "false" and (s["luong"] or not luong))
        )
    )
    state = _state(driver)
    assert state["ready"] == "true", state["message"]
    assert not state["errors"], state["errors"]
    return state


def _fresh(driver, url: str) -> None:
    """Open `url` with the HTTP cache off, so that the page downloads everything again."""
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
    driver.get("about:blank")
    driver.get(url)


def _translate(driver, sentence: str) -> dict:
    driver.execute_script(SET_AND_CLICK_JS, sentence)
    return _idle(driver)


def _api(driver, call: str, *args):
    driver.set_script_timeout(WAIT_S)
    result = driver.execute_async_script(API_JS, call, list(args))
    assert not (isinstance(result, dict) and "error" in result), result
    return result


def _find(driver, selector: str, model: str | None = None) -> list:
    scope = f'[data-model-column="{model}"] ' if model else "#live-translator "
    return driver.find_elements(By.CSS_SELECTOR, scope + selector)


def _click(driver, element) -> None:
    """A mouse click, with the element scrolled to the middle first (the site's sticky header covers the top)."""
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", element)
    ActionChains(driver).move_to_element(element).click().perform()


def _hover(driver, element) -> None:
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", element)
    ActionChains(driver).move_to_element(element).perform()


def _focused(driver) -> str:
    """What has the keyboard focus: its data-live name and text."""
    return driver.execute_script(
        "const e = document.activeElement; return `${e.dataset?.live || e.tagName}:${e.textContent.trim()}`;"
    )


def _shown_probability(text: str) -> float:
    """The page's probability text as a number: "12.34%" or "3.2×10<sup>-6</sup>" (read as "3.2×10-6")."""
    if text.endswith("%"):
        return float(text[:-1]) / 100
    mantissa, exponent = text.split("×10")
    return float(mantissa) * 10 ** int(exponent)


def _words(model: str, tokens: list[int]) -> list[str]:
    return [live_model(model)[1].target.index2word[t] for t in tokens]


def _step_labels(state: dict, model: str) -> list[str]:
    return [row[0] for row in state["tables"][model][0]["rows"]]


@pytest.fixture(scope="module")
def watched(browser: webdriver.Chrome) -> webdriver.Chrome:  # noqa: F811
    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH_JS})
    return browser


def _load_live(driver: webdriver.Chrome, site_server: str) -> None:
    """The live page loaded afresh at 1280 px, its requests watched from the start, and idle."""
    _requests(driver)
    driver.set_window_size(1280, 1000)
    _fresh(driver, site_server + "live.html")
    _idle(driver)


@pytest.fixture
def live(watched: webdriver.Chrome, site_server: str) -> webdriver.Chrome:
    """The live page, loaded, idle, rows drawn without a pause (for speed), at 1280 px; no uncaught error at the end."""
    _load_live(watched, site_server)
    watched.execute_script("document.getElementById('live-translator').dataset.stepMs = '0';")
    yield watched
    assert not watched.execute_script("return window.__liveErrors;"), "the page raised an error"


@pytest.fixture
def live_api(watched: webdriver.Chrome, site_server: str) -> webdriver.Chrome:
    """The live page for tests that only call its decoding functions (`window.liveApi.decode` and `.beam`, functions
    of the model and the ids that keep nothing between calls): loaded as `live` loads it, and kept for the next such
    test while no other test opened another page in between; no uncaught error at the end of each test."""
    if not watched.execute_script("return window.__keptForApi === true;"):
        _load_live(watched, site_server)
        watched.execute_script("window.__keptForApi = true;")
    yield watched
    assert not watched.execute_script("return window.__liveErrors;"), "the page raised an error"


def _is_the_translators(url: str) -> bool:
    """A file of the translator (its weights, vocabularies, sentences, scripts), not of the site around it."""
    return "/assets/live/" in url or url.endswith("/assets/javascripts/live.js")


def test_the_page_downloads_at_most_4_mb_before_its_first_translation_from_the_site_only(watched, site_server):
    _requests(watched)
    _fresh(watched, site_server + "live.html")
    state = _idle(watched)
    fetched = watched.execute_script(
        "return performance.getEntriesByType('resource').concat(performance.getEntriesByType('navigation'))"
        ".map((e) => [e.name, e.encodedBodySize, e.startTime]);"
    )
    total = sum(size for _, size, _ in fetched)
    first = watched.execute_script("return window.liveApi.translated.bahdanau;")
    translator = [(name, size) for name, size, start in fetched if start < first and _is_the_translators(name)]
    before = sum(size for _, size in translator)
    print(f"the page fetched {total:,} bytes in {len(fetched)} requests; the translator {before:,} before its first")
    assert total <= PAGE_BUDGET, sorted(fetched, key=lambda entry: -entry[1])[:5]
    assert before <= FIRST_TRANSLATION_BUDGET, translator
    assert not [name for name, _, _ in fetched if "onnx" in name or name.endswith(".wasm")], "a runtime or graph"
    assert state["downloaded"] <= total and "불러온 파일" in state["progress"] and not state["bar"]
    stated = stated_files()
    assert state["downloaded"] == sum(sum(files.values()) for files in stated.values())
    leaks = [url for url in _requests(watched) if _leaves_the_site(url)]
    assert not leaks, "the live page made requests outside 127.0.0.1:\n" + "\n".join(leaks)
    times = watched.execute_script("return window.liveApi.translated;")
    latency = watched.find_element(By.CSS_SELECTOR, "[data-live=latency]").text
    assert set(times) == set(MODELS) and times["bahdanau"] <= state["first"] < times["luong"]
    for model, name in (("bahdanau", "바다나우"), ("luong", "루옹")):
        shown = math.floor(times[model] + 0.5)  # the page rounds half up (JavaScript), Python's round() to even
        assert f"{name} {shown:,} ms" in latency, (latency, times)


def test_at_10_mbit_s_progress_counts_against_the_known_total_never_backwards_with_controls_off(watched, site_server):
    watched.set_network_conditions(
        offline=False, latency=20, download_throughput=THROTTLE_BYTES_PER_S, upload_throughput=THROTTLE_BYTES_PER_S
    )
    watched.set_page_load_timeout(3 * PAGE_LOAD_S)  # 5 MB at 10 Mbit/s on a busy machine: the load event is late
    try:
        _fresh(watched, site_server + "live.html")
        started = time.monotonic()
        samples = []
        while (state := _state(watched))["done"] != "true" and time.monotonic() - started < 120:
            samples.append(state)
            time.sleep(0.25)
        state = _idle(watched)
    finally:
        watched.delete_network_conditions()
        watched.set_page_load_timeout(PAGE_LOAD_S)
    stated = {phase: sum(files.values()) for phase, files in stated_files().items()}
    loading = [s for s in samples if s["bar"] and s["phase"] == "first"]
    assert len(loading) >= 5, [s["progress"] for s in samples]
    assert all(all(s["disabled"]) for s in loading if s["ready"] != "true"), "a control was on before a model loaded"
    both = stated["first"] + stated["luong"]
    assert {s["max"] for s in samples if s["bar"]} == {both}, "one bar over both models' stated files"
    values = [s["value"] for s in samples if s["bar"]]
    assert values == sorted(values), f"the progress went backwards: {values}"  # also when the Luong model starts
    assert max(s["value"] for s in loading) <= stated["first"]
    assert len({s["value"] for s in loading}) >= 5, "the progress did not move"
    assert all("첫 번역에 필요한 파일" in s["progress"] and "MB" in s["progress"] for s in loading)
    assert any(s["phase"] == "luong" and s["bar"] and "루옹 모델" in s["progress"] for s in samples)
    assert not state["bar"] and "불러온 파일" in state["progress"]


def test_controls_are_off_during_a_run_even_those_drawn_during_it(live):
    live.execute_script("document.getElementById('live-translator').dataset.stepMs = '150';")
    sentence = held_out_sentences(1)[0]
    live.execute_script(
        "const r = document.getElementById('live-translator');"
        "r.querySelector('[data-live=input]').value = arguments[0];"
        "const b = r.querySelector('[data-live=button]'); b.click(); b.click();",
        sentence,
    )
    WebDriverWait(live, WAIT_S, poll_frequency=0.02).until(lambda d: len(_find(d, "[data-live=step]", "bahdanau")) >= 2)
    during = _state(live)
    assert during["busy"] == "true"
    assert all(disabled for _, disabled in during["controls"]), [c for c in during["controls"] if not c[1]]
    live.execute_script(
        "const r = document.getElementById('live-translator');"
        "r.querySelector('[data-live=input]').value = 'nous sommes tres en retard .';"
        "r.querySelector('[data-live=form]').requestSubmit();"
        "r.querySelector('[data-live=button]').click();"
        "r.querySelector('[data-live=example]').click();"
        "r.querySelector('[data-live=step]').click();"
    )
    state = _idle(live)
    for model in MODELS:
        expected = reference_greedy(model, encode(sentence))["tokens"]
        (table,) = state["tables"][model]  # one table per model
        assert table["header"][1:] == [*sentence.split(), "<eos>"]
        assert len(table["rows"]) == len(expected), (model, table["rows"])
        assert all(len(row) == len(table["header"]) for row in table["rows"]), table["rows"]
        assert [row[0].split(" ")[1] for row in table["rows"]] == _words(model, expected)


@pytest.mark.parametrize("model", MODELS)
def test_step_2_can_be_inspected_and_forced_with_step_1_kept_by_mouse_and_keyboard(live, model):
    """Click step 2: its candidates; force its runner-up: step 1 stays, step 2 is ✎, the rest is greedy after it."""
    sentence = held_out_sentences(1)[0]
    ids = encode(sentence)
    greedy = reference_greedy(model, ids)
    _translate(live, sentence)
    steps = _find(live, "[data-live=step]", model)
    _click(live, steps[1])  # mouse
    shown = live.execute_script(CANDIDATES_JS, model)
    assert shown["step"] == 1 and [row[1] for row in shown["topk"]] == _words(
        model, greedy["logits"][1].topk(TOP_K).indices.tolist()
    )
    steps[2].send_keys(Keys.ENTER)  # keyboard
    assert live.execute_script(CANDIDATES_JS, model)["step"] == 2
    steps[1].send_keys(Keys.SPACE)
    assert live.execute_script(CANDIDATES_JS, model)["step"] == 1

    runner_up = int(greedy["logits"][1].topk(2).indices[1])
    _click(live, _find(live, ".live-topk tbody tr:nth-child(2) [data-live=force]", model)[0])
    state = _idle(live)
    prefix = [greedy["tokens"][0], runner_up]
    expected = reference_greedy(model, ids, prefix)["tokens"]
    labels = _step_labels(state, model)
    assert [label.split(" ")[1] for label in labels] == _words(model, expected)
    assert labels[0] == f"1. {_words(model, greedy['tokens'][:1])[0]}" and labels[1].endswith("✎")
    assert not any(label.endswith("✎") for i, label in enumerate(labels) if i != 1)
    selected = min(2, len(expected) - 1)  # the step after the forced one: force it next
    assert state["selected"][model] == selected and _focused(live).startswith(f"step:{selected + 1}. "), _focused(live)

    # Step 3 by keyboard, with step 2's choice kept.
    runner_up_3 = int(reference_greedy(model, ids, prefix)["logits"][2].topk(2).indices[1])
    _find(live, ".live-topk tbody tr:nth-child(2) [data-live=force]", model)[0].send_keys(Keys.ENTER)
    state = _idle(live)
    prefix3 = [*expected[:2], runner_up_3]
    labels = _step_labels(state, model)
    assert [label.split(" ")[1] for label in labels] == _words(model, reference_greedy(model, ids, prefix3)["tokens"])
    assert [i for i, label in enumerate(labels) if label.endswith("✎")] == [1, 2]
    assert _focused(live).startswith(f"step:{min(3, len(labels) - 1) + 1}. "), _focused(live)

    # Reset, by keyboard: greedy again, focus on step 1.
    reset = _find(live, "[data-live=reset]", model)[0]
    assert reset.is_displayed()
    reset.send_keys(Keys.ENTER)
    state = _idle(live)
    assert [label.split(" ")[1] for label in _step_labels(state, model)] == _words(model, greedy["tokens"])
    assert not _find(live, "[data-live=reset]", model)[0].is_displayed()
    assert _focused(live).startswith("step:1. "), _focused(live)
    other = "luong" if model == "bahdanau" else "bahdanau"
    assert not any(label.endswith("✎") for label in _step_labels(state, other))  # the other column is untouched


def _recorded() -> dict[str, list[int]]:
    """The sentences the stepper recorded alone (assets/traces/bahdanau.json) and the steps t of each."""
    trace = json.loads((ROOT / "docs" / "assets" / "traces" / "bahdanau.json").read_text(encoding="utf-8"))
    found: dict[str, list[int]] = {}
    for run in trace["runs"].values():
        if len(run["sentences"]) == 1 and "passes" in run:
            found.setdefault(run["sentences"][0]["source"], [p["t"] for p in run["passes"]])
    return found


def test_the_link_to_the_stepper_is_only_for_recorded_sentences_and_lands_on_the_step_in_view(live, site_server):
    """Issue 52: for a sentence the stepper did not record, the candidates say which ones it did and offer one; for a
    recorded one, each recorded step links to the stepper, which opens at that step with its line on screen."""
    recorded = _recorded()
    unrecorded = next(s for s in held_out_sentences() if s not in recorded)
    state = _translate(live, unrecorded)
    WebDriverWait(live, WAIT_S, poll_frequency=0.05).until(lambda d: _find(d, "[data-live=recorded-example]"))
    assert not _find(live, "[data-live=line-by-line]", "bahdanau")
    box = _find(live, "[data-live=line-by-line-box]", "bahdanau")[0]
    assert all(f"«{sentence}»" in box.text for sentence in recorded), box.text
    assert not _find(live, "[data-live=line-by-line-box]", "luong")  # the stepper walks the Bahdanau decoder only
    _click(live, _find(live, "[data-live=recorded-example]", "bahdanau")[0])
    state = _idle(live)
    sentence = next(iter(recorded))
    assert state["result"]["source"] == [*sentence.split(), "<eos>"]
    last = len(recorded[sentence])
    _click(live, _find(live, "[data-live=step]", "bahdanau")[last - 1])
    link = _find(live, "[data-live=line-by-line]", "bahdanau")[0]
    assert parse_qs(urlsplit(link.get_attribute("href")).fragment) == {"s": [sentence], "t": [str(last)]}
    _click(live, link)
    WebDriverWait(live, WAIT_S, poll_frequency=0.05).until(
        lambda d: d.execute_script("return !!document.querySelector('.stepper-current');")
    )
    landed = live.execute_script(
        "const line = document.querySelector('.stepper-current').getBoundingClientRect();"
        "const ref = document.querySelector('.stepper-current').closest('[data-stepper]').dataset.stepper;"
        "const box = document.querySelector(`.stepper[data-ref='${ref}']`);"
        "return {top: line.top, bottom: line.bottom, height: innerHeight, panel: box.textContent};"
    )
    assert 0 <= landed["top"] and landed["bottom"] <= landed["height"], landed  # the line is on screen
    assert f"t = {last} /" in landed["panel"], landed["panel"]
    live.get(site_server + "live.html")  # back on the live page for the fixture's check
    _idle(live)


def test_candidates_show_log_probabilities_and_the_raw_scores_of_the_selected_step(live):
    sentence = held_out_sentences(2)[1]
    ids = encode(sentence)
    _translate(live, sentence)
    for model in MODELS:
        reference = reference_greedy(model, ids)
        for t in range(len(reference["tokens"])):
            _click(live, _find(live, "[data-live=step]", model)[t])
            shown = live.execute_script(CANDIDATES_JS, model)
            logp = torch.log_softmax(reference["logits"][t].double(), dim=-1)
            top = reference["logits"][t].topk(TOP_K).indices.tolist()
            assert [row[1] for row in shown["topk"]] == _words(model, top)
            for row, token in zip(shown["topk"], top, strict=True):
                assert abs(float(row[2]) - float(reference["logits"][t, token])) < 2e-3, row
                assert abs(float(row[3]) - float(logp[token])) < 2e-3, (row, float(logp[token]))
                assert abs(_shown_probability(row[4]) / float(logp[token].exp()) - 1) < 0.01, row  # no row reads 0
            scores, weights = reference["scores"][t], reference["weights"][t]
            assert [row[1] for row in shown["scores"]] == [*sentence.split(), "<eos>"]
            np.testing.assert_allclose([float(row[2]) for row in shown["scores"]], scores.numpy(), atol=2e-3)
            np.testing.assert_allclose([float(row[4]) for row in shown["scores"]], weights.numpy(), atol=2e-4)
            best = max(range(len(shown["scores"])), key=lambda j: float(shown["scores"][j][2]))
            assert best == int(weights.argmax())  # the largest score is the largest weight


def test_hovering_or_focusing_a_word_lights_the_other_side_by_weight(live):
    sentence = held_out_sentences(3)[2]
    ids = encode(sentence)
    _translate(live, sentence)
    weights = reference_greedy("bahdanau", ids)["weights"].numpy()  # (T, S)
    headers = "thead th[data-position]"
    links = "return [...document.querySelectorAll(arguments[0])].map((e) => e.dataset.link ?? null);"
    steps = _find(live, "[data-live=step]", "bahdanau")
    _hover(live, steps[1])
    lit = live.execute_script(links, f"[data-model-column=bahdanau] {headers}")
    np.testing.assert_allclose([float(x) for x in lit], weights[1], atol=2e-3)
    steps[1].send_keys(Keys.TAB)  # the keyboard: from step 2's button to step 3's
    assert _focused(live).startswith("step:3. "), _focused(live)
    lit = live.execute_script(links, f"[data-model-column=bahdanau] {headers}")
    np.testing.assert_allclose([float(x) for x in lit], weights[2], atol=2e-3)
    source = _find(live, headers, "bahdanau")
    source[0].send_keys(Keys.TAB)  # from the first source word to the second, by keyboard
    assert _focused(live).startswith("TH:" + sentence.split()[1]), _focused(live)
    lit = live.execute_script(links, "[data-model-column=bahdanau] [data-live=step]")
    np.testing.assert_allclose([float(x) for x in lit], weights[:, 1], atol=2e-3)
    _hover(live, source[0])
    lit = live.execute_script(links, "[data-model-column=bahdanau] [data-live=step]")
    np.testing.assert_allclose([float(x) for x in lit], weights[:, 0], atol=2e-3)
    live.execute_script("document.activeElement.blur();")
    _hover(live, live.find_element(By.CSS_SELECTOR, "[data-live=input]"))
    assert not any(live.execute_script(links, "#live-translator [data-link]"))


def test_the_url_fragment_keeps_the_sentence_the_forced_words_k_and_the_steps_and_restores_them(live, site_server):
    sentence = held_out_sentences(4)[3]
    ids = encode(sentence)
    _translate(live, sentence)
    Select(live.find_element(By.CSS_SELECTOR, "[data-live=beam-k]")).select_by_visible_text("5")
    _click(live, _find(live, "[data-live=step]", "luong")[1])
    _click(live, _find(live, ".live-topk tbody tr:nth-child(3) [data-live=force]", "luong")[0])
    forced = _idle(live)
    _click(live, _find(live, "[data-live=step]", "bahdanau")[2])
    fragment = live.execute_script("return location.hash;")
    params = {key: value[0] for key, value in parse_qs(fragment[1:]).items()}
    greedy = reference_greedy("luong", ids)
    third = int(greedy["logits"][1].topk(3).indices[2])
    assert params["s"] == sentence and params["k"] == "5" and params["step.bahdanau"] == "3", params
    assert params["force.luong"] == f"2:{_words('luong', [third])[0]}" and "force.bahdanau" not in params, params

    _fresh(live, site_server + "live.html" + fragment)
    restored = _idle(live)
    assert restored["tables"] == forced["tables"] and restored["selected"]["bahdanau"] == 2
    assert live.find_element(By.CSS_SELECTOR, "[data-live=input]").get_attribute("value") == sentence
    assert Select(live.find_element(By.CSS_SELECTOR, "[data-live=beam-k]")).first_selected_option.text == "5"
    tokens = reference_greedy("luong", ids, [greedy["tokens"][0], third])["tokens"]
    assert [label.split(" ")[1] for label in _step_labels(restored, "luong")] == _words("luong", tokens)


MARKUP = {  # every field of the fragment, each with a payload that would run if it became markup
    "force.bahdanau": "1:<img src=x onerror=\"window.__ran='force'\">",
    "k": "<svg onload=\"window.__ran='k'\">",
    "beam": "<script>window.__ran='beam'</script>",
    "step.luong": "<img src=x onerror=\"window.__ran='step'\">",
}
MARKUP_SENTENCE = "je suis <img src=x onerror=\"window.__ran='s'\"> ."
INJECTED_JS = """
const r = document.getElementById("live-translator");
return {ran: window.__ran || null,
        elements: [...r.querySelectorAll("img, svg[onload], script, iframe, [onerror], [onload]")]
          .map((e) => e.outerHTML),
        input: r.querySelector("[data-live=input]").value,
        message: r.querySelector("[data-live=message]").textContent};
"""


@pytest.mark.parametrize("sentence", ["je suis en retard .", MARKUP_SENTENCE], ids=["sentence", "markup-sentence"])
def test_markup_in_any_fragment_field_is_shown_as_text_and_never_runs(live, site_server, sentence):
    fragment = "#" + urlencode({"s": sentence, **MARKUP})
    _fresh(live, site_server + "live.html" + fragment)
    WebDriverWait(live, 60, poll_frequency=0.05).until(
        lambda d: (s := _state(d))["ready"] == "true" and s["done"] == "true" and s["busy"] == "false"
    )
    seen = live.execute_script(INJECTED_JS)
    assert seen["ran"] is None and seen["elements"] == [], seen
    assert seen["input"] == sentence  # the sentence, markup and all, as the text of the input box
    if sentence == MARKUP_SENTENCE:  # refused: the words of the markup, normalised, are named as unknown words
        assert "'onerror'" in seen["message"] and "'img'" in seen["message"], seen["message"]
    else:  # translated; the forcing the page could not read is named as text
        assert MARKUP["force.bahdanau"] in seen["message"], seen["message"]
        assert _state(live)["tables"]["bahdanau"], "the sentence was not translated"
    assert not live.execute_script("return window.__liveErrors;"), "the page raised an error"


def test_beam_search_by_mouse_and_keyboard_for_k_1_to_5_draws_the_tree(live):
    sentence = held_out_sentences(5)[4]
    ids = encode(sentence)
    _translate(live, sentence)
    for model in MODELS:
        Select(live.find_element(By.CSS_SELECTOR, "[data-live=beam-model]")).select_by_value(model)
        for k in BEAM_SIZES:
            Select(live.find_element(By.CSS_SELECTOR, "[data-live=beam-k]")).select_by_visible_text(str(k))
            run = live.find_element(By.CSS_SELECTOR, "[data-live=beam-run]")
            _click(live, run) if k % 2 else run.send_keys(Keys.ENTER)
            state = _idle(live)
            tokens, score = reference_beam(model, ids, k)
            assert state["beam"]["model"] == model and state["beam"]["k"] == k
            assert state["beam"]["tokens"] == tokens and abs(state["beam"]["score"] - score) < 1e-4
            tree = live.execute_script(
                "const t = document.querySelector('[data-live=beam-tree]');"
                "return {kept: [...t.querySelectorAll('.live-hyp.kept')].map((n) => Number(n.dataset.step)),"
                "        finished: t.querySelectorAll('.live-hyp.finished').length,"
                "        best: [...t.querySelectorAll('.live-hyp.best')].map((n) => n.textContent),"
                "        root: t.querySelector(':scope > li > .live-hyp').textContent};"
            )
            depths = [tree["kept"].count(t) for t in range(state["beam"]["steps"])]
            assert tree["root"] == "<sos>" and all(count <= k for count in depths), depths
            assert all(count == k for count in depths[1:-1]) or k == 1, depths
            assert tree["finished"] >= 1 and len(tree["best"]) == 1 and "★" in tree["best"][0], tree
            assert _focused(live) == "beam-run:빔 서치"
            output = live.find_element(By.CSS_SELECTOR, "[data-live=beam-output]").text
            assert " ".join(_words(model, tokens[:-1])) in output and f"k = {k}" in output


def test_focus_returns_to_the_control_that_started_a_run_and_outputs_are_announced(live):
    field = live.find_element(By.CSS_SELECTOR, "[data-live=input]")
    field.clear()
    field.send_keys("nous sommes en retard .", Keys.ENTER)  # by keyboard: Enter in the field
    _idle(live)
    assert _focused(live).startswith("input"), _focused(live)
    live.switch_to.active_element.send_keys(Keys.BACKSPACE, "!")  # typing goes on in the field
    assert field.get_attribute("value") == "nous sommes en retard !"
    _click(live, live.find_element(By.CSS_SELECTOR, "[data-live=button]"))
    _idle(live)
    assert _focused(live) == "button:번역"
    example = _find(live, "[data-live=example]")[1]
    example.send_keys(Keys.ENTER)
    _idle(live)
    assert _focused(live) == f"example:{example.text}"
    regions = live.execute_script(
        "return [...document.querySelectorAll('#live-translator [aria-live], #live-translator [role=alert],"
        " #live-translator [role=status]')].map((e) => e.dataset.live);"
    )
    for name in ("output", "message", "origin", "beam-output", "latency", "model-error", "progress-text"):
        assert name in regions, (name, regions)
    assert regions.count("output") == 2


def test_a_question_mark_is_explained_by_what_the_training_sentences_look_like(live):
    from seq2seq_attention import load_pairs, split_pairs

    train = {pair.source for pair in split_pairs(load_pairs())[0]}
    endings = {mark: sum(s.endswith(mark) for s in train) for mark in ".!?"}
    assert endings["?"] == 0
    state = _translate(live, "Tu es fatigué ?")
    (problem,) = state["problems"]
    assert "'?'" in problem and "물음표로 끝나는 문장은 없습니다" in problem and "질문" in problem
    assert f"{endings['.']:,}개가 '.'로" in problem and f"{endings['!']:,}개가 '!'로" in problem
    assert f"학습 문장 {len(train):,}개" in problem
    state = _translate(live, "je suis un xylophoniste .")
    assert "'xylophoniste'" in state["problems"][0] and "주어와 être로 시작하는" in state["problems"][0]


def test_a_luong_file_that_fails_to_load_is_said_and_stays_said(watched, site_server):
    watched.execute_cdp_cmd("Network.enable", {})
    watched.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*live/luong/weights.bin"]})
    try:
        _fresh(watched, site_server + "live.html")
        state = _idle(watched)
        assert state["luong"] == "error"
        error = watched.find_element(By.CSS_SELECTOR, "[data-model-column=luong] [data-live=model-error]")
        assert error.is_displayed() and "루옹 모델을 불러오지 못했습니다" in error.text
        state = _translate(watched, "nous sommes en retard .")
        assert error.is_displayed() and "루옹 모델을 불러오지 못했습니다" in error.text
        assert state["tables"]["bahdanau"] and not state["tables"]["luong"]
        assert state["outputs"]["bahdanau"] and not state["errors"], state["errors"]
        assert watched.execute_script(
            "return document.querySelector('[data-live=beam-model] option[value=luong]').disabled;"
        )
    finally:
        watched.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})


def test_controls_look_like_controls_in_both_themes(live):
    for scheme in ("default", "slate"):
        style = live.execute_script(
            "document.body.setAttribute('data-md-color-scheme', arguments[0]);"
            "const r = document.getElementById('live-translator');"
            "const s = (e) => getComputedStyle(e);"
            "const i = s(r.querySelector('[data-live=input]')), b = s(r.querySelector('[data-live=button]'));"
            "return {inputBorder: i.borderTopWidth + ' ' + i.borderTopStyle, inputText: i.color,"
            "        inputBg: i.backgroundColor, buttonBg: b.backgroundColor, buttonText: b.color, cursor: b.cursor,"
            "        page: s(document.body).backgroundColor};",
            scheme,
        )
        assert style["inputBorder"] == "1px solid" and style["cursor"] == "pointer", (scheme, style)
        assert style["buttonBg"] not in ("rgba(0, 0, 0, 0)", "transparent", style["page"]), (scheme, style)
        assert style["inputText"] != style["inputBg"] and style["buttonText"] != style["buttonBg"], (scheme, style)
    live.execute_script("document.body.setAttribute('data-md-color-scheme', 'default');")


CUT_JS = """
const r = document.getElementById("live-translator");
const cut = [...r.querySelectorAll("*")].filter((e) => !e.matches("input, select, button")).filter((e) => {
  const style = getComputedStyle(e);
  return e.offsetParent !== null && ["auto", "scroll", "hidden", "clip"].includes(style.overflowX)
    && e.scrollWidth > e.clientWidth + 1;
}).map((e) => ({cls: e.className, live: e.dataset.live || null, cue: e.dataset.overflow || null,
                before: getComputedStyle(e, "::before").content}));
const right = Math.max(...[...r.querySelectorAll("*")]
  .filter((e) => e.offsetParent !== null && !e.closest(".live-scroll")).map((e) => e.getBoundingClientRect().right));
return {cut, right, width: document.documentElement.clientWidth, scroll: document.documentElement.scrollWidth};
"""


def test_at_390_px_nothing_is_cut_without_a_scroll_cue(live):
    try:
        live.set_window_size(390, 900)
        _translate(live, "nous sommes tous d accord .")  # 7 source columns
        live.execute_script(
            "const r = document.getElementById('live-translator');"
            "r.querySelector('[data-live=beam-k]').value = '5'; r.querySelector('[data-live=beam-run]').click();"
        )
        _idle(live)
        layout = live.execute_script(CUT_JS)
        assert layout["scroll"] <= layout["width"] + 1, f"the page scrolls sideways: {layout}"
        assert layout["right"] <= layout["width"] + 1, layout
        # the candidates (their 강요 buttons at the right end), the scores and the heatmap of 7 source words fit whole
        assert layout["cut"] == [], f"at 390 px a table is wider than its box: {layout['cut']}"
        for box in layout["cut"]:
            assert "live-scroll" in box["cls"] and box["cue"] == "true" and "옆으로" in box["before"], box
        beam = live.execute_script(
            "const box = document.querySelector('[data-live=beam-result]'); return [box.scrollWidth, box.clientWidth];"
        )
        assert beam[0] <= beam[1] + 1, f"the beam tree does not fit 390 px: {beam}"
    finally:
        live.set_window_size(1280, 1000)


def test_the_page_says_what_the_model_knows_and_where_a_sentence_comes_from(live):
    from seq2seq_attention import load_pairs, split_pairs

    train, held_out = (set(pair.source for pair in side) for side in split_pairs(load_pairs()))
    examples = live.execute_script(
        "return [...document.querySelectorAll('[data-live=example]')].map(e => e.textContent);"
    )
    assert len(examples) >= 3 and all(e in held_out and e not in train for e in examples), examples
    live.execute_script("document.querySelector('[data-live=example]').click();")
    state = _idle(live)
    assert state["origin"] == "held-out" and state["result"]["source"][:-1] == examples[0].split()
    assert "토큰 6개까지" in live.execute_script("return document.querySelector('[data-live=known]').textContent;")
    trained = sorted(train - held_out)[0]
    assert _translate(live, trained)["origin"] == "train"
    assert _translate(live, "Je suis fatigué 😀.")["origin"] == "new"
    assert "😀" in _state(live)["message"]


def test_a_refusal_lists_every_problem_at_once(live):
    state = _translate(live, "Elle est plus grande que moi ок, xylophoniste.")
    problems = state["problems"]
    assert len(problems) == 3, problems
    assert "라틴 문자가 아닌 글자(ок)" in problems[0]
    assert "토큰이 8개" in problems[1] and "문장부호도 토큰" in problems[1]
    assert "'xylophoniste'" in problems[2] and "'elle'" not in problems[2]
    assert all(not table for table in state["tables"].values()) and state["result"].get("error")


def test_the_table_has_axes_the_figures_grey_scale_and_a_legend_on_one_line(live):
    _translate(live, "je suis fatigue .")
    cells = live.execute_script(
        "return [...document.querySelectorAll('[data-model-column=bahdanau] table.live-heatmap td')]"
        ".map(c => [Number(c.title), getComputedStyle(c).backgroundColor]);"
    )
    assert cells
    for weight, colour in cells:  # matplotlib's "gray": black 0, white 1
        level = min(255, math.floor(256 * weight))  # greyscale.js: matplotlib's lookup in its 256 greys
        assert colour == f"rgb({level}, {level}, {level})", (weight, colour)
    text = live.execute_script(
        "return [document.querySelector('[data-model-column=bahdanau] .live-caption').textContent,"
        "        getComputedStyle(document.querySelector('.live-legend-bar')).backgroundImage];"
    )
    assert "원문 토큰" in text[0] and "만든 단어" in text[0]
    assert "rgb(0, 0, 0)" in text[1] and "rgb(255, 255, 255)" in text[1]
    legend = live.execute_script(
        "const l = document.querySelector('[data-live=legend]'), sub = l.querySelector('sub');"
        "const range = document.createRange(); range.setStart(l.firstChild, 0); range.setEnd(l.firstChild, 5);"
        "const a = range.getBoundingClientRect(), b = sub.getBoundingClientRect();"
        "return {text: l.textContent.slice(0, 10), gap: b.left - a.right,"
        "        same: Math.abs(a.bottom - b.bottom) < a.height};"
    )
    assert legend["text"].startswith("가중치 αtj:") and legend["same"] and legend["gap"] < 2, legend


@pytest.mark.parametrize("model", MODELS)
def test_the_page_decodes_like_pytorch_on_80_held_out_sentences(live_api, model):
    """Greedy translations, top-k lists, raw scores, attention rows and a forced continuation, against PyTorch with
    the page's weights: every translation identical, every number within the tolerance the module states."""
    for sentence in held_out_sentences():
        ids = [*encode(sentence)]
        page = _api(live_api, "decode", model, ids)
        reference = reference_greedy(model, ids)
        assert page["tokens"] == reference["tokens"], sentence
        np.testing.assert_allclose(np.array(page["weights"]), reference["weights"].numpy(), atol=1e-5)
        np.testing.assert_allclose(np.array(page["scores"]), reference["scores"].numpy(), rtol=1e-5, atol=1e-4)
        for t, candidates in enumerate(page["candidates"]):
            logits = reference["logits"][t]
            assert [c["token"] for c in candidates] == logits.topk(TOP_K).indices.tolist(), (sentence, t)
            logp = torch.log_softmax(logits.double(), dim=-1)[[c["token"] for c in candidates]]
            np.testing.assert_allclose([c["logp"] for c in candidates], logp.numpy(), atol=1e-4)
            np.testing.assert_allclose([c["prob"] for c in candidates], logp.exp().numpy(), atol=1e-5)
            assert sorted(c["logp"] for c in candidates)[::-1] == [c["logp"] for c in candidates]
        prefix = forced_prefix(model, ids)
        forced = _api(live_api, "decode", model, ids, prefix)
        assert forced["tokens"] == reference_greedy(model, ids, prefix)["tokens"], (sentence, prefix)


@pytest.mark.parametrize("model", MODELS)
def test_the_page_beam_search_is_beam_search_decode_for_k_1_to_5(live_api, model):
    for sentence in held_out_sentences():
        ids = encode(sentence)
        for k in BEAM_SIZES:
            page = _api(live_api, "beam", model, ids, k)
            tokens, score = reference_beam(model, ids, k)
            assert page["tokens"] == tokens, (sentence, k)
            assert abs(page["score"] - score) < 1e-4, (sentence, k, page["score"], score)


def _network(driver) -> tuple[list[str], list[str]]:
    """The URLs requested and the requests that failed (a refused file is a console error) since the last call."""
    requested, failed = [], []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            requested.append(message["params"]["request"]["url"])
        elif message["method"] == "Network.loadingFailed":
            failed.append(f"{message['params'].get('type')}: {message['params'].get('errorText')}")
    return requested, failed


def test_opened_from_disk_the_page_says_why_in_one_message_keeps_its_controls_off_and_reads_its_fragment(
    watched, built_site
):
    """From file:// the page gives the one command that serves the folder and nothing else: no progress line, no
    empty line of examples, no request for a model file (so no refused file in the console), and the home page's
    offline sentence names the exception."""
    sentence = "nous sommes en retard ."
    _network(watched)
    watched.get((built_site.root / "live.html").as_uri() + "#s=" + sentence.replace(" ", "+") + "&k=4")
    WebDriverWait(watched, WAIT_S, poll_frequency=0.05).until(lambda d: _state(d)["ready"] == "error")
    time.sleep(0.5)  # any late request would show in the log
    state = _state(watched)
    assert "file://" in state["message"] and "mkdocs serve" in state["message"]
    assert "python -m http.server" in state["message"] and "http://localhost:8000/live.html" in state["message"]
    requested, failed = _network(watched)
    fetched = [url for url in requested if "/assets/live/" in url and not url.endswith(".js")]
    assert not fetched, f"the page requested {fetched} from disk, where the browser refuses them"
    assert not failed, failed
    shown = watched.execute_script(
        "const r = document.getElementById('live-translator'), seen = (e) => e.getClientRects().length > 0;"
        "return {progress: seen(r.querySelector('[data-live=progress]')),"
        "        examples: seen(r.querySelector('[data-live=examples-line]')),"
        "        messages: [...r.querySelectorAll('[role=alert], [role=status]')].filter(seen)"
        "          .filter((e) => e.textContent.trim()).length};"
    )
    assert shown == {"progress": False, "examples": False, "messages": 1}, shown
    known = watched.find_element(By.CSS_SELECTOR, ".live-known p").text
    assert ". ." not in known, known  # the sentence the page fills in is empty here: no stray period
    home = " ".join((ROOT / "docs" / "index.md").read_text(encoding="utf-8").split())
    assert "[직접 번역해 보기](live.md)" in home.split("## 인터넷 없이 읽기", 1)[1].split("\n## ", 1)[0]
    assert "python -m http.server" in home
    controls = watched.execute_script(
        "return [...document.querySelectorAll('#live-translator button, #live-translator input,"
        " #live-translator select')].map(c => c.disabled);"
    )
    assert controls and all(controls), controls
    assert watched.find_element(By.CSS_SELECTOR, "[data-live=input]").get_attribute("value") == sentence
    assert watched.execute_script("return document.querySelector('[data-live=beam-k]').value;") == "4"
    assert not state["errors"], state["errors"]


class _Overlay(SimpleHTTPRequestHandler):
    """The built site, with some files of `assets/live/` taken from another folder (an export of another model)."""

    base_path, overlay = "/", Path()
    protocol_version = "HTTP/1.1"

    def translate_path(self, path: str) -> str:
        relative = path.split("?")[0][len(self.base_path) :] if path.startswith(self.base_path) else "__outside__"
        if relative.startswith("assets/live/") and (self.overlay / relative[len("assets/live/") :]).is_file():
            return str(self.overlay / relative[len("assets/live/") :])
        return super().translate_path("/" + relative)

    def log_message(self, format: str, *args: object) -> None:
        pass


SEARCH_INDEX_JS = """
return performance.getEntriesByType("resource").filter((e) => e.name.endsWith("/search/search_index.json"))
  .map((e) => e.startTime);
"""


def test_the_search_index_waits_for_the_first_translation_and_search_still_works_there(watched, site_server):
    """overrides/main.html: on this page Material's search index (about 1 MB) is requested only after the first
    translation, so that a slow connection carries the translator's files first; the search box then finds pages."""
    _fresh(watched, site_server + "live.html")
    _idle(watched)
    started = WebDriverWait(watched, WAIT_S, poll_frequency=0.05).until(lambda d: d.execute_script(SEARCH_INDEX_JS))
    first = watched.execute_script("return window.liveApi.translated.bahdanau;")
    assert len(started) == 1 and started[0] >= first, (started, first)
    search = watched.find_element(By.CSS_SELECTOR, "input.md-search__input")
    search.click()
    search.send_keys("어텐션")
    WebDriverWait(watched, WAIT_S, poll_frequency=0.05).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, ".md-search-result__item > a")
    )
    assert not watched.execute_script("return window.__liveErrors;"), "the page raised an error"


@pytest.fixture(scope="module")
def eight_word_weights(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess, Path]:
    """`seq2seq-attention export-weights` run in a fresh Python (src/ first on its path) on
    `live_support.checkpoint_with_max_words(..., 8)`: what the command did and its `--out` folder."""
    folder = tmp_path_factory.mktemp("eight-word-weights")
    checkpoint = checkpoint_with_max_words(folder / "eight", 8)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run(
        [sys.executable, "-m", "seq2seq_attention.cli", "export-weights", "--checkpoint", str(checkpoint),
         "--out", str(folder / "out")],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    return result, folder / "out"


def test_an_export_of_a_model_trained_on_8_words_lets_the_page_take_8_words(watched, built_site, eight_word_weights):
    """`eight_word_weights`: the weights export of a checkpoint trained on 8 words, served in place of the page's."""
    result, out = eight_word_weights
    assert result.returncode == 0, result.stderr
    assert [line.split(" (")[0] for line in result.stdout.splitlines()] == [
        f"wrote {out / name}" for name in ("weights.bin", "vocabularies.json", "sentences.json")
    ]
    assert json.loads((out / "vocabularies.json").read_text(encoding="utf-8"))["max_words"] == 8
    # The shipped Luong weights (same vocabularies) are served from the site as they are.
    handler = functools.partial(
        type("Handler", (_Overlay,), {"base_path": built_site.base_path, "overlay": out}),
        directory=str(built_site.root),
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
    try:
        _fresh(watched, f"http://127.0.0.1:{server.server_port}{built_site.base_path}live.html")
        _idle(watched)
        known = watched.execute_script("return document.querySelector('[data-live=known]').textContent;")
        assert "토큰 8개까지" in known
        eight = "je suis tres tres tres tres fatigue ."
        state = _translate(watched, eight)
        assert not state["problems"] and state["result"]["source"] == [*eight.split(), "<eos>"]
        assert state["tables"]["bahdanau"][0]["header"][1:] == [*eight.split(), "<eos>"]
        state = _translate(watched, "je suis tres tres tres tres tres fatigue .")
        assert any("토큰이 9개" in p and "토큰 8개까지" in p for p in state["problems"]), state["problems"]
    finally:
        server.shutdown()
        server.server_close()
