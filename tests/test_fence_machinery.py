"""The spec-fence machinery of the root conftest.py.

A fence runs once (even when it raises `TypeError`), in an empty working directory, and is cloned
per device only when it picks one.
"""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

PAGE = """# page

```python
from pathlib import Path
import os

with open(os.environ["FENCE_LOG"], "a") as log:
    log.write("ran\\n")
assert os.listdir(".") == [], "a fence runs in an empty working directory"
raise TypeError("the fence itself raised this")
```

```python
from seq2seq_attention import pick_device

device = pick_device()
assert device.type in ("cpu", "cuda")
```
"""


@pytest.fixture
def run_page(pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    pytester.makeconftest((ROOT / "conftest.py").read_text(encoding="utf-8"))
    pytester.makefile(".md", page=PAGE)
    log = tmp_path / "fence.log"
    monkeypatch.setenv("FENCE_LOG", str(log))

    def run() -> tuple[pytest.RunResult, list[str]]:
        result = pytester.runpytest_subprocess(
            "--markdown-docs", "--markdown-docs-syntax=superfences", "-p", "no:cacheprovider", "-v"
        )
        return result, log.read_text().splitlines() if log.exists() else []

    return run


def test_a_failing_fence_runs_exactly_once_and_only_device_fences_are_cloned(run_page):
    result, log = run_page()
    assert log == ["ran"], "the plugin's TypeError retry must not run the fence a second time"
    result.assert_outcomes(failed=1, passed=1, skipped=0 if "[cuda] PASSED" in result.stdout.str() else 1)
    output = result.stdout.str()
    assert "TypeError: the fence itself raised this" in output
    assert "[no-device] FAILED" in output  # no pick_device(): one run, not one per device
    assert "[cpu] PASSED" in output and "[cuda]" in output  # pick_device(): a copy per device
