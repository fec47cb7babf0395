"""The quick tier (`python -m pytest -m "not site and not slow"`, README's "Run all tests"): every test that needs the
built site, a browser, the executed notebooks or the accessibility audit is marked `site`, and no other test is; the
end-to-end tests of several seconds (training runs, ONNX exports, commands in a fresh Python) are marked `slow`; the
quick tier collects neither, and a full run collects both."""

from pathlib import Path

import pytest
from site_support import SITE_FIXTURES
from support import ROOT

HEAVY_MODULES = ("test_site_browser.py", "test_live_browser.py", "test_accessibility.py", "test_fence_notebooks.py")
END_TO_END_MODULES = ("test_package_layout.py", "test_architecture_options.py", "test_export.py", "test_cli_resume.py")
QUICK = "not site and not slow"


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


def test_the_quick_tier_collects_no_slow_test_and_a_full_run_marks_the_end_to_end_ones(request: pytest.FixtureRequest):
    items = request.session.items
    selected = request.config.getoption("markexpr") or ""
    if "not slow" in selected:  # the quick tier: no training run, export or fresh Python
        assert not [item.nodeid for item in items if item.get_closest_marker("slow")]
    else:  # a full run: every module of end-to-end tests collected has its slow tests marked
        for module in {Path(str(item.path)).name for item in items}.intersection(END_TO_END_MODULES):
            marked = [item for item in items if Path(str(item.path)).name == module and item.get_closest_marker("slow")]
            assert marked, f"{module}: no test marked slow"


def test_the_markers_are_registered_and_readme_names_the_quick_command(pytestconfig: pytest.Config):
    markers = pytestconfig.getini("markers")
    assert any(line.startswith("site:") for line in markers) and any(line.startswith("slow:") for line in markers)
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## Run all tests", 1)[1].split("\n## ", 1)[0]
    assert f'`python -m pytest -m "{QUICK}" -n 2 --dist loadfile`' in section


def test_a_fence_whose_recorded_run_was_long_is_slow(request: pytest.FixtureRequest):
    """A spec fence is `slow` exactly when its last recorded CPU run took longer than conftest's `SLOW_FENCE_S`."""
    fences = [item for item in request.session.items if type(item).__name__ == "FenceItem"]
    for item in fences:
        machinery = type(item).runtest.__globals__  # the root conftest.py (tests/conftest.py is `conftest` too)
        slow = machinery["_recorded_seconds"](item) > machinery["SLOW_FENCE_S"]
        assert (item.get_closest_marker("slow") is not None) == slow, item.nodeid
