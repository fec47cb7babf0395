"""Shared fixtures: one strict site build and one local server for the site tests; `one_thread`.

`built_site` runs `mkdocs build --strict` once per test session into a temporary folder;
`test_site_build.py`, `test_site_links.py` and `test_site_browser.py` all read that one
build. `site_server` serves it on 127.0.0.1 (an ephemeral port) from a daemon thread that is
shut down when the session ends.
"""

import functools
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import torch
from hypothesis import settings
from site_support import BUILD_TIMEOUT_S, ROOT, BuiltSite, site_url_path

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


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> BuiltSite:
    """The site, built once with `mkdocs build --strict` (a failed build fails every site test)."""
    site = tmp_path_factory.mktemp("site") / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    if result.returncode != 0:
        problems = [line for line in result.stderr.splitlines() if line.startswith(("WARNING", "ERROR"))]
        details = "\n".join(problems) or result.stderr[-4000:]
        pytest.fail(f"mkdocs build --strict failed (exit {result.returncode}):\n{details}", pytrace=False)
    return BuiltSite(root=site, base_path=site_url_path(), log=result.stdout + result.stderr)


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


@pytest.fixture(scope="session")
def site_server(built_site: BuiltSite) -> Iterator[str]:
    """The built site served on 127.0.0.1; yields its URL, e.g. ``http://127.0.0.1:41234/seq2seq-attention/``."""
    handler = functools.partial(
        type("Handler", (_SiteHandler,), {"base_path": built_site.base_path}), directory=str(built_site.root)
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}{built_site.base_path}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
