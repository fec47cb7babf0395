"""The pages' spec fences in pytest (pytest-markdown-docs collects every plain ```python fence in docs/*.md).

Each fence that calls `pick_device()` is cloned once per device of `--devices` (`[cpu]`, `[cuda]`; `[cuda]` skips
with a reason without CUDA), steered through `SEQ2SEQ_ATTENTION_DEVICE`; any other runs once (`[no-device]`), as a
`FenceItem`. The end of the run counts the fences per page and device; `--record-fences` writes each fence's run into
`docs/fence-runs.json` (`hooks/fence_runs.py`), a device that did not run keeping its previous entry.
"""

import ast
import contextlib
import datetime
import functools
import io
import platform
import tempfile
import types
from collections import Counter, defaultdict
from pathlib import Path

import fence_runs  # hooks/fence_runs.py (on the path through pyproject.toml's `pythonpath`)
import pytest
import torch
from _pytest.assertion.rewrite import rewrite_asserts
from fence_runs import DEVICES, NO_DEVICE
from pytest_markdown_docs.plugin import MarkdownDocstringCodeModule, MarkdownInlinePythonItem

from seq2seq_attention.core.device import DEVICE_ENV


class FenceItem(MarkdownInlinePythonItem):
    """A spec fence run here: once, in an empty working directory, with pytest's assertion rewriting, what its own
    code printed kept in `printed`. The plugin's public interface cannot change how a fence is compiled and run, so
    this subclass of its item does; tests/site/test_markdown_docs_interface.py fails when an upgrade changes a name
    or signature used here."""

    printed = ""
    device = NO_DEVICE  # the device tag of this copy; any other than NO_DEVICE is set in `DEVICE_ENV` while it runs
    fence: "fence_runs.Fence | None" = None  # this fence as the record reads it (None: hooks/fence_runs.py misses it)

    def runtest(self) -> None:
        definition = self.test_definition
        if definition.max_retries:
            raise pytest.UsageError(f"{self.nodeid}: a spec fence runs once; remove its retry option")
        namespace = types.ModuleType("fence").__dict__
        for extra in self.config.hook.pytest_markdown_docs_globals():
            namespace.update(extra)
        namespace.update({name: self.fixture_request.getfixturevalue(name) for name in definition.fixture_names})
        path = str(definition.source_path)
        tree = ast.parse(definition.source, filename=path)
        rewrite_asserts(tree, definition.source.encode(), path, self.config)
        # A continuation fence's source starts with the fences it continues (its own code begins after
        # its opening line): the two parts run one after the other in one namespace, as one program,
        # so that `printed` keeps only what the fence's own code printed.
        continued = [node for node in tree.body if node.lineno <= definition.start_line]
        own = [node for node in tree.body if node.lineno > definition.start_line]
        printed = io.StringIO()
        own_start = 0
        try:
            with tempfile.TemporaryDirectory(prefix="fence-") as empty, contextlib.chdir(empty):
                with contextlib.redirect_stdout(printed), pytest.MonkeyPatch.context() as patch:
                    if self.device != NO_DEVICE:
                        patch.setenv(DEVICE_ENV, self.device)
                    exec(compile(ast.Module(continued, type_ignores=[]), path, "exec", dont_inherit=True), namespace)
                    own_start = printed.tell()
                    exec(compile(ast.Module(own, type_ignores=[]), path, "exec", dont_inherit=True), namespace)
        except Exception as error:
            if printed.getvalue():
                error.add_note(f"the fence printed:\n{printed.getvalue().rstrip()}")
            raise
        finally:
            self.printed = printed.getvalue()[own_start:]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--devices",
        default=",".join(DEVICES),
        help="comma-separated devices to run each spec fence on (default: cpu,cuda; "
        "cuda copies are skipped when CUDA is absent)",
    )
    parser.addoption(
        "--record-fences",
        action="store_true",
        help=f"write each spec fence's run into docs/{fence_runs.RECORD_NAME} (devices that did not run "
        "keep their previous entries); without it the record is never written",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "device(name): the device a spec fence copy runs on")
    if config.getoption("--record-fences") and getattr(config.option, "numprocesses", None):
        raise pytest.UsageError("--record-fences runs in one process: leave out -n (each xdist worker sees a share)")


@pytest.hookimpl(wrapper=True)
def pytest_collect_file(file_path: Path, parent: pytest.Collector):
    """Spec fences are the pages' (docs/*.md): the plugin's collector of fences in the docstrings of .py files,
    which imports every .py file under tests/ (support modules and scripts too) to find none, is left out."""
    collectors = yield
    return [collector for collector in collectors if not isinstance(collector, MarkdownDocstringCodeModule)]


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    devices = [d.strip() for d in config.getoption("--devices").split(",") if d.strip()]
    if not devices or set(devices) - set(DEVICES):
        raise pytest.UsageError(f"--devices takes a comma-separated subset of {', '.join(DEVICES)}, got {devices}")
    cuda_ok = torch.cuda.is_available()
    result: list[pytest.Item] = []
    for item in items:
        if not isinstance(item, MarkdownInlinePythonItem):
            result.append(item)
            continue
        fence = item.test_definition
        tags = devices if fence_runs.picks_device(fence.source) else [NO_DEVICE]
        for tag in tags:
            clone = FenceItem.from_parent(item.parent, name=f"{item.name}[{tag}]", test_definition=fence)
            clone.device, clone.fence = tag, _fences_by_line(Path(item.path)).get(item.start_line)
            if tag != NO_DEVICE:
                clone.add_marker(pytest.mark.device(tag))
            if tag == "cuda" and not cuda_ok:
                clone.add_marker(pytest.mark.skip(reason="CUDA is not available on this machine"))
            if _recorded_seconds(clone) > SLOW_FENCE_S:
                clone.add_marker(pytest.mark.slow)
            result.append(clone)
    items[:] = result


SLOW_FENCE_S = 5.0
"""A fence whose last recorded CPU run took longer (seconds) is `slow`: the quick tier leaves it out, a full run not."""


def _recorded_seconds(item: FenceItem) -> float:
    """How long the fence's last recorded CPU run took (0 when the record has none for this code)."""
    run = _record(item.config.rootpath).get(item.fence.key, {}).get(item.fence.cpu_tag) if item.fence else None
    return float(run["seconds"]) if run else 0.0


@functools.cache
def _record(root: Path) -> dict[str, dict[str, dict]]:
    return fence_runs.load(root / "docs" / fence_runs.RECORD_NAME)


_runs: dict[str, dict[str, dict]] = {}
"""This session's fence runs for the record, by fence key and device tag (only with `--record-fences`)."""
_unkeyed: list[str] = []
_recorded: list[str] = []


@functools.cache
def _fences_by_line(page: Path) -> dict[int, "fence_runs.Fence"]:
    """A page's spec fences as the record reads them, by the line each starts on."""
    return {fence.line: fence for fence in fence_runs.spec_fences(page.read_text(encoding="utf-8"))}


def _device_name(tag: str) -> str:
    if tag == "cuda":
        return torch.cuda.get_device_name()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    return platform.processor() or platform.machine()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    if report.when != "call" or not isinstance(item, FenceItem) or not item.config.getoption("--record-fences"):
        return report
    if item.fence is None:
        _unkeyed.append(item.nodeid)
        return report
    run = {
        "outcome": report.outcome,
        "output": fence_runs.cap_output(item.printed),
        "seconds": round(report.duration, 3),
        "torch": torch.__version__,
        "device": _device_name(item.device),
        "date": datetime.datetime.now(datetime.UTC).date().isoformat(),
    }
    if call.excinfo is not None:
        run["error"] = fence_runs.cap_output(call.excinfo.exconly().splitlines()[0])
    _runs.setdefault(item.fence.key, {})[item.device] = run
    return report


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not session.config.getoption("--record-fences") or exitstatus == pytest.ExitCode.INTERRUPTED:
        return
    if _unkeyed:  # hooks/fence_runs.py reads a page's fences otherwise than pytest-markdown-docs
        _recorded.extend(["not recorded: hooks/fence_runs.py does not find these fences:", *_unkeyed])
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        return
    if not _runs:
        return
    docs = session.config.rootpath / "docs"
    path = docs / fence_runs.RECORD_NAME
    fence_runs.write(path, fence_runs.updated(docs, fence_runs.load(path), _runs))
    _recorded.append(f"recorded {sum(map(len, _runs.values()))} fence runs into {path.relative_to(docs.parent)}")
    if stale := fence_runs.stale(docs, fence_runs.load(path)):  # a fence failed, or did not run and had no earlier run
        _recorded.extend(["the record is still stale on CPU for:", *stale])
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


_collected_pages: set[str] = set()


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.nodeid.endswith(".md") and report.passed:
        _collected_pages.add(report.nodeid)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    for line in _recorded:
        terminalreporter.write_line(line)
    counts: defaultdict[str, Counter[str]] = defaultdict(Counter)  # by page: "passed [cpu]" and the like
    for outcome in ("passed", "failed", "skipped"):
        for report in terminalreporter.stats.get(outcome, []):
            path, _, name = report.nodeid.partition("::")
            if path.endswith(".md") and (report.when == "call" or outcome == "skipped" and report.when == "setup"):
                counts[path][f"{outcome} [{name.rsplit('[', 1)[-1].rstrip(']')}]"] += 1
    if not counts:
        return
    terminalreporter.section("spec fences per page")
    order = [f"{outcome} [{device}]" for device in (*DEVICES, NO_DEVICE) for outcome in ("passed", "failed", "skipped")]
    for path, count in sorted(counts.items()):
        terminalreporter.write_line(f"{path}: {', '.join(f'{count[key]} {key}' for key in order if count[key])}")
    for path in sorted(_collected_pages - set(counts)):
        terminalreporter.write_line(f"{path}: no spec fences")
