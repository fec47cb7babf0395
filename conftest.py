"""Wires the pages' spec fences into pytest: one copy per device, with pytest's asserts.

pytest-markdown-docs (pinned to 0.9.2 in pyproject.toml: this file touches its internals)
turns every plain ```python fence in docs/ into a test item. Here we

* clone each item that picks a device (`pick_device()`) once per device (`[cpu]`, `[cuda]`):
  the plugin's items take no parametrized fixtures, so the clones are made in
  `pytest_collection_modifyitems`; a fence that never picks a device runs once, as `[no-device]`;
* run a fence exactly once (the plugin retries a runner call that raises `TypeError` without its
  `asyncio_runner` argument, which would run a fence that raised `TypeError` a second time), in an
  empty temporary working directory, as a reader's fresh interpreter would;
* steer a clone's device through `SEQ2SEQ_ATTENTION_DEVICE`, which the fence itself reads
  with `pick_device()`: a fence copied into a fresh Python runs there as it is;
* skip `[cuda]` with a reason where CUDA is absent; `--devices` chooses the devices;
* run fences with pytest's assertion rewriting, so a failed assert shows both sides;
* print how many fences ran per page and device at the end of the run.
"""

import ast
import contextlib
import io
import os
import tempfile
from collections import Counter

import pytest
import torch
from _pytest.assertion.rewrite import rewrite_asserts
from pytest_markdown_docs._runners import DefaultRunner, register_runner
from pytest_markdown_docs.plugin import MarkdownInlinePythonItem

from seq2seq_attention.core.device import DEVICE_ENV

DEVICES = ("cpu", "cuda")
NO_DEVICE = "no-device"
"""The tag of a fence that never picks a device: it runs once."""
RAN = "__fence_outcome__"
"""Key in a fence's namespace marking that it ran (with the exception it raised, if any)."""


def uses_device(source: str) -> bool:
    """A fence (with the fences it continues) picks a device when it calls `pick_device()`."""
    return "pick_device(" in source


_config: pytest.Config | None = None


@register_runner(default=True)
class AssertRewritingRunner(DefaultRunner):
    """The plugin's default runner, with pytest's assertion rewriting applied to the fence.

    The plugin turns pytest's output capturing off around a fence; what a fence prints is
    collected here instead and shown only when the fence fails (as a note on its error).
    """

    def runtest(self, test, args, *, asyncio_runner=None):
        if RAN in args:  # the plugin's retry after a TypeError: report the first run, do not run again
            raise args[RAN]
        args[RAN] = None
        path = str(test.source_path)
        tree = ast.parse(test.source, filename=path)
        rewrite_asserts(tree, test.source.encode(), path, _config)
        printed = io.StringIO()
        try:
            with tempfile.TemporaryDirectory(prefix="fence-") as empty, contextlib.chdir(empty):
                with contextlib.redirect_stdout(printed):
                    exec(compile(tree, path, "exec", dont_inherit=True), args)
        except Exception as error:
            if printed.getvalue():
                error.add_note(f"the fence printed:\n{printed.getvalue().rstrip()}")
            args[RAN] = error
            raise


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--devices",
        default=",".join(DEVICES),
        help="comma-separated devices to run each spec fence on (default: cpu,cuda; "
        "cuda copies are skipped when CUDA is absent)",
    )


def pytest_configure(config: pytest.Config) -> None:
    global _config
    _config = config
    config.addinivalue_line("markers", "device(name): the device a spec fence copy runs on")


def _devices(config: pytest.Config) -> list[str]:
    chosen = [d.strip() for d in config.getoption("--devices").split(",") if d.strip()]
    unknown = sorted(set(chosen) - set(DEVICES))
    if unknown or not chosen:
        raise pytest.UsageError(f"--devices takes a comma-separated subset of {', '.join(DEVICES)}, got {chosen}")
    return chosen


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    devices = _devices(config)
    cuda_ok = torch.cuda.is_available()
    result: list[pytest.Item] = []
    for item in items:
        if not isinstance(item, MarkdownInlinePythonItem):
            result.append(item)
            continue
        if not uses_device(item.test_definition.source):
            result.append(
                MarkdownInlinePythonItem.from_parent(
                    item.parent, name=f"{item.name}[{NO_DEVICE}]", test_definition=item.test_definition
                )
            )
            continue
        for device in devices:
            clone = MarkdownInlinePythonItem.from_parent(
                item.parent, name=f"{item.name}[{device}]", test_definition=item.test_definition
            )
            clone.add_marker(pytest.mark.device(device))
            if device == "cuda" and not cuda_ok:
                clone.add_marker(pytest.mark.skip(reason="CUDA is not available on this machine"))
            result.append(clone)
    items[:] = result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    marker = item.get_closest_marker("device")
    if marker is None:
        return (yield)
    before = os.environ.get(DEVICE_ENV)
    os.environ[DEVICE_ENV] = marker.args[0]
    try:
        return (yield)
    finally:
        if before is None:
            os.environ.pop(DEVICE_ENV, None)
        else:
            os.environ[DEVICE_ENV] = before


_collected_pages: set[str] = set()


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.nodeid.endswith(".md") and report.passed:
        _collected_pages.add(report.nodeid)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    counts: Counter[tuple[str, str, str]] = Counter()
    for outcome in ("passed", "failed", "skipped"):
        for report in terminalreporter.stats.get(outcome, []):
            if report.when != "call" and not (outcome == "skipped" and report.when == "setup"):
                continue
            path, _, name = report.nodeid.partition("::")
            if not path.endswith(".md"):
                continue
            device = name.rsplit("[", 1)[-1].rstrip("]")
            counts[(path, device, outcome)] += 1
    if not counts:
        return
    terminalreporter.section("spec fences per page")
    for path in sorted({key[0] for key in counts}):
        parts = [
            f"{counts[(path, device, outcome)]} {outcome} [{device}]"
            for device in (*DEVICES, NO_DEVICE)
            for outcome in ("passed", "failed", "skipped")
            if counts[(path, device, outcome)]
        ]
        terminalreporter.write_line(f"{path}: {', '.join(parts)}")
    for path in sorted(_collected_pages - {key[0] for key in counts}):
        terminalreporter.write_line(f"{path}: no spec fences")
