"""axe-core on every page of the built site, in the light and in the dark theme: no serious or critical violation.

Every page of the strict build (the `built_site` fixture, the 404 page included) is served on 127.0.0.1
(`site_server`) and opened in the session's headless Chromium at 1280 px, once per theme; once it has settled
(fonts loaded, KaTeX rendered, Material's copy buttons added, the live page's first translation shown), the
vendored axe-core (tests/vendor/axe-core/, from npm: nothing is fetched from a CDN) is injected and run with the
rules of WCAG 2.0, 2.1 and 2.2 levels A and AA, and with `aria-dialog-name` (a best-practice rule: the search
dialog must have a name). A violation of impact serious or critical fails the test, listed by page, rule, impact
and a few of its elements; moderate and minor ones are listed in the failure message's summary only.

The light theme is the site's default (nothing stored); the dark one is Material's "slate" scheme, chosen on the
same loaded page with the site's own palette toggle, as a reader does (one load per page). What a theme changes is
colour alone, so in the dark theme axe-core runs the rules about colour (`COLOUR_RULES`); the rules about structure
and names ran on the same page in the light theme. The light theme is chosen again before the next page.

Skipped, with the reason, only where Chromium or chromedriver is missing (`.ci/run` installs both).
"""

from collections import Counter

import pytest
from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from site_support import ROOT, BuiltSite, open_page, reset_browser

AXE_JS = (ROOT / "tests" / "vendor" / "axe-core" / "axe.min.js").read_text(encoding="utf-8")
TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa")
"""WCAG 2.0, 2.1 and 2.2, levels A and AA, as axe-core tags its rules."""
EXTRA_RULES = ("aria-dialog-name",)
"""Rules run besides those of `TAGS`: Material's search is a `role="dialog"`, and a dialog needs a name."""
FAILING = ("critical", "serious")
THEMES = {"light": "default", "dark": "slate"}
"""The site's two palettes (mkdocs.yml), by the `data-md-color-scheme` Material gives the page's body."""
WAIT_S = 60
"""How long a page may take to settle; a wait ends as soon as the page has."""
AXE_S = 180
"""How long one axe run may take (the largest page, on a busy machine, took under 15 s)."""
SHOWN_NODES = 3
COLOUR_RULES = ("color-contrast", "link-in-text-block")
"""The WCAG A/AA rules whose outcome a palette can change (text and link colours against their background)."""

SETTLED_JS = r"""
const live = document.getElementById("live-translator");
return document.readyState === "complete" && document.fonts.status === "loaded"
  && [...document.querySelectorAll(".arithmatex")].every(m => m.querySelector(".katex, .katex-error"))
  && [...document.querySelectorAll("pre > code")].every(c => c.parentElement.querySelector("[data-clipboard-target]"))
  && (!live || live.dataset.ready === "error" || (live.dataset.ready === "true" && live.dataset.done === "true"
      && live.dataset.busy === "false" && Boolean(live.dataset.luong)));
"""
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


def _axe(driver: webdriver.Chrome, context: str | None = None, only: tuple[str, ...] | None = None) -> dict:
    """axe-core's violations on the current page (or inside the element `context` selects), and the page's scheme;
    all the rules of `TAGS` and `EXTRA_RULES`, or only the rules `only` names."""
    if not driver.execute_script("return typeof window.axe === 'object';"):
        driver.execute_script(AXE_JS)
    result = driver.execute_async_script(RUN_AXE_JS, context, list(TAGS), list(EXTRA_RULES), only and list(only))
    assert "error" not in result, f"axe-core failed on {driver.current_url}: {result['error']}"
    return result


def _choose_scheme(driver: webdriver.Chrome, scheme: str) -> None:
    """The palette `scheme`, chosen as a reader does: a click on Material's toggle (it stores the choice)."""
    if driver.execute_script(SCHEME_JS) == scheme:
        return
    target = driver.find_element(By.CSS_SELECTOR, f"input[name='__palette'][data-md-color-scheme='{scheme}']")
    driver.find_element(By.CSS_SELECTOR, f"label[for='{target.get_attribute('id')}']").click()
    WebDriverWait(driver, WAIT_S, poll_frequency=0.05).until(lambda d: d.execute_script(SCHEME_JS) == scheme)


@pytest.fixture(scope="module")
def browser(session_browser: webdriver.Chrome):
    """The session's browser at 1280 px, with time for axe-core's runs; left in the light theme."""
    driver = reset_browser(session_browser)
    script_timeout = driver.timeouts.script
    driver.set_script_timeout(AXE_S)
    try:
        yield driver
    finally:
        if driver.current_url.startswith("http"):
            _choose_scheme(driver, THEMES["light"])
        driver.set_script_timeout(script_timeout)


@pytest.fixture(scope="module")
def audits(browser: webdriver.Chrome, site_server: str, built_site: BuiltSite) -> dict[str, dict[str, dict]]:
    """Per theme, per page: axe-core's result (violations, and the scheme the page showed when it ran)."""
    pages = [page.relative_to(built_site.root).as_posix() for page in built_site.pages()]
    result: dict[str, dict[str, dict]] = {theme: {} for theme in THEMES}
    for page in pages:
        open_page(browser, site_server + page)
        _choose_scheme(browser, THEMES["light"])
        try:
            WebDriverWait(browser, WAIT_S, poll_frequency=0.05).until(lambda d: d.execute_script(SETTLED_JS))
        except TimeoutException:
            pytest.fail(f"{page} did not settle within {WAIT_S} s", pytrace=False)
        result["light"][page] = _axe(browser)
        _choose_scheme(browser, THEMES["dark"])
        result["dark"][page] = _axe(browser, only=COLOUR_RULES)
        _choose_scheme(browser, THEMES["light"])
    return result


def _summary(pages: dict[str, dict]) -> str:
    """Every violation of the theme, serious or not: elements per rule and impact, and on how many pages."""
    nodes, on_pages = Counter(), Counter()
    for audit in pages.values():
        for violation in audit["violations"]:
            nodes[violation["id"], violation["impact"]] += len(violation["nodes"])
            on_pages[violation["id"], violation["impact"]] += 1
    return "\n".join(
        f"  {rule} ({impact}): {nodes[rule, impact]} elements on {on_pages[rule, impact]} pages"
        for rule, impact in sorted(nodes)
    )


@pytest.mark.parametrize("theme", THEMES)
def test_no_serious_or_critical_violation(audits: dict[str, dict[str, dict]], theme: str):
    pages = audits[theme]
    wrong_scheme = {page: audit["scheme"] for page, audit in pages.items() if audit["scheme"] != THEMES[theme]}
    assert not wrong_scheme, f"pages not shown in the {theme} theme ({THEMES[theme]}): {wrong_scheme}"
    problems = []
    for page, audit in pages.items():
        for violation in audit["violations"]:
            failing = [node["target"] for node in violation["nodes"] if node["impact"] in FAILING]
            if violation["impact"] in FAILING and failing:
                shown = ", ".join(failing[:SHOWN_NODES])
                if len(failing) > SHOWN_NODES:
                    shown += f" and {len(failing) - SHOWN_NODES} more"
                problems.append(f"{page}: {violation['id']} ({violation['impact']}, {violation['help']}): {shown}")
    assert not problems, f"axe-core, {theme} theme:\n" + "\n".join(problems) + "\nall violations:\n" + _summary(pages)


def test_axe_reports_what_the_pages_must_not_have(browser: webdriver.Chrome, site_server: str):
    """The same run of axe-core on planted faults: grey text on white, a link told apart by its colour only, and
    an unnamed dialog are each reported serious (so the test above can fail)."""
    open_page(browser, site_server)
    browser.execute_script("""
      const box = document.createElement("div");
      box.id = "planted-faults";
      box.innerHTML = '<p style="color:#000;background:#fff">Text around <a href="#x" style="color:#222;'
        + 'text-decoration:none">a link</a> and more text.</p><p style="color:#aaa;background:#fff">faint</p>'
        + '<div role="dialog">a dialog</div>';
      document.querySelector("article").prepend(box);
    """)
    found = {(v["id"], v["impact"]) for v in _axe(browser, "#planted-faults")["violations"]}
    assert {("color-contrast", "serious"), ("link-in-text-block", "serious"), ("aria-dialog-name", "serious")} <= found
