"""Hypothesis in CI draws the same examples on every run (the `ci` profile that tests/conftest.py loads when
`CI` is set); elsewhere it draws new ones, and what it once found is kept as an `@example`."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import ROOT

DRAWS_ENV = "SEQ2SEQ_ATTENTION_TEST_DRAWS"


@settings(max_examples=10)
@given(st.integers(-(10**9), 10**9))
def test_draws(number: int) -> None:
    """Writes what it draws where `SEQ2SEQ_ATTENTION_TEST_DRAWS` says (the test below runs it in a subprocess)."""
    if DRAWS_ENV in os.environ:
        with open(os.environ[DRAWS_ENV], "a", encoding="utf-8") as handle:
            handle.write(json.dumps(number) + "\n")


def _draws(tmp_path: Path, name: str, ci: str | None) -> list[int]:
    out = tmp_path / f"{name}.jsonl"
    env = {key: value for key, value in os.environ.items() if key != "CI"}
    env.update({DRAWS_ENV: str(out), **({"CI": ci} if ci is not None else {})})
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "--rootdir", str(ROOT), "-c",
         str(ROOT / "pyproject.toml"), f"{Path(__file__)}::test_draws"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


@pytest.mark.slow
def test_two_ci_runs_draw_the_same_examples(tmp_path: Path) -> None:
    first, second = _draws(tmp_path, "ci-1", "true"), _draws(tmp_path, "ci-2", "true")
    assert first == second and len(set(first)) >= 5, (first, second)


def test_the_profile_follows_ci() -> None:
    """Derandomised without a database in CI; random (new draws every run) elsewhere."""
    in_ci = os.environ.get("CI", "").lower() not in ("", "0", "false")
    assert settings.default.derandomize is in_ci and (settings.default.database is None) is in_ci
    assert settings.default.deadline is None  # no wall-clock bound on an example
