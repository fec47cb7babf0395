"""Shared fixtures: the site built once (`built_site`) and served (`site_server`), one browser (`session_browser`),
the long runs (shape trace, coverage workload, notebooks, accessibility audit), `one_thread`. Tests that share a long
fixture carry one `xdist_group` each (`GROUPS`): with README's `-n 2 --dist loadgroup` it runs once.
"""

import functools
import json
import os
import shutil
import subprocess
import sys
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

import fence_record
import pytest
import torch
from hypothesis import settings
from site_support import (
    PHONE_SCRIPTS,
    PHONE_WIDTH,
    ROOT,
    SITE_FIXTURES,
    BuiltSite,
    audit,
    chromium,
    open_page,
    reset_browser,
    serve_site,
    site_url_path,
    wait_until_settled,
)

import seq2seq_attention
from seq2seq_attention.core.device import DEVICE_ENV

# Hypothesis: derandomised in CI (`CI` set, as .ci/run and GitHub Actions set it), random elsewhere to keep finding
# new cases (each one found stays as an `@example`); no deadline: a test asserts behaviour, not speed.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True, deadline=None)
settings.register_profile("dev", print_blob=True, deadline=None)
settings.load_profile("ci" if os.environ.get("CI", "").lower() not in ("", "0", "false") else "dev")

pytest_plugins = ["pytester"]  # tests/site/test_fence_machinery.py runs pytest on a page of its own
BUILD_TIMEOUT_S = 300


@pytest.fixture
def one_thread() -> Iterator[None]:
    """torch on one CPU thread for the test: tiny models gain nothing from more, and on a loaded
    machine (two cores shared with other jobs) two threads made training steps 50x slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield  # pytest runs the rest when the test ends, whatever its outcome
    torch.set_num_threads(threads)


def _run(factory: pytest.TempPathFactory, name: str, argv: list[str], timeout: float, cwd: Path | None = None,
         **env: str) -> tuple[Path, str]:  # fmt: skip
    """Run a command in a folder of its own (`{folder}` in `argv`, and its working directory unless `cwd` is given);
    the folder and what the command printed. A failure or a timeout fails the test that asked for it."""
    folder = factory.mktemp(name)
    argv = [arg.format(folder=folder) for arg in argv]
    try:
        done = subprocess.run(
            argv, cwd=cwd or folder, env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, timeout=timeout,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail(f"{' '.join(argv[1:4])} took more than {timeout} s", pytrace=False)
    if done.returncode != 0:
        problems = [line for line in done.stdout.splitlines() if line.startswith(("WARNING", "ERROR"))]
        details = "\n".join(problems) or done.stdout[-4000:]
        pytest.fail(f"{' '.join(argv[1:4])} failed (exit {done.returncode}):\n{details}", pytrace=False)
    return folder, done.stdout


def _build(factory: pytest.TempPathFactory, engine: str = "mkdocs", **env: str) -> BuiltSite:
    """`mkdocs build --strict` (or `zensical build --clean --strict`, README "Site engines") into a folder's `site`,
    with the site's Markdown extensions (hooks/) on the path. Zensical writes only inside the repository (`SITE_DIR`,
    a folder of build/): its site is moved from there."""
    out = ROOT / "build" / f"zensical-{os.getpid()}"
    options = ["--site-dir", "{folder}/site"] if engine == "mkdocs" else ["--clean"]
    argv = [sys.executable, "-m", engine, "build", "--strict", *options]
    folder, log = _run(factory, engine, argv, BUILD_TIMEOUT_S, ROOT, NO_MKDOCS_2_WARNING="1", SITE_DIR=str(out),
                       PYTHONPATH=str(ROOT / "hooks"), **env)  # fmt: skip
    if engine == "zensical":
        shutil.move(out, folder / "site")
    return BuiltSite(root=folder / "site", base_path=site_url_path(), log=log)


REPOSITORY = "https://example.invalid/someone/seq2seq-attention"
GROUPS = {
    "site": SITE_FIXTURES,
    "shape_trace": {"shape_trace_frames"},
    "excerpt_workload": {"excerpt_workload_coverage"},
}
"""The tests that share a long session fixture run in one pytest-xdist worker (`--dist loadgroup`, README's test
command), so that it runs once, while the other worker runs the other tests."""


try:  # pytest 9.2's node ids (see below); an older or newer pytest without it groups as pytest-xdist does
    from _pytest.nodeid import coerce_node_id
except ImportError:
    coerce_node_id = None


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        group = next((group for group, fixtures in GROUPS.items() if fixtures & names), None)
        if group == "site":
            item.add_marker(pytest.mark.site)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
        if group and coerce_node_id and config.getoption("loadgroup", False):
            # what pytest-xdist 3.8 does for the mark (`item._nodeid += "@group"`, remote.py), which pytest 9.2's
            # nodes no longer read: without it `--dist loadgroup` spreads a group over both workers
            item._id = coerce_node_id(f"{item.nodeid}@{group}")


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> BuiltSite:
    """The site, built once with `mkdocs build --strict` (a failed build fails every site test)."""
    return _build(tmp_path_factory)


@pytest.fixture(scope="session")
def site_with_repository_links(tmp_path_factory: pytest.TempPathFactory) -> BuiltSite:
    """The site built with `REPO_URL` set to `REPOSITORY`, https://example.invalid/someone/seq2seq-attention."""
    return _build(tmp_path_factory, REPO_URL=REPOSITORY)


@pytest.fixture(scope="session")
def zensical_site(tmp_path_factory: pytest.TempPathFactory) -> BuiltSite:
    """The site built once by Zensical (`_build`) with `REPO_URL` set to `REPOSITORY`."""
    return _build(tmp_path_factory, "zensical", REPO_URL=REPOSITORY)


@pytest.fixture(scope="session", params=["mkdocs", "zensical"])
def engine_site(request: pytest.FixtureRequest) -> BuiltSite:
    """`built_site`, then `zensical_site`: a test that asks for it runs on the build of each engine."""
    return request.getfixturevalue("built_site" if request.param == "mkdocs" else "zensical_site")


@pytest.fixture(scope="session")
def engine_server(engine_site: BuiltSite) -> Iterator[str]:
    """`engine_site` served as `site_server` serves `built_site`."""
    with serve_site(engine_site) as url:
        yield url


@pytest.fixture(scope="session")
def excerpt_workload_coverage(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The coverage.py data file of one run of tests/excerpt_workload.py (what it writes lies beside it)."""
    source = ROOT / "src" / "seq2seq_attention"
    argv = [sys.executable, "-m", "coverage", "run", "--data-file=.coverage", f"--source={source}"]
    folder, _ = _run(tmp_path_factory, "workload", [*argv, str(ROOT / "tests" / "excerpt_workload.py"), "."], 600)
    return folder / ".coverage"


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
def shape_trace_frames(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], list[dict]]:
    """The frame records of tests/shape_trace.py's run on a device (`frames(device)`): tests/excerpt_workload.py traced
    on it, with the seq2seq_attention this session imports first on the path, once per device and session; a failed
    run fails the test that asks for it."""

    @functools.cache
    def frames(device: str) -> list[dict]:
        source = str(Path(seq2seq_attention.__file__).resolve().parents[1])
        path = os.pathsep.join(p for p in (source, os.environ.get("PYTHONPATH", "")) if p)
        argv = [sys.executable, str(ROOT / "tests" / "shape_trace.py"), "{folder}/trace.json", "{folder}", device]
        folder, _ = _run(tmp_path_factory, f"shape-trace-{device}", argv, 600, PYTHONPATH=path, **{DEVICE_ENV: device})
        return json.loads((folder / "trace.json").read_text(encoding="utf-8"))["frames"]

    return frames


@pytest.fixture(scope="session")
def eight_word_export(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess, Path]:
    """`seq2seq-attention export-onnx` run once per session in a fresh Python (src/ first on its path) on
    `live_support.checkpoint_with_max_words(..., 8)`: what the command did (its output captured) and its `--out`
    folder, which tests/workbench/test_export.py checks."""
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
    `site_support.PHONE_SCRIPTS` returned there. One pass serves the phone checks of every module; the browser is
    reset to its window size after (`reset_browser`)."""
    size = session_browser.get_window_size()
    driver = reset_browser(session_browser, PHONE_WIDTH, 1000)
    try:
        states = {}
        for page in built_site.pages():
            url = built_site.url_of(page)
            open_page(driver, site_server + url)
            wait_until_settled(driver, timeout=30)
            states[url or "/"] = {name: driver.execute_script(script) for name, script in PHONE_SCRIPTS.items()}
    finally:
        reset_browser(driver, size["width"], size["height"])
    return states


@pytest.fixture(scope="session")
def executed_notebooks(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, built_site: BuiltSite
) -> dict[str, tuple[dict, str]]:
    """Per collected page of tests/site/test_fence_notebooks.py: its notebook as the build wrote it, run top to bottom
    by nbclient in a fresh kernel, on the CPU, in an empty working directory; and the traceback of the cell that
    failed ("" when none did)."""
    import nbformat
    from nbclient import NotebookClient

    items = [item for item in request.session.items if "executed_notebooks" in getattr(item, "fixturenames", ())]
    runs = {}
    with pytest.MonkeyPatch.context() as patch:  # the kernels' environment
        patch.setenv(DEVICE_ENV, "cpu")
        patch.setenv("MPLBACKEND", "agg")
        for page in sorted({item.callspec.params["page"] for item in items}):
            book = nbformat.read(built_site.root / fence_record.notebook_path(page), as_version=4)
            resources = {"metadata": {"path": str(tmp_path_factory.mktemp("notebook"))}}
            try:
                NotebookClient(book, timeout=600, kernel_name="python3", resources=resources).execute()
                runs[page] = book, ""
            except Exception:
                runs[page] = book, traceback.format_exc()
    return runs


@pytest.fixture(scope="session")
def accessibility_audits(engine_site: BuiltSite) -> dict[str, dict[str, dict]]:
    """Per theme, per page of each engine's build: `site_support.audit`'s axe-core violations and the scheme the page
    showed; skips where there is no Chromium, fails where a page did not settle."""
    return audit(engine_site)
