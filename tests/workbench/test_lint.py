"""ruff (lint and format) is clean over the library, the tests, the benchmarks, the scripts and the site hooks."""

import shutil
import subprocess
import sys

import pytest
from support import ROOT

TARGETS = [p for p in ("src", "tests", "benchmarks", "scripts", "hooks", "conftest.py") if (ROOT / p).exists()]


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["check", "format"])
def test_ruff(command: list[str]):
    ruff = shutil.which("ruff") or [sys.executable, "-m", "ruff"]
    argv = [ruff, *command, *TARGETS] if isinstance(ruff, str) else [*ruff, *command, *TARGETS]
    result = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


MACHINERY = ("hooks/*.py", "conftest.py", "tests/conftest.py", "tests/*.py")
"""What builds the site's features and runs the tests beside the tests themselves (issue 50): the hooks, both
conftests, and the tests' support modules and runners (tests/*.py: support, site_support, shape_trace, ...)."""
MACHINERY_TARGET = 3500
"""Issue 50's limit. Not reached yet: `test_the_machinery_is_within_the_target` is a strict xfail until it is."""
MACHINERY_CEILING = 4300
"""Today's size (4,260 lines on 2026-12-02) with a little room: the machinery may shrink, not grow."""


def machinery_lines() -> dict[str, int]:
    """Lines per machinery file, as ``wc -l hooks/*.py conftest.py tests/*.py`` counts them."""
    files = sorted({path for pattern in MACHINERY for path in ROOT.glob(pattern)})
    return {str(path.relative_to(ROOT)): path.read_bytes().count(b"\n") for path in files}


def check_machinery(limit: int) -> None:
    lines = machinery_lines()
    total = sum(lines.values())
    largest = ", ".join(f"{name} {count}" for name, count in sorted(lines.items(), key=lambda item: -item[1])[:5])
    assert total <= limit, f"the machinery is {total} lines (at most {limit}); largest: {largest}"


def test_the_machinery_does_not_grow():
    """The machinery is at most `MACHINERY_CEILING` lines (``wc -l hooks/*.py conftest.py tests/*.py``)."""
    check_machinery(MACHINERY_CEILING)


@pytest.mark.xfail(strict=True, reason="issue 50: 4,260 lines on 2026-12-02; remove this mark once under 3,500")
def test_the_machinery_is_within_the_target():
    """Issue 50's limit: at most `MACHINERY_TARGET` lines. When it passes, the strict xfail fails: drop the mark."""
    check_machinery(MACHINERY_TARGET)
