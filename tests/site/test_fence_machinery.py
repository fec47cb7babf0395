"""The spec-fence machinery of the root conftest.py.

A fence runs once (even when it raises `TypeError`), in an empty working directory, and is cloned
per device only when it picks one. With `--record-fences` each fence's run goes into the record
(`hooks/fence_runs.py`); without it the record is never written.

Each run is a pytest session of its own on a copy of conftest.py, in this process (pytester's
`runpytest_inprocess`: a new config, plugin manager and conftest module, and the imported modules
restored after it), which spares a fresh interpreter importing torch for every run.
"""

from pathlib import Path

import fence_runs
import pytest
import torch
from support import ROOT

CUDA = torch.cuda.is_available()

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
    pytester.makepyfile(fence_runs=(ROOT / "hooks" / "fence_runs.py").read_text(encoding="utf-8"))
    pytester.makefile(".md", page=PAGE)
    log = tmp_path / "fence.log"
    monkeypatch.setenv("FENCE_LOG", str(log))

    def run() -> tuple[pytest.RunResult, list[str]]:
        result = pytester.runpytest_inprocess(
            "--markdown-docs", "--markdown-docs-syntax=superfences", "-p", "no:cacheprovider", "-v"
        )
        return result, log.read_text().splitlines() if log.exists() else []

    return run


def test_a_failing_fence_runs_exactly_once_and_only_device_fences_are_cloned(run_page):
    result, log = run_page()
    assert log == ["ran"], "the plugin's TypeError retry must not run the fence a second time"
    result.assert_outcomes(failed=1, passed=1 + CUDA, skipped=0 if CUDA else 1)  # [cuda] passes where CUDA is
    output = result.stdout.str()
    assert "TypeError: the fence itself raised this" in output
    assert "[no-device] FAILED" in output  # no pick_device(): one run, not one per device
    assert "[cpu] PASSED" in output and "[cuda]" in output  # pick_device(): a copy per device


RECORDED_PAGE = """# recorded

```python
print("first")
x = 1
```

```{.python continuation}
print("second")
assert x == 1
```

```python
from seq2seq_attention import pick_device

print(pick_device().type)
```

```python
assert False, "this fence fails"
```
"""


def test_record_fences_writes_each_fence_s_own_run_and_keeps_a_device_that_did_not_run(
    pytester: pytest.Pytester,
):
    pytester.makeconftest((ROOT / "conftest.py").read_text(encoding="utf-8"))
    pytester.makepyfile(fence_runs=(ROOT / "hooks" / "fence_runs.py").read_text(encoding="utf-8"))
    docs = pytester.mkdir("docs")
    (docs / "page.md").write_text(RECORDED_PAGE, encoding="utf-8")
    first, second, on_device, failing = fence_runs.spec_fences(RECORDED_PAGE)
    record = docs / fence_runs.RECORD_NAME
    args = ("--markdown-docs", "--markdown-docs-syntax=superfences", "-p", "no:cacheprovider")

    pytester.runpytest_inprocess(*args).assert_outcomes(passed=3 + CUDA, failed=1, skipped=0 if CUDA else 1)
    assert not record.exists(), "a run without --record-fences never writes the record"

    earlier_gpu = {"outcome": "passed", "output": "cuda", "seconds": 0.5, "torch": "2.0", "device": "GPU", "date": "x"}
    fence_runs.write(record, fence_runs.updated(docs, {}, {on_device.key: {"cuda": earlier_gpu}}))
    result = pytester.runpytest_inprocess(*args, "--record-fences")
    result.assert_outcomes(passed=3 + CUDA, failed=1, skipped=0 if CUDA else 1)
    assert f"recorded {5 if CUDA else 4} fence runs into docs/fence-runs.json" in result.stdout.str()
    assert f"the record is still stale on CPU for:\npage.md:{failing.line}" in result.stdout.str()
    runs = fence_runs.load(record)
    assert runs[first.key]["no-device"]["output"] == "first"
    assert runs[second.key]["no-device"]["output"] == "second", "a continuation keeps only its own output"
    assert runs[on_device.key]["cpu"]["output"] == "cpu"
    assert (runs[on_device.key]["cuda"] == earlier_gpu) != CUDA, "a skipped cuda keeps its earlier run"
    assert runs[failing.key]["no-device"]["outcome"] == "failed"
    assert runs[failing.key]["no-device"]["error"] == "AssertionError: this fence fails"
    for run in (runs[first.key]["no-device"], runs[on_device.key]["cpu"]):
        assert run["outcome"] == "passed" and run["seconds"] >= 0 and run["torch"] and run["device"] and run["date"]
    assert fence_runs.stale(docs, runs) == [f"page.md:{failing.line}: its last no-device run failed"]

    written = record.read_bytes()
    pytester.runpytest_inprocess(*args)
    assert record.read_bytes() == written, "a run without --record-fences never writes the record"


def test_record_fences_refuses_xdist_workers_and_writes_nothing(pytester: pytest.Pytester):
    """Each pytest-xdist worker runs a share of the fences: its record would drop the others' runs."""
    pytester.makeconftest((ROOT / "conftest.py").read_text(encoding="utf-8"))
    pytester.makepyfile(fence_runs=(ROOT / "hooks" / "fence_runs.py").read_text(encoding="utf-8"))
    docs = pytester.mkdir("docs")
    (docs / "page.md").write_text(RECORDED_PAGE, encoding="utf-8")
    args = ("--markdown-docs", "--markdown-docs-syntax=superfences", "-p", "no:cacheprovider", "--record-fences")
    result = pytester.runpytest_inprocess(*args, "-n", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--record-fences runs in one process: leave out -n" in result.stderr.str()
    assert not (docs / fence_runs.RECORD_NAME).exists()
