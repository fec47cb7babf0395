"""axe-core on every page of the built site, in the light and in the dark theme: no serious or critical violation.

Every page of each engine's build (the `engine_site` fixture: MkDocs, then Zensical; the 404 page included) is
audited by
`site_support.audit`, which conftest.py runs on the built site (`accessibility_audits`, with its own
headless Chromium): once a page has settled, the
vendored axe-core runs the rules of WCAG 2.0, 2.1 and 2.2 levels A and AA, and `aria-dialog-name` (a best-practice
rule: the search dialog must have a name), in the light theme (the site's default); then the rules about colour in
the dark one (Material's "slate" scheme), chosen on the same loaded page with the site's own palette toggle. A
violation of impact serious or critical fails the test, listed by page, rule, impact and a few of its elements;
moderate and minor ones are listed in the failure message's summary only. A second test plants the faults in the
session's browser and runs the same axe-core call on them.

Skipped, with the reason, only where Chromium or chromedriver is missing (`.ci/run` installs both).
"""

from collections import Counter

import pytest
from selenium import webdriver
from site_support import AXE_S, FAILING, THEMES, open_page, reset_browser, run_axe

SHOWN_NODES = 3


@pytest.fixture(scope="module")
def browser(session_browser: webdriver.Chrome):
    """The session's browser at 1280 px, with time for axe-core's runs."""
    driver = reset_browser(session_browser)
    script_timeout = driver.timeouts.script
    driver.set_script_timeout(AXE_S)
    try:
        yield driver
    finally:
        driver.set_script_timeout(script_timeout)


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
def test_no_serious_or_critical_violation(accessibility_audits: dict[str, dict[str, dict]], theme: str):
    pages = accessibility_audits[theme]
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
    found = {(v["id"], v["impact"]) for v in run_axe(browser, "#planted-faults")["violations"]}
    assert {("color-contrast", "serious"), ("link-in-text-block", "serious"), ("aria-dialog-name", "serious")} <= found
