"""What the site tests share: where the repository is, a built site (see `conftest.py`), and a browser."""

import functools
import re
import shutil
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from mkdocs.utils.yaml import get_yaml_loader
from selenium import webdriver
from selenium.common.exceptions import TimeoutException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class BuiltSite:
    """A built site: its folder (`root`), the path part of its `site_url` (`base_path`, e.g. ``/seq2seq-attention/``,
    which absolute links in the 404 page start with) and what the build printed (`log`)."""

    root: Path
    base_path: str
    log: str

    def pages(self) -> list[Path]:
        """Every HTML page of the site, the 404 page included."""
        return sorted(self.root.rglob("*.html"))

    def url_of(self, page: Path) -> str:
        """The page's URL path relative to the site root: ``""``, ``"api/"``, ``"404.html"``."""
        return page.relative_to(self.root).as_posix().removesuffix("index.html")


SITE_FIXTURES = frozenset(
    {"built_site", "site_with_repository_links", "session_browser", "executed_notebooks", "accessibility_audits",
     "zensical_site", "engine_site"}
)  # fmt: skip
"""A test that needs one of these (directly or through another fixture) builds the site, drives a browser, runs the
notebooks or reads the accessibility audit: tests/conftest.py marks it `site`, and the quick tier
(`python -m pytest -m "not site"`) leaves it out."""


def mkdocs_yml() -> dict:
    """mkdocs.yml as MkDocs reads it (its `!ENV` tags read from the environment)."""
    return yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=get_yaml_loader())


def site_url_path() -> str:
    """The path part of mkdocs.yml's `site_url` (`SITE_URL` when set), ending in "/"."""
    return urlsplit(mkdocs_yml().get("site_url") or "/").path.rstrip("/") + "/"


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
    handler = type("Handler", (_SiteHandler,), {"base_path": site.base_path})
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(site.root)))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}{site.base_path}"
    finally:
        server.shutdown()  # returns once `serve_forever` has, and with it the thread
        server.server_close()


def nav() -> list:
    """The `nav` of mkdocs.yml, as written (a list of `{title: page or list}` and bare page entries)."""
    return mkdocs_yml()["nav"]


def nav_pages(entries: list) -> list[tuple[str | None, str]]:
    """Every page under `entries`, depth first, as (its title in the nav or None, its path under docs/)."""
    pages: list[tuple[str | None, str]] = []
    for entry in entries:
        ((title, value),) = entry.items() if isinstance(entry, dict) else [(None, entry)]
        pages += nav_pages(value) if isinstance(value, list) else [(title, value)]
    return pages


def chapters() -> list[tuple[str, list[str]]]:
    """The numbered chapters of the nav ("1. seq2seq와 데이터", ...): (title, their pages in order)."""
    titled = [next(iter(entry.items())) for entry in nav() if isinstance(entry, dict)]  # a section, or one page
    return [(title, [page for _, page in nav_pages([value])]) for title, value in titled if re.match(r"\d+\. ", title)]


CHROMIUM_FLAGS = (  # besides chromedriver's own (--no-first-run, --disable-background-networking, --disable-sync, ...)
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-component-update",
    "--disable-extensions",
    "--disable-dev-shm-usage",  # containers (the CI job runs in one) give /dev/shm only 64 MB
    "--window-size=1280,1000",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
)
PAGE_LOAD_S = 60
"""How long opening one page may take. Only a failure waits this long: every wait ends as soon as its condition
holds. A busy machine (the other core kept busy, a CI runner) can take seconds for the largest page."""


@contextmanager
def chromium(*, performance_log: bool = False):
    """Headless Chromium (Debian's `chromium`) driven by its `chromedriver` (selenium), in a fresh profile (the one
    chromedriver makes); quits on exit. The calling test skips, with the reason, where either is missing."""
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium chromium-driver; .ci/run does it)")
    driver_path = shutil.which("chromedriver")
    if driver_path is None:
        pytest.skip("chromedriver is not installed (Debian: apt-get install chromium-driver; .ci/run does it)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in CHROMIUM_FLAGS:
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
    """Opens `url` and returns once *that* document has loaded: the window's own URL is `url` and its `readyState`
    "complete". On a busy machine `driver.get` can return while the previous document is still the current one, or
    while the new one is still parsing (an `article h1` looked for then is not there yet)."""
    target = url.split("#")[0]
    driver.get(url)
    if not wait_for(driver, lambda d: d.execute_script(OPENED_JS) == [target, "complete"]):
        href, state = driver.execute_script(OPENED_JS)
        raise AssertionError(f"{url} did not open within {PAGE_LOAD_S} s (the window shows {href}, {state})")


def wait_for(driver, condition, timeout: float = PAGE_LOAD_S) -> bool:
    """Waits until `condition(driver)` is true (no longer than `timeout`, polled every 50 ms); whether it was."""
    try:
        WebDriverWait(driver, timeout, poll_frequency=0.05).until(condition)
    except TimeoutException:
        return False
    return True


def wait_until_settled(driver, timeout: float = PAGE_LOAD_S, settled: str = SETTLED_JS) -> bool:
    """Waits until the script `settled` returns true (no longer than `timeout`); whether it did. A page that never
    settles is for the calling test to report: what it reads then shows what is missing."""
    return wait_for(driver, lambda d: d.execute_script(settled), timeout)


# axe-core, vendored: `audit` runs it on each page (`accessibility_audits`); tests/site/test_accessibility.py checks

TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa")
"""WCAG 2.0, 2.1 and 2.2, levels A and AA, as axe-core tags its rules."""
EXTRA_RULES = ("aria-dialog-name",)
"""Rules run besides those of `TAGS`: Material's search is a `role="dialog"`, and a dialog needs a name."""
FAILING = ("critical", "serious")
THEMES = {"light": "default", "dark": "slate"}
"""The site's two palettes (mkdocs.yml), by the `data-md-color-scheme` Material gives the page's body."""
AXE_S = 180
"""How long one axe run may take (the largest page, on a busy machine, took under 15 s)."""
COLOUR_RULES = ("color-contrast", "link-in-text-block")
"""The WCAG A/AA rules whose outcome a palette can change (text and link colours against their background)."""

AUDIT_SETTLED_JS = r"""
const live = document.getElementById("live-translator");
return document.fonts.status === "loaded" && (!live || live.dataset.ready === "error" || (live.dataset.ready === "true"
  && live.dataset.done === "true" && live.dataset.busy === "false" && Boolean(live.dataset.luong)));
"""
"""True, on a page that `SETTLED_JS` found settled, once its fonts have loaded and the live page shows its first
translation."""
RUN_AXE_JS = """
const [context, tags, extra, only, done] = arguments;
const rules = Object.fromEntries(extra.map(rule => [rule, {enabled: true}]));
const options = only ? {runOnly: {type: "rule", values: only}} : {runOnly: {type: "tag", values: tags}, rules};
axe.run(context ? document.querySelector(context) : document, {...options, resultTypes: ["violations"]})
  .then(result => done({
    scheme: document.body.getAttribute("data-md-color-scheme"),
    violations: result.violations.map(v => ({
      id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.map(n => ({target: n.target.map(String).join(" "), impact: n.impact})),
    })),
  }))
  .catch(error => done({error: String(error)}));
"""
SCHEME_JS = "return document.body.getAttribute('data-md-color-scheme');"


def run_axe(driver: webdriver.Chrome, context: str | None = None, only: tuple[str, ...] | None = None) -> dict:
    """axe-core's violations on the current page (or inside the element `context` selects), and the page's scheme;
    all the rules of `TAGS` and `EXTRA_RULES`, or only the rules `only` names."""
    if not driver.execute_script("return typeof window.axe === 'object';"):  # tests/vendor/axe-core/, from npm
        driver.execute_script((ROOT / "tests" / "vendor" / "axe-core" / "axe.min.js").read_text(encoding="utf-8"))
    result = driver.execute_async_script(RUN_AXE_JS, context, list(TAGS), list(EXTRA_RULES), only and list(only))
    assert "error" not in result, f"axe-core failed on {driver.current_url}: {result['error']}"
    return result


def choose_scheme(driver: webdriver.Chrome, scheme: str) -> None:
    """The palette `scheme`, chosen as a reader does: a click on Material's toggle (it stores the choice)."""
    if driver.execute_script(SCHEME_JS) == scheme:
        return
    target = driver.find_element(By.CSS_SELECTOR, f"input[name='__palette'][data-md-color-scheme='{scheme}']")
    driver.find_element(By.CSS_SELECTOR, f"label[for='{target.get_attribute('id')}']").click()
    assert wait_for(driver, lambda d: d.execute_script(SCHEME_JS) == scheme), f"{scheme} was not chosen"


def audit(site: BuiltSite) -> dict[str, dict[str, dict]]:
    """Per theme, per page of `site` (its path in the site): axe-core's violations, and the scheme the page showed.

    `site` is served and every page opened in a Chromium of its own (the palette it chooses is stored in its profile)
    and left to settle (`SETTLED_JS`, then `AUDIT_SETTLED_JS`); axe-core runs the rules of `TAGS` and `EXTRA_RULES`
    in the light theme; then the dark theme is chosen with the site's own palette toggle, as a reader does, on the
    same loaded page, and the rules about colour run (`COLOUR_RULES`: what a palette changes is colour alone).
    """
    result: dict[str, dict[str, dict]] = {theme: {} for theme in THEMES}
    with serve_site(site) as url, chromium() as driver:
        driver.set_script_timeout(AXE_S)
        for page in [page.relative_to(site.root).as_posix() for page in site.pages()]:
            open_page(driver, url + page)
            choose_scheme(driver, THEMES["light"])
            settled = wait_until_settled(driver) and wait_until_settled(driver, settled=AUDIT_SETTLED_JS)
            assert settled, f"{page} did not settle within {PAGE_LOAD_S} s"
            result["light"][page] = run_axe(driver)
            choose_scheme(driver, THEMES["dark"])
            result["dark"][page] = run_axe(driver, only=COLOUR_RULES)
            choose_scheme(driver, THEMES["light"])
    return result
