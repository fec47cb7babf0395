"""Shared fixtures: the site built once, one local server and one browser for the site tests; `one_thread`.

`built_site` runs `mkdocs build --strict` once per test session into a temporary folder;
`test_site_build.py`, `test_site_links.py`, `test_site_browser.py` and the other site tests all read
that one build; `site_with_repository_links` is the build with a repository address. Both builds start
in the background as soon as collection ends. `site_server` serves `built_site` on 127.0.0.1 (an
ephemeral port) from a daemon thread that is shut down when the session ends. `session_browser` is
one headless Chromium for the browser tests of every module (each module's own fixture resets it
with `site_support.reset_browser`); `phone_pages` opens every page once at a phone's width for the phone
checks of every module.
"""

import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import fence_record
import fence_runs
import pytest
import torch
from hypothesis import settings
from site_support import (
    BUILD_TIMEOUT_S,
    PHONE_SCRIPTS,
    PHONE_WIDTH,
    ROOT,
    SITE_FIXTURES,
    BuiltSite,
    chromium,
    open_page,
    serve_site,
    site_url_path,
    wait_until_settled,
)
from support import notebook_name

import seq2seq_attention
from seq2seq_attention.core.device import DEVICE_ENV

# Hypothesis: derandomised in CI (`CI` set, as .ci/run and GitHub Actions set it), so a CI run draws what the
# last one drew; random elsewhere, to keep finding new cases (each one found stays as an `@example`). No
# deadline in either: a test asserts behaviour, not how fast an example ran on a busy machine.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True, deadline=None)
settings.register_profile("dev", print_blob=True, deadline=None)
settings.load_profile("ci" if os.environ.get("CI", "").lower() not in ("", "0", "false") else "dev")

pytest_plugins = ["pytester"]  # tests/test_fence_machinery.py runs pytest on a page of its own


@pytest.fixture
def one_thread() -> Iterator[None]:
    """torch on one CPU thread for the test: tiny models gain nothing from more, and on a loaded
    machine (two cores shared with other jobs) two threads made training steps 50x slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


class _Background:
    """A command run in the background from when it is started (or from when the command `after` has ended), with a
    folder of its own (`{folder}` in `argv`, and the working directory unless `cwd` is given); `wait` for its end."""

    def __init__(self, argv: list[str], cwd: Path | None = None, after: "_Background | None" = None, **env: str):
        self.folder = Path(tempfile.mkdtemp(prefix="pytest-background-"))
        self.argv = [arg.format(folder=self.folder) for arg in argv]
        self.log = (self.folder / "output.log").open("w+", encoding="utf-8")
        self.process: subprocess.Popen | None = None
        self.removed = False

        def start() -> None:
            if after is not None:
                after.starting.join()
                after.process.wait()
            if not self.removed:
                environment = {**os.environ, **env}
                self.process = subprocess.Popen(
                    self.argv, cwd=cwd or self.folder, stdout=self.log, stderr=subprocess.STDOUT, env=environment
                )

        self.starting = threading.Thread(target=start, daemon=True)
        self.starting.start()

    def wait(self, timeout: float) -> str:
        """What the command printed, once it has ended; a failure or a timeout fails the test that waits."""
        try:
            self.starting.join()
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            pytest.fail(f"{' '.join(self.argv[1:4])} took more than {timeout} s", pytrace=False)
        self.log.seek(0)
        output = self.log.read()
        if code != 0:
            problems = [line for line in output.splitlines() if line.startswith(("WARNING", "ERROR"))]
            details = "\n".join(problems) or output[-4000:]
            pytest.fail(f"{' '.join(self.argv[1:4])} failed (exit {code}):\n{details}", pytrace=False)
        return output

    def remove(self) -> None:
        self.removed = True
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.log.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def _build(items: list[pytest.Item], **env: str) -> _Background:
    """`mkdocs build --strict` into the folder's `site`, with the site's Markdown extensions (hooks/) on the path."""
    argv = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", "{folder}/site"]
    return _Background(argv, ROOT, NO_MKDOCS_2_WARNING="1", PYTHONPATH=str(ROOT / "hooks"), **env)


def _workload(items: list[pytest.Item]) -> _Background:
    """tests/excerpt_workload.py under coverage.py, measuring src/seq2seq_attention (data file `.coverage`)."""
    source = ROOT / "src" / "seq2seq_attention"
    argv = [sys.executable, "-m", "coverage", "run", "--data-file=.coverage", f"--source={source}"]
    return _Background([*argv, str(ROOT / "tests" / "excerpt_workload.py"), "."])


def _shape_trace(device: str, items: list[pytest.Item]) -> _Background:
    """tests/shape_trace.py: tests/excerpt_workload.py traced on `device`, into the folder's `trace.json` (the folder is
    also its working directory), with the seq2seq_attention this session imports first on the path."""
    source = str(Path(seq2seq_attention.__file__).resolve().parents[1])
    path = os.pathsep.join(p for p in (source, os.environ.get("PYTHONPATH", "")) if p)
    argv = [sys.executable, str(ROOT / "tests" / "shape_trace.py"), "{folder}/trace.json", "{folder}", device]
    return _Background(argv, PYTHONPATH=path, **{DEVICE_ENV: device})


def _notebooks(items: list[pytest.Item]) -> _Background:
    """tests/notebook_runner.py on the notebooks of the collected pages (`page` parameter), once the site is built."""
    site = _background("built_site", items)
    pages = sorted({item.callspec.params["page"] for item in items})
    jobs = [f"{notebook_name(page)}={site.folder / 'site' / fence_record.notebook_path(page)}" for page in pages]
    argv = [sys.executable, str(ROOT / "tests" / "notebook_runner.py"), "{folder}", *jobs]
    return _Background(argv, after=site, **{DEVICE_ENV: "cpu", "MPLBACKEND": "agg"})


def _accessibility(items: list[pytest.Item]) -> _Background:
    """tests/accessibility_runner.py on the built site into the folder's `audits.json`, once the site is built and the
    notebooks (if they run) have run: one heavy job at a time beside the tests, not two on a machine of two cores."""
    site = _background("built_site", items)
    argv = [sys.executable, str(ROOT / "tests" / "accessibility_runner.py"), "{folder}/audits.json"]
    return _Background(
        [*argv, str(site.folder / "site"), site_url_path()], after=_started.get("executed_notebooks", site)
    )


REPOSITORY = "https://example.invalid/someone/seq2seq-attention"
BACKGROUND = {
    "built_site": _build,
    "site_with_repository_links": functools.partial(_build, REPO_URL=REPOSITORY),
    "excerpt_workload_coverage": _workload,
    "executed_notebooks": _notebooks,
    "accessibility_audits": _accessibility,
    **{f"shape_trace[{device}]": functools.partial(_shape_trace, device) for device in fence_runs.DEVICES},
}
"""What a fixture of that name waits for, started as soon as collection ends if a collected test uses the fixture
(the shape trace of a device: if a collected test traces on it, `shape_trace_frames`)."""
_started: dict[str, _Background] = {}


LAST = {"excerpt_workload_coverage": 1, "traced": 1, "accessibility_audits": 2, "executed_notebooks": 2}
"""Tests that wait for work started in the background run after the others (those of the notebooks, the longest, at
the very end), each group in its collected order: the work gets the time of the tests before them to finish."""


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "site: builds the site, drives a browser, runs the notebooks or reads the accessibility audit "
        "(set from the fixtures a test uses; the quick tier, `-m 'not site and not slow'`, leaves it out)"
    )  # fmt: skip


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def late(item: pytest.Item) -> int:
        return max((LAST.get(name, 0) for name in getattr(item, "fixturenames", ())), default=0)

    for item in items:
        if SITE_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.site)
    items[:] = sorted(items, key=late)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start what collected tests will need right away: it runs beside the tests that come first (on a second
    core) instead of while a test waits for it. The shape trace starts for each device a collected test traces on
    (`traced` in tests/test_shape_comments.py) that this machine has."""
    if session.config.option.collectonly or hasattr(session.config, "workerinput"):
        return  # a pytest-xdist worker starts a job when a test of its share first asks for it (README)
    for name in BACKGROUND:
        items = [item for item in session.items if name in getattr(item, "fixturenames", ())]
        if items:
            _background(name, items)
    traced = [item for item in session.items if "traced" in getattr(item, "fixturenames", ())]
    for device in sorted({item.callspec.params["device"] for item in traced if hasattr(item, "callspec")}):
        if device == "cpu" or torch.cuda.is_available():
            _background(f"shape_trace[{device}]", [])


def pytest_sessionfinish(session: pytest.Session) -> None:
    for background in _started.values():
        background.remove()


def _background(name: str, items: list[pytest.Item]) -> _Background:
    if name not in _started:
        _started[name] = BACKGROUND[name](items)
    return _started[name]


def _site(name: str) -> BuiltSite:
    background = _background(name, [])
    log = background.wait(BUILD_TIMEOUT_S)
    return BuiltSite(root=background.folder / "site", base_path=site_url_path(), log=log)


@pytest.fixture(scope="session")
def built_site() -> BuiltSite:
    """The site, built once with `mkdocs build --strict` (a failed build fails every site test)."""
    return _site("built_site")


@pytest.fixture(scope="session")
def site_with_repository_links() -> BuiltSite:
    """The site built with `REPO_URL` set to `REPOSITORY`, https://example.invalid/someone/seq2seq-attention."""
    return _site("site_with_repository_links")


@pytest.fixture(scope="session")
def excerpt_workload_coverage() -> Path:
    """The coverage.py data file of one run of tests/excerpt_workload.py (what it writes lies beside it)."""
    background = _background("excerpt_workload_coverage", [])
    background.wait(600)
    return background.folder / ".coverage"


@pytest.fixture(scope="session")
def site_server(built_site: BuiltSite) -> Iterator[str]:
    """The built site served on 127.0.0.1; yields its URL, e.g. ``http://127.0.0.1:41234/seq2seq-attention/``."""
    with serve_site(built_site) as url:
        yield url


@pytest.fixture(scope="session")
def session_browser():
    """Headless Chromium with its network log on, started once for the session (a start takes seconds)."""
    with chromium(performance_log=True) as driver:
        yield driver


@pytest.fixture(scope="session")
def shape_trace_frames() -> Callable[[str], list[dict]]:
    """The frame records of tests/shape_trace.py's run on a device (`frames(device)`), started when collection ended
    (or at the first call) and run once per device and session; a failed run fails the test that asks for it."""

    def frames(device: str) -> list[dict]:
        background = _background(f"shape_trace[{device}]", [])
        background.wait(600)
        return json.loads((background.folder / "trace.json").read_text(encoding="utf-8"))["frames"]

    return frames


@pytest.fixture(scope="session")
def eight_word_export(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess, Path]:
    """`seq2seq-attention export-onnx` run once per session in a fresh Python (src/ first on its path) on
    `live_support.checkpoint_with_max_words(..., 8)`: what the command did (its output captured) and its `--out`
    folder. tests/test_export.py checks what it printed and wrote, tests/test_live_browser.py serves the export."""
    from live_support import checkpoint_with_max_words

    folder = tmp_path_factory.mktemp("eight-word-export")
    checkpoint = checkpoint_with_max_words(folder / "eight", 8)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run(
        [sys.executable, "-m", "seq2seq_attention.cli", "export-onnx", "--checkpoint", str(checkpoint),
         "--out", str(folder / "out")],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    return result, folder / "out"


@pytest.fixture(scope="session")
def phone_pages(session_browser, site_server: str, built_site: BuiltSite) -> dict[str, dict[str, object]]:
    """Every page of the site (the 404 page too), served, opened once at `PHONE_WIDTH` x 1000 and left to settle
    (`wait_until_settled`); per page (its `url_of`, "/" for the home page), what each script of
    `site_support.PHONE_SCRIPTS` returned there. One pass serves the phone checks of every module; the browser gets
    its window size back and an empty network log."""
    driver = session_browser
    size = driver.get_window_size()
    driver.set_window_size(PHONE_WIDTH, 1000)
    try:
        states = {}
        for page in built_site.pages():
            url = built_site.url_of(page)
            open_page(driver, site_server + url)
            wait_until_settled(driver, timeout=30)
            states[url or "/"] = {name: driver.execute_script(script) for name, script in PHONE_SCRIPTS.items()}
    finally:
        driver.set_window_size(size["width"], size["height"])
        driver.get("about:blank")
        driver.get_log("performance")
    return states


@pytest.fixture(scope="session")
def executed_notebooks(built_site: BuiltSite) -> Path:
    """A folder with, per collected page of tests/test_fence_notebooks.py, its notebook run by tests/notebook_runner.py
    (`support.notebook_run` reads it): started once the site was built, in the background."""
    background = _background("executed_notebooks", [])
    background.wait(3600)
    return background.folder


@pytest.fixture(scope="session")
def accessibility_audits(built_site: BuiltSite) -> dict[str, dict[str, dict]]:
    """Per theme, per page of the built site: axe-core's violations and the scheme the page showed, from
    tests/accessibility_runner.py, started in the background once the site was built; skips where it had no
    Chromium, fails where a page did not settle."""
    background = _background("accessibility_audits", [])
    background.wait(1800)
    found = json.loads((background.folder / "audits.json").read_text(encoding="utf-8"))
    if "skipped" in found:
        pytest.skip(found["skipped"])
    if "failed" in found:
        pytest.fail(f"the accessibility audit failed: {found['failed']}", pytrace=False)
    return found
