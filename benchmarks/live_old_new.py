"""The live page before and after issue 51, side by side: bytes before the first translation, time to it, time per step.

    python -m benchmarks.live_old_new                       # builds the site, 3 local loads and 1 throttled per page
    python -m benchmarks.live_old_new --site /tmp/site      # an already built site of this checkout

The new page is this checkout's built site. The old page is the same built site with the live page's assets and
its HTML block (from the preload links to the live.js script tag, raw HTML in docs/live.md, so rendered as written)
taken from `--old-ref` with `git show` (default: OLD_REF, main's last commit whose page ran onnxruntime-web's WASM
runtime on the ONNX graphs; both have since left the repository), and without the new page's two scripts in
overrides/main.html (the hold on the search index, which on the live page waits for the first translation, and the
requests of the first translation's files at the top of <head>). Both
are served on 127.0.0.1 and opened in headless Chromium with the HTTP cache off, so each load downloads everything:

- bytes before the first translation: the `encodedBodySize` of every request that started before the Bahdanau
  model's first translation was on the page (`liveApi.translated.bahdanau`): the translator's own (its scripts,
  runtime, graphs or weights, vocabularies and sentences), and everything (the page, theme, KaTeX, search index);
- first translation: that moment, in ms after the navigation started (the figure the page prints), the median
  of `--rounds` loads from the local server, and of `--throttled-rounds` loads with Chromium's network held to
  `--throttle` bytes per second (CDP network conditions; 20 ms latency);
- time per decoding step: `liveApi.decode` (the function the page's buttons call) over the 80 held-out parity
  sentences, once to warm up and once timed, divided by the steps it took, per model.

Times depend on the machine and its load (the load average is printed): compare the two columns of one run.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from site_support import chromium  # noqa: E402  (the test suite's Chromium)

from benchmarks.live_page import build_site, serve  # noqa: E402

OLD_REF = "00799c5118d8f2391c70fd93971db2f4a22a746a"
"""The last commit of main before the plain-JavaScript page (issue 51) was merged."""
OLD_ASSETS = ("docs/assets/live", "docs/assets/onnxruntime-web", "docs/assets/javascripts", "docs/assets/stylesheets")
NEW_BLOCK = ('<div id="live-translator"', '<script src="assets/javascripts/live.js"></script>')
OLD_BLOCK = ('<link rel="preload"', '<script src="assets/javascripts/live.js"></script>')

STATE_JS = r"""
const r = document.getElementById("live-translator");
const first = window.liveApi && window.liveApi.translated.bahdanau;
const bytesBefore = (keep) => (first ? performance.getEntriesByType("navigation")
  .concat(performance.getEntriesByType("resource"))
  .filter((e) => e.startTime < first && keep(e.name)).reduce((sum, e) => sum + e.encodedBodySize, 0) : null);
const translators = (name) => /\/assets\/(live|onnxruntime-web)\//.test(name) || name.endsWith("/javascripts/live.js");
return {ready: r.dataset.ready, done: r.dataset.done, busy: r.dataset.busy, luong: r.dataset.luong || null, first,
        before: bytesBefore(() => true), translator: bytesBefore(translators)};
"""
STEPS_JS = """
const [model, sentences] = arguments, done = arguments[arguments.length - 1];
(async () => {
  let steps = 0;
  for (const ids of sentences) await window.liveApi.decode(model, ids);  // warm-up
  const started = performance.now();
  for (const ids of sentences) steps += (await window.liveApi.decode(model, ids)).tokens.length;
  done({ms: performance.now() - started, steps});
})().catch((error) => done({error: String(error)}));
"""


def git_show(ref: str, path: str) -> bytes:
    return subprocess.run(["git", "-C", str(ROOT), "show", f"{ref}:{path}"], capture_output=True, check=True).stdout


def old_site(new: Path, out: Path, ref: str) -> Path:
    """`new` with the live page's assets and HTML block of `ref`."""
    shutil.copytree(new, out)
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-tree", "-r", "--name-only", ref, *OLD_ASSETS],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    for path in listed:
        target = out / path.removeprefix("docs/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(git_show(ref, path))
    page = git_show(ref, "docs/live.md").decode("utf-8")
    old_block = page[page.index(OLD_BLOCK[0]) : page.index(OLD_BLOCK[1]) + len(OLD_BLOCK[1])]
    html = (out / "live.html").read_text(encoding="utf-8")
    start, end = html.index(NEW_BLOCK[0]), html.index(NEW_BLOCK[1]) + len(NEW_BLOCK[1])
    html = html[:start] + old_block + html[end:]
    for script in ("live-search-gate", "live-requests"):  # overrides/main.html's, not the old page's
        html = re.sub(rf'\s*<script id="{script}">.*?</script>', "", html, count=1, flags=re.S)
    (out / "live.html").write_text(html, encoding="utf-8")
    return out


def one_load(driver, url: str, throttle: float | None) -> dict:
    """A cold load of the live page: bytes before the first translation and its time (ms after navigation)."""
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
    if throttle:
        driver.set_network_conditions(
            offline=False, latency=20, download_throughput=throttle, upload_throughput=throttle
        )
    try:
        driver.get("about:blank")
        driver.get(url)
        started = time.monotonic()
        while True:
            state = driver.execute_script(STATE_JS)
            if state["ready"] == "error":
                raise SystemExit(f"the page did not load its models: {state}")
            if state["done"] == "true" and state["busy"] == "false" and state["luong"] and state["first"]:
                return state
            if time.monotonic() - started > 300:
                raise SystemExit(f"no translation after 300 s: {state}")
            time.sleep(0.05)
    finally:
        if throttle:
            driver.delete_network_conditions()


def per_step(driver, sentences: list[list[int]]) -> dict[str, float]:
    driver.set_script_timeout(600)
    found = {}
    for model in ("bahdanau", "luong"):
        result = driver.execute_async_script(STEPS_JS, model, sentences)
        if "error" in result:
            raise SystemExit(f"liveApi.decode failed: {result['error']}")
        found[model] = result["ms"] / result["steps"]
    return found


def measure(url: str, rounds: int, throttled_rounds: int, throttle: float, sentences: list[list[int]]) -> dict:
    with chromium() as driver:
        local = [one_load(driver, url, None) for _ in range(rounds)]
        steps = per_step(driver, sentences)
        slow = [one_load(driver, url, throttle) for _ in range(throttled_rounds)]
    return {
        "before": statistics.median(s["before"] for s in local),
        "translator": statistics.median(s["translator"] for s in local),
        "local_ms": statistics.median(s["first"] for s in local),
        "local_all": [round(s["first"]) for s in local],
        "throttled_ms": statistics.median(s["first"] for s in slow),
        "throttled_all": [round(s["first"]) for s in slow],
        "step_ms": steps,
    }


def parity_ids() -> list[list[int]]:
    from seq2seq_attention import load_checkpoint
    from seq2seq_attention.translation.export import parity_sentences
    from seq2seq_attention.translation.pretrained import PRETRAINED_DIR

    vocabs = load_checkpoint(PRETRAINED_DIR / "bahdanau").vocabs
    return [vocabs.source.encode(sentence) for sentence in parity_sentences(vocabs)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=None, help="a built site of this checkout (default: build one)")
    parser.add_argument(
        "--old-ref", default=OLD_REF, help="the git ref whose live page is the old one (default: the last ONNX page)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="cold loads from the local server per page (default: 3)")
    parser.add_argument(
        "--throttled-rounds", type=int, default=1, help="cold loads at --throttle per page (default: 1)"
    )
    parser.add_argument("--throttle", type=float, default=1e6, help="bytes per second (default: 1e6, 1 MB/s)")
    args = parser.parse_args(argv)
    sentences = parity_ids()
    with tempfile.TemporaryDirectory(prefix="live-old-new-") as scratch:
        new = args.site or Path(scratch) / "new"
        if args.site is None:
            build_site(new)
        old = old_site(new, Path(scratch) / "old", args.old_ref)
        results = {}
        for name, site in (("old", old), ("new", new)):
            server, url = serve(site)
            try:
                results[name] = measure(url, args.rounds, args.throttled_rounds, args.throttle, sentences)
            finally:
                server.shutdown()
                server.server_close()
            print(json.dumps({"page": name, **results[name]}), flush=True)
    old, new = results["old"], results["new"]
    rate = f"{args.throttle / 1e6:g} MB/s"
    rows = [
        ("the translator's bytes before the first translation", f"{old['translator']:,.0f}",
         f"{new['translator']:,.0f}"),
        ("all bytes before the first translation", f"{old['before']:,.0f}", f"{new['before']:,.0f}"),
        (f"first translation, local server (median of {args.rounds}), ms", f"{old['local_ms']:,.0f}",
         f"{new['local_ms']:,.0f}"),
        (f"first translation at {rate} (median of {args.throttled_rounds}), ms", f"{old['throttled_ms']:,.0f}",
         f"{new['throttled_ms']:,.0f}"),
        ("decoding step, Bahdanau, ms", f"{old['step_ms']['bahdanau']:.3f}", f"{new['step_ms']['bahdanau']:.3f}"),
        ("decoding step, Luong, ms", f"{old['step_ms']['luong']:.3f}", f"{new['step_ms']['luong']:.3f}"),
    ]  # fmt: skip
    width = max(len(row[0]) for row in rows)
    print(f"\n{'':<{width}}  {'old (' + args.old_ref[:7] + ')':>14}  {'new':>12}  new/old")
    for (label, before, after), ratio in zip(
        rows,
        [
            new["translator"] / old["translator"],
            new["before"] / old["before"],
            new["local_ms"] / old["local_ms"],
            new["throttled_ms"] / old["throttled_ms"],
            new["step_ms"]["bahdanau"] / old["step_ms"]["bahdanau"],
            new["step_ms"]["luong"] / old["step_ms"]["luong"],
        ],
        strict=True,
    ):
        print(f"{label:<{width}}  {before:>14}  {after:>12}  {ratio:.2f}")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
