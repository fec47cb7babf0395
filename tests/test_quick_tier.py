"""The quick tier (`python -m pytest -m "not site"`, README's "Run all tests"): every test that needs the built site,
a browser, the executed notebooks or the accessibility audit is marked `site`, and no other test is."""

from pathlib import Path

import pytest
from site_support import SITE_FIXTURES
from support import ROOT

HEAVY_MODULES = ("test_site_browser.py", "test_live_browser.py", "test_accessibility.py", "test_fence_notebooks.py")


def test_site_marks_exactly_the_tests_that_need_a_site_fixture(request: pytest.FixtureRequest):
    items = request.session.items
    assert items, "no collected tests"
    for item in items:
        needs = sorted(SITE_FIXTURES.intersection(getattr(item, "fixturenames", ())))
        marked = item.get_closest_marker("site") is not None
        assert marked == bool(needs), f"{item.nodeid}: marked site {marked}, needs {needs}"
    selected = request.config.getoption("markexpr") or ""
    if "not site" in selected:  # the quick tier: nothing that needs the site, a browser, the notebooks or the audit
        assert not [item.nodeid for item in items if item.get_closest_marker("site")]
    else:  # a full run: every heavy module collected has its site tests marked
        for module in {Path(str(item.path)).name for item in items}.intersection(HEAVY_MODULES):
            marked = [item for item in items if Path(str(item.path)).name == module and item.get_closest_marker("site")]
            assert marked, f"{module}: no test marked site"


def test_the_marker_is_registered_and_readme_names_the_quick_command(pytestconfig: pytest.Config):
    assert any(line.startswith("site:") for line in pytestconfig.getini("markers"))
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## Run all tests", 1)[1].split("\n## ", 1)[0]
    assert '`python -m pytest -m "not site"`' in section
