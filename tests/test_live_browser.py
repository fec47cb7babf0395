"""The live page in headless Chromium: sturdy under clicks, self-explaining, and equal to PyTorch.

The built site is served on 127.0.0.1 (`site_server`); Chromium opens `live.html` with its cache off, so
every load downloads everything. Parity runs the page's own decoding functions (`window.liveApi`, the
functions the buttons call) on 50 held-out sentences and compares them with the PyTorch models rounded
to float16 (`live_support`): top-k lists, forced continuations, beam search for k = 1..5, both models.
"""

import time

import numpy as np
import pytest
import torch
from live_support import (
    BEAM_SIZES,
    TOP_K,
    encode,
    float16_model,
    forced_prefix,
    held_out_sentences,
    reference_beam,
    reference_greedy,
)
from selenium import webdriver
from selenium.webdriver.support.ui import WebDriverWait
from test_site_browser import WAIT_S, _leaves_the_site, _requests, browser  # noqa: F401 (browser: a fixture)

pytest.importorskip("onnxruntime", reason="onnxruntime is in the test extra")

MODELS = ("bahdanau", "luong")
THROTTLE_BYTES_PER_S = 10_000_000 / 8  # 10 Mbit/s
PAGE_BUDGET = 20_000_000

STATE_JS = """
const r = document.getElementById("live-translator");
const column = (m) => r.querySelector(`[data-model-column="${m}"]`);
const table = (m) => [...column(m).querySelectorAll("table.live-heatmap")].map((t) => ({
  header: [...t.tHead.rows[0].cells].map((c) => c.textContent),
  rows: [...t.tBodies[0].rows].map((row) => [...row.cells].map((c) => c.textContent)),
}));
return {ready: r.dataset.ready, done: r.dataset.done, busy: r.dataset.busy, luong: r.dataset.luong || null,
        downloaded: Number(r.dataset.downloaded || 0), first: window.liveFirstTranslationMs || null,
        result: window.liveResult || null, beam: window.liveBeam || null,
        message: r.querySelector("[data-live=message]").innerText,
        problems: [...r.querySelectorAll("[data-live=message] li")].map((li) => li.textContent),
        origin: r.querySelector("[data-live=origin]").dataset.kind || null,
        progress: r.querySelector("[data-live=progress-text]").textContent,
        bar: !r.querySelector("[data-live=progress-bar]").hidden,
        disabled: [...r.querySelectorAll("form button, form input")].map((c) => c.disabled),
        outputs: Object.fromEntries(["bahdanau", "luong"].map(
          (m) => [m, column(m).querySelector("[data-live=output]").textContent])),
        tables: Object.fromEntries(["bahdanau", "luong"].map((m) => [m, table(m)]))};
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


@pytest.fixture
def live(browser: webdriver.Chrome, site_server: str) -> webdriver.Chrome:  # noqa: F811
    """The live page, loaded, idle, rows drawn without a pause (for speed), at 1280 px.

    Loaded with the HTTP cache on: what a first visit downloads is the subject of the tests that call `_fresh`."""
    _requests(browser)
    browser.set_window_size(1280, 1000)
    browser.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": False})
    browser.get("about:blank")
    browser.get(site_server + "live.html")
    _idle(browser)
    browser.execute_script("document.getElementById('live-translator').dataset.stepMs = '0';")
    return browser


def test_first_translation_is_fast_and_the_page_downloads_at_most_20_mb(browser, site_server):  # noqa: F811
    _requests(browser)
    _fresh(browser, site_server + "live.html")
    state = _idle(browser)
    print(f"first translation {state['first']:.0f} ms after the page started loading; {state['downloaded']:,} bytes")
    assert state["first"] < 2000, f"the first translation took {state['first']:.0f} ms"
    fetched = browser.execute_script(
        "return performance.getEntriesByType('resource').concat(performance.getEntriesByType('navigation'))"
        ".map((e) => [e.name, e.encodedBodySize]);"
    )
    total = sum(size for _, size in fetched)
    print(f"everything the page fetched: {total:,} bytes in {len(fetched)} requests")
    assert total <= PAGE_BUDGET, sorted(fetched, key=lambda entry: -entry[1])[:5]
    assert state["downloaded"] <= total and "불러온 파일" in state["progress"] and not state["bar"]
    leaks = [url for url in _requests(browser) if _leaves_the_site(url)]
    assert not leaks, "the live page made requests outside 127.0.0.1:\n" + "\n".join(leaks)


def test_at_10_mbit_s_the_page_shows_progress_and_keeps_its_controls_off(browser, site_server):  # noqa: F811
    browser.set_network_conditions(
        offline=False, latency=20, download_throughput=THROTTLE_BYTES_PER_S, upload_throughput=THROTTLE_BYTES_PER_S
    )
    try:
        _fresh(browser, site_server + "live.html")
        started = time.monotonic()
        samples = []
        while (state := _state(browser))["done"] != "true" and time.monotonic() - started < 90:
            samples.append(state)
            time.sleep(0.5)
        state = _idle(browser)
        waited = time.monotonic() - started
    finally:
        browser.delete_network_conditions()
    luong = browser.execute_script("return window.liveApi.times.luong;")
    print(
        f"at 10 Mbit/s: first translation {state['first']:.0f} ms after the page started loading, "
        f"Luong ready at {luong:.0f} ms ({waited:.1f} s in all)"
    )
    loading = [s for s in samples if s["progress"].startswith("불러오는 중") and s["ready"] != "true"]
    assert len(loading) >= 5, [s["progress"] for s in samples]
    assert all(all(s["disabled"]) for s in loading), "a control was enabled before the first model had loaded"
    assert len({s["progress"] for s in loading}) >= 5, "the progress did not move"
    assert all("MB" in s["progress"] and s["bar"] for s in loading[1:]), loading[-1]
    assert state["first"] > 5000, "the throttle did not slow the download (is it in bytes per second?)"


def test_clicking_twice_and_submitting_during_a_run_gives_one_table(live):
    live.execute_script("document.getElementById('live-translator').dataset.stepMs = '150';")
    sentence = held_out_sentences(1)[0]
    live.execute_script(
        "const r = document.getElementById('live-translator');"
        "r.querySelector('[data-live=input]').value = arguments[0];"
        "const b = r.querySelector('[data-live=button]'); b.click(); b.click();",
        sentence,
    )
    during = _state(live)
    assert during["busy"] == "true" and all(during["disabled"])
    live.execute_script(
        "const r = document.getElementById('live-translator');"
        "r.querySelector('[data-live=input]').value = 'nous sommes tres en retard .';"
        "r.querySelector('[data-live=form]').requestSubmit();"
        "r.querySelector('[data-live=button]').click();"
        "r.querySelector('[data-live=example]').click();"
    )
    state = _idle(live)
    for model in MODELS:
        expected = reference_greedy(model, encode(sentence))["tokens"]
        (table,) = state["tables"][model]  # one table per model
        assert table["header"][1:] == [*sentence.split(), "<eos>"]
        assert len(table["rows"]) == len(expected), (model, table["rows"])
        assert all(len(row) == len(table["header"]) for row in table["rows"]), table["rows"]
        vocabs = float16_model(model)[1]
        assert [row[0].split(" ")[1] for row in table["rows"]] == [vocabs.target.index2word[t] for t in expected]


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


def test_at_390_px_the_page_does_not_scroll_sideways(live):
    try:
        live.set_window_size(390, 900)
        _translate(live, "nous sommes tous d accord .")  # 7 source columns
        live.execute_script(
            "const r = document.getElementById('live-translator');"
            "r.querySelector('[data-live=beam-k]').value = '5'; r.querySelector('[data-live=beam-run]').click();"
        )
        _idle(live)
        width = live.execute_script("return [document.documentElement.scrollWidth, window.innerWidth];")
        assert width[0] <= width[1] + 1, f"the page is {width[0]} px wide in a {width[1]} px window"
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


def test_the_table_has_axes_the_figures_grey_scale_and_a_legend(live):
    _translate(live, "je suis fatigue .")
    cells = live.execute_script(
        "return [...document.querySelectorAll('[data-model-column=bahdanau] table.live-heatmap td')]"
        ".map(c => [Number(c.title), getComputedStyle(c).backgroundColor]);"
    )
    assert cells
    for weight, colour in cells:  # matplotlib's "gray": black 0, white 1
        level = round(255 * weight)
        assert colour == f"rgb({level}, {level}, {level})", (weight, colour)
    text = live.execute_script(
        "return [document.querySelector('.live-heatmap caption').textContent,"
        "        getComputedStyle(document.querySelector('.live-legend-bar')).backgroundImage];"
    )
    assert "원문 토큰" in text[0] and "만든 단어" in text[0]
    assert "rgb(0, 0, 0)" in text[1] and "rgb(255, 255, 255)" in text[1]


def test_forcing_a_candidate_by_clicking_redecodes_from_there(live):
    sentence = held_out_sentences(1)[0]
    _translate(live, sentence)
    live.execute_script(
        "document.querySelector('[data-model-column=bahdanau] .live-topk tbody tr:nth-child(2) [data-live=force]')"
        ".click();"
    )
    state = _idle(live)
    ids = encode(sentence)
    runner_up = int(reference_greedy("bahdanau", ids)["logits"][0].topk(2).indices[1])
    expected = reference_greedy("bahdanau", ids, [runner_up])["tokens"]
    assert state["result"]["tokens"] == expected
    assert state["tables"]["bahdanau"][0]["rows"][0][0].endswith("✎")


@pytest.mark.parametrize("model", MODELS)
def test_the_page_decodes_like_pytorch_on_50_held_out_sentences(live, model):
    """Top-k lists, the greedy table and a forced continuation, per sentence, against the float16 PyTorch model."""
    for sentence in held_out_sentences(50):
        ids = [*encode(sentence)]
        page = _api(live, "decode", model, ids)
        reference = reference_greedy(model, ids)
        assert page["tokens"] == reference["tokens"], sentence
        np.testing.assert_allclose(np.array(page["weights"]), reference["weights"].numpy(), atol=1e-5)
        for t, candidates in enumerate(page["candidates"]):
            logits = reference["logits"][t]
            assert [c["token"] for c in candidates] == logits.topk(TOP_K).indices.tolist(), (sentence, t)
            probabilities = torch.softmax(logits.double(), dim=-1)[[c["token"] for c in candidates]]
            np.testing.assert_allclose([c["prob"] for c in candidates], probabilities.numpy(), atol=1e-5)
            assert sorted(c["prob"] for c in candidates)[::-1] == [c["prob"] for c in candidates]
        prefix = forced_prefix(model, ids)
        forced = _api(live, "decode", model, ids, prefix)
        assert forced["tokens"] == reference_greedy(model, ids, prefix)["tokens"], (sentence, prefix)


@pytest.mark.parametrize("model", MODELS)
def test_the_page_beam_search_is_beam_search_decode_for_k_1_to_5(live, model):
    for sentence in held_out_sentences(50):
        ids = encode(sentence)
        for k in BEAM_SIZES:
            page = _api(live, "beam", model, ids, k)
            tokens, score = reference_beam(model, ids, k)
            assert page["tokens"] == tokens, (sentence, k)
            assert abs(page["score"] - score) < 1e-4, (sentence, k, page["score"], score)


def test_the_beam_button_shows_the_kept_hypotheses_and_the_result(live):
    sentence = held_out_sentences(1)[0]
    _translate(live, sentence)
    live.execute_script(
        "const r = document.getElementById('live-translator');"
        "r.querySelector('[data-live=beam-model]').value = 'luong';"
        "r.querySelector('[data-live=beam-k]').value = '4'; r.querySelector('[data-live=beam-run]').click();"
    )
    state = _idle(live)
    tokens, score = reference_beam("luong", encode(sentence), 4)
    assert state["beam"]["tokens"] == tokens and abs(state["beam"]["score"] - score) < 1e-4
    steps = live.execute_script(
        "return [...document.querySelectorAll('.live-beam-steps > li')]"
        ".map(li => li.querySelectorAll('.live-hyp').length);"
    )
    assert steps and all(count >= 4 for count in steps[:-1]), steps


def test_opened_from_disk_the_page_says_why_and_keeps_its_controls_off(browser, built_site):  # noqa: F811
    browser.get((built_site.root / "live.html").as_uri())
    WebDriverWait(browser, WAIT_S, poll_frequency=0.05).until(lambda d: _state(d)["ready"] == "error")
    state = _state(browser)
    assert "file://" in state["message"] and "mkdocs serve" in state["message"]
    controls = browser.execute_script(
        "return [...document.querySelectorAll('#live-translator button, #live-translator input,"
        " #live-translator select')].map(c => c.disabled);"
    )
    assert controls and all(controls), controls
