"""What the site tests share: where the repository is, a built site (see `conftest.py`), and a browser."""

import functools
import os
import re
import shutil
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import yaml
from support import ROOT

BUILD_TIMEOUT_S = 300


@dataclass(frozen=True)
class BuiltSite:
    """A site built by `mkdocs build --strict`.

    Attributes:
        root: the site folder.
        base_path: the path part of `site_url` (e.g. ``/seq2seq-attention/``), which absolute
            links in the 404 page start with.
        log: what mkdocs printed.
    """

    root: Path
    base_path: str
    log: str

    def pages(self) -> list[Path]:
        """Every HTML page of the site, the 404 page included."""
        return sorted(self.root.rglob("*.html"))

    def url_of(self, page: Path) -> str:
        """The page's URL path relative to the site root: ``""``, ``"api/"``, ``"404.html"``."""
        rel = page.relative_to(self.root).as_posix()
        return rel.removesuffix("index.html")


SITE_FIXTURES = frozenset(
    {"built_site", "site_with_repository_links", "session_browser", "executed_notebooks", "accessibility_audits",
     "zensical_site", "engine_site"}
)  # fmt: skip
"""A test that needs one of these (directly or through another fixture) builds the site, drives a browser, runs the
notebooks or reads the accessibility audit: tests/conftest.py marks it `site`, and the quick tier
(`python -m pytest -m "not site"`) leaves it out."""


def site_url_path() -> str:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    match = re.search(r"^site_url:\s*(?:!ENV\s*\[\s*\w+\s*,\s*)?[\"']?([^\s\"'\]]+)", config, flags=re.M)
    path = urlsplit(os.environ.get("SITE_URL") or (match.group(1) if match else "/")).path
    return path if path.endswith("/") else path + "/"


class _SiteHandler(SimpleHTTPRequestHandler):
    """Serves the site under its `site_url` path (as GitHub Pages does), without logging each request."""

    base_path = "/"
    protocol_version = "HTTP/1.1"  # keep-alive: a page's dozen requests share connections
    timeout = 10  # seconds a connection may sit idle: a stuck browser cannot hang the test run

    def end_headers(self) -> None:
        if not self.path.endswith((".html", "/")):
            self.send_header("Cache-Control", "max-age=600")  # assets: fetched once per test session
        super().end_headers()

    def translate_path(self, path: str) -> str:
        if not path.startswith(self.base_path):
            return str(Path(self.directory) / "__outside_the_site__")
        return super().translate_path("/" + path[len(self.base_path) :])

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serve_site(site: BuiltSite):
    """`site` served on 127.0.0.1 (an ephemeral port) from a daemon thread, under its `site_url` path as GitHub Pages
    serves it; yields its URL, e.g. ``http://127.0.0.1:41234/seq2seq-attention/``, and shuts the server down on exit."""
    handler = functools.partial(
        type("Handler", (_SiteHandler,), {"base_path": site.base_path}), directory=str(site.root)
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}{site.base_path}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


class _AnyTagLoader(yaml.SafeLoader):
    """mkdocs.yml with its `!ENV` and `!!python/name:` tags read as plain values (the nav has none)."""


def _any_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> object:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_mapping(node)


_AnyTagLoader.add_multi_constructor("", _any_tag)


def nav() -> list:
    """The `nav` of mkdocs.yml, as written (a list of `{title: page or list}` and bare page entries)."""
    return yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_AnyTagLoader)["nav"]


def nav_pages(entries: list) -> list[tuple[str | None, str]]:
    """Every page under `entries`, depth first, as (its title in the nav or None, its path under docs/)."""
    pages: list[tuple[str | None, str]] = []
    for entry in entries:
        if isinstance(entry, str):
            pages.append((None, entry))
            continue
        ((title, value),) = entry.items()
        pages += nav_pages(value) if isinstance(value, list) else [(title, value)]
    return pages


def chapters() -> list[tuple[str, list[str]]]:
    """The numbered chapters of the nav ("1. seq2seq와 데이터", ...): (title, their pages in order)."""
    found = []
    for entry in nav():
        if isinstance(entry, dict):
            ((title, value),) = entry.items()
            if re.match(r"\d+\. ", title):  # a section, or a chapter of one page
                found.append((title, [page for _, page in nav_pages(value)] if isinstance(value, list) else [value]))
    return found


CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-dev-shm-usage",  # containers (the CI job runs in one) give /dev/shm only 64 MB
    "--window-size=1280,1000",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
)
PAGE_LOAD_S = 60
"""How long opening one page may take. Only a failure waits this long: every wait ends as soon as its condition
holds. A busy machine (the other core kept busy, a CI runner) can take seconds for the largest page."""


def chromium_paths() -> tuple[str, str]:
    """Debian's `chromium` and its `chromedriver`; the calling test skips, with the reason, where either is missing."""
    import pytest

    binary = next((shutil.which(name) for name in ("chromium", "chromium-browser") if shutil.which(name)), None)
    if binary is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium chromium-driver; .ci/run does it)")
    driver = shutil.which("chromedriver")
    if driver is None:
        pytest.skip("chromedriver is not installed (Debian: apt-get install chromium-driver; .ci/run does it)")
    return binary, driver


@contextmanager
def chromium(*, performance_log: bool = False):
    """Headless Chromium driven by chromedriver (selenium), in a fresh profile; quits on exit."""
    import pytest
    from selenium import webdriver
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.chrome.service import Service

    binary, driver_path = chromium_paths()
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = binary
        for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
            options.add_argument(flag)
        if performance_log:
            options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
        try:
            driver = webdriver.Chrome(options=options, service=Service(driver_path))
        except WebDriverException as error:
            pytest.fail(f"{binary} with {driver_path} did not start: {error.msg}", pytrace=False)
        driver.set_page_load_timeout(PAGE_LOAD_S)
        try:
            yield driver
        finally:
            driver.quit()


def reset_browser(driver, width: int = 1280, height: int = 1000):
    """The session's browser (`session_browser` in conftest.py) as a module's tests expect it at their start: the
    HTTP cache on (tests/site/test_live_browser.py turns it off), the window `width` x `height`, a blank page, and no
    network log left from earlier modules."""
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": False})
    driver.set_window_size(width, height)
    driver.get("about:blank")
    driver.get_log("performance")
    return driver


PHONE_WIDTH = 390
"""A phone's width in CSS pixels (an iPhone 12 to 15)."""
PHONE_SCRIPTS: dict[str, str] = {}
"""Scripts run on every page of the site at `PHONE_WIDTH` by the one pass of `phone_pages` (tests/conftest.py): a test
module adds its own with `on_every_page_on_a_phone` when it is imported, and each page is opened once for all."""


def on_every_page_on_a_phone(name: str, script: str) -> None:
    """Adds `script` to `PHONE_SCRIPTS` as `name`. It must leave the page as it found it (a script that opens folded
    blocks closes them again): the scripts of every module run one after the other on one load of the page."""
    if PHONE_SCRIPTS.get(name, script) != script:
        raise ValueError(f"two different phone scripts are named {name!r}")
    PHONE_SCRIPTS[name] = script


SETTLED_JS = r"""
return document.readyState === "complete"
  && [...document.querySelectorAll("pre > code")].every(c => c.parentElement.querySelector("[data-clipboard-target]"))
  && [...document.querySelectorAll(".arithmatex")].every(m => m.querySelector(".katex, .katex-error"));
"""
"""True once the page has loaded, Material gave every code block its copy button and KaTeX rendered every formula."""

OPENED_JS = "return [location.href.split('#')[0], document.readyState];"


def open_page(driver, url: str) -> None:
    """Opens `url` and returns once *that* document has loaded.

    `driver.get` alone is not enough on a busy machine: chromedriver can return while the previous document is
    still the current one, or while the new one is still parsing (an `article h1` looked for then is not there
    yet). So this waits until the window's own URL is `url` and its `readyState` is "complete".
    """
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    target = url.split("#")[0]
    driver.get(url)
    try:
        WebDriverWait(driver, PAGE_LOAD_S, poll_frequency=0.05).until(
            lambda d: d.execute_script(OPENED_JS) == [target, "complete"]
        )
    except TimeoutException:
        href, state = driver.execute_script(OPENED_JS)
        raise AssertionError(f"{url} did not open within {PAGE_LOAD_S} s (the window shows {href}, {state})") from None


def wait_until_settled(driver, timeout: float = PAGE_LOAD_S) -> bool:
    """Waits until `SETTLED_JS` holds (no longer than `timeout`); whether it did. A page that never settles is for the
    calling test to report: what it reads then shows what is missing."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: d.execute_script(SETTLED_JS))
    except TimeoutException:
        return False
    return True
