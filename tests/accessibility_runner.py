"""Runs axe-core on every page of a built site, in the light and in the dark theme, and writes what it found.

tests/conftest.py runs it on the built site (`accessibility_audits`, in the site tests' pytest-xdist group);
tests/site/test_accessibility.py checks what it wrote:
``python tests/accessibility_runner.py OUT.json SITE BASE_PATH`` serves the folder SITE on 127.0.0.1 under
BASE_PATH (the path of `site_url`), opens every page in a headless Chromium of its own at 1280 px, lets it settle
(fonts loaded, KaTeX rendered, Material's copy buttons added, the live page's first translation shown), injects the
vendored axe-core (tests/vendor/axe-core/, from npm: nothing is fetched from a CDN) and runs the rules of
`TAGS` and `EXTRA_RULES` in the light theme; then it chooses the dark theme with the site's own palette toggle, as a
reader does, on the same loaded page, and runs the rules about colour (`COLOUR_RULES`: what a palette changes is
colour alone). OUT.json holds, per theme and page, the violations and the scheme the page showed; or
``{"skipped": reason}`` where Chromium or chromedriver is missing; or ``{"failed": message}``.
"""

import json
import os
import sys
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from site_support import ROOT, BuiltSite, chromium, open_page, serve_site

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


def run_axe(driver: webdriver.Chrome, context: str | None = None, only: tuple[str, ...] | None = None) -> dict:
    """axe-core's violations on the current page (or inside the element `context` selects), and the page's scheme;
    all the rules of `TAGS` and `EXTRA_RULES`, or only the rules `only` names."""
    if not driver.execute_script("return typeof window.axe === 'object';"):
        driver.execute_script(AXE_JS)
    result = driver.execute_async_script(RUN_AXE_JS, context, list(TAGS), list(EXTRA_RULES), only and list(only))
    assert "error" not in result, f"axe-core failed on {driver.current_url}: {result['error']}"
    return result


def choose_scheme(driver: webdriver.Chrome, scheme: str) -> None:
    """The palette `scheme`, chosen as a reader does: a click on Material's toggle (it stores the choice)."""
    if driver.execute_script(SCHEME_JS) == scheme:
        return
    target = driver.find_element(By.CSS_SELECTOR, f"input[name='__palette'][data-md-color-scheme='{scheme}']")
    driver.find_element(By.CSS_SELECTOR, f"label[for='{target.get_attribute('id')}']").click()
    WebDriverWait(driver, WAIT_S, poll_frequency=0.05).until(lambda d: d.execute_script(SCHEME_JS) == scheme)


def audit(driver: webdriver.Chrome, url: str, pages: list[str]) -> dict[str, dict[str, dict]]:
    """Per theme, per page (its path under `url`): axe-core's result (violations, and the scheme the page showed)."""
    driver.set_script_timeout(AXE_S)
    result: dict[str, dict[str, dict]] = {theme: {} for theme in THEMES}
    for page in pages:
        open_page(driver, url + page)
        choose_scheme(driver, THEMES["light"])
        try:
            WebDriverWait(driver, WAIT_S, poll_frequency=0.05).until(lambda d: d.execute_script(SETTLED_JS))
        except TimeoutException:
            raise AssertionError(f"{page} did not settle within {WAIT_S} s") from None
        result["light"][page] = run_axe(driver)
        choose_scheme(driver, THEMES["dark"])
        result["dark"][page] = run_axe(driver, only=COLOUR_RULES)
        choose_scheme(driver, THEMES["light"])
    return result


def main(out: Path, root: Path, base_path: str) -> None:
    site = BuiltSite(root=root, base_path=base_path, log="")
    pages = [page.relative_to(root).as_posix() for page in site.pages()]
    try:
        with serve_site(site) as url, chromium() as driver:
            found: dict = audit(driver, url, pages)
    except pytest.skip.Exception as skipped:
        found = {"skipped": str(skipped.msg)}
    except (AssertionError, pytest.fail.Exception) as failure:
        found = {"failed": str(getattr(failure, "msg", failure))}
    partial = out.with_name(out.name + ".partial")
    partial.write_text(json.dumps(found), encoding="utf-8")
    os.replace(partial, out)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3])
