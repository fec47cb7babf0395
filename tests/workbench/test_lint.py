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
