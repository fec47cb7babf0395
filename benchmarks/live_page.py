"""How long the live page takes to its first translation, per model, as the page itself measures it.

    python -m benchmarks.live_page                      # local server, 3 cold loads
    python -m benchmarks.live_page --throttle 10 --rounds 1   # Chromium's network held to 10 Mbit/s
    python -m benchmarks.live_page --warm               # the HTTP cache on, filled by one load not counted

Builds the site (`mkdocs build --strict`), serves it on 127.0.0.1 and opens `live.html` in headless
Chromium with the HTTP cache off, so every load downloads everything. For each model the figure is
the one the page prints under its controls: milliseconds from the start of the page's navigation
(`performance.now()`) until that model's first translation is fully on the page (`liveApi.translated`;
the Bahdanau model translates as soon as it is ready, the Luong model after it has loaded in turn).
Prints one JSON line per load, then the median per model and, with `--limit-ms`, whether the
Bahdanau median is within it (exit status 1 when not). The docs' "내려받는 양과 시간" section cites
its output. Times depend on the machine and its load: run it on an idle machine to compare.
"""

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from site_support import _SiteHandler, chromium, site_url_path  # noqa: E402  (the test suite's server)

READY_JS = """
const r = document.getElementById("live-translator");
return {ready: r.dataset.ready, done: r.dataset.done, busy: r.dataset.busy, luong: r.dataset.luong || null,
        translated: window.liveApi ? window.liveApi.translated : {}, downloaded: Number(r.dataset.downloaded || 0),
        shown: r.querySelector("[data-live=latency]").textContent};
"""


def build_site(out: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(out)],
        cwd=ROOT,
        check=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )


def serve(site: Path) -> tuple[ThreadingHTTPServer, str]:
    base = site_url_path()
    handler = functools.partial(type("Handler", (_SiteHandler,), {"base_path": base}), directory=str(site))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}{base}live.html"


def one_load(driver, url: str, mbit: float | None, wait_s: float, warm: bool = False) -> dict:
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": not warm})
    if mbit:
        rate = mbit * 1e6 / 8
        driver.set_network_conditions(offline=False, latency=20, download_throughput=rate, upload_throughput=rate)
    try:
        driver.get("about:blank")
        driver.get(url)
        started = time.monotonic()
        while True:
            state = driver.execute_script(READY_JS)
            if state["ready"] == "error":
                raise SystemExit(f"the page did not load its models: {state}")
            if state["done"] == "true" and state["busy"] == "false" and state["luong"]:
                return state
            if time.monotonic() - started > wait_s:
                raise SystemExit(f"no translation after {wait_s:.0f} s: {state}")
            time.sleep(0.05)
    finally:
        if mbit:
            driver.delete_network_conditions()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="cold loads to time (default: 3)")
    parser.add_argument("--throttle", type=float, default=None, help="hold Chromium's network to this many Mbit/s")
    parser.add_argument("--site", type=Path, default=None, help="a built site to serve (default: build one now)")
    parser.add_argument("--limit-ms", type=float, default=None, help="the Bahdanau median must be within this")
    parser.add_argument(
        "--warm", action="store_true", help="keep the HTTP cache on, filled by one load that is not counted"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="live-bench-") as scratch:
        site = args.site or Path(scratch) / "site"
        if args.site is None:
            build_site(site)
        server, url = serve(site)
        runs = []
        try:
            with chromium() as driver:
                if args.warm:
                    one_load(driver, url, args.throttle, wait_s=300, warm=True)  # fills the cache; not counted
                for round_ in range(args.rounds):
                    state = one_load(driver, url, args.throttle, wait_s=300, warm=args.warm)
                    run = {
                        "round": round_ + 1,
                        "network": f"{args.throttle:g} Mbit/s" if args.throttle else "local server",
                        "cache": "warm" if args.warm else "off",
                        **{f"{model}_ms": round(ms) for model, ms in state["translated"].items()},
                        "bytes": state["downloaded"],
                        "page_says": state["shown"],
                    }
                    print(json.dumps(run, ensure_ascii=False), flush=True)
                    runs.append(run)
        finally:
            server.shutdown()
            server.server_close()
    medians = {model: statistics.median(run[f"{model}_ms"] for run in runs) for model in ("bahdanau", "luong")}
    print(
        f"median over {len(runs)} {'warm-cache' if args.warm else 'cold'} loads ({runs[0]['network']}), load average "
        f"{os.getloadavg()[0]:.1f}: first translation, Bahdanau "
        f"{medians['bahdanau']:,.0f} ms, Luong {medians['luong']:,.0f} ms after the page started loading"
    )
    if args.limit_ms is not None:
        within = medians["bahdanau"] <= args.limit_ms
        print(f"Bahdanau median {'within' if within else 'OVER'} the limit of {args.limit_ms:,.0f} ms")
        return 0 if within else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
