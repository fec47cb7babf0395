"""A malformed fence record (`docs/fence-runs.json`) stops the site build with one line naming the file, the entry
(page, fence, run), what was expected and how to re-record; `hooks/fence_runs.load` reads it through the one
validating reader (`json_files.read`, schemas/fence-runs.schema.json)."""

import copy
import json
from pathlib import Path
from types import SimpleNamespace

import fence_record
import fence_runs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mkdocs.exceptions import PluginError

PAGE = """# A page

```python
print(1)
```

Some prose.

```python
print(2)
```
"""
RUN = {"outcome": "passed", "output": "1", "seconds": 0.1, "torch": "2.13.0", "device": "CPU", "date": "2026-11-25"}


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    (tmp_path / "topic").mkdir()
    (tmp_path / "topic" / "page.md").write_text(PAGE, encoding="utf-8")
    fences = fence_runs.spec_fences(PAGE)
    runs = {fence.key: {fence.cpu_tag: dict(RUN, output=str(n))} for n, fence in enumerate(fences, start=1)}
    fence_runs.write(tmp_path / fence_runs.RECORD_NAME, fence_runs.updated(tmp_path, {}, runs))
    (tmp_path / "valid.json").write_text((tmp_path / fence_runs.RECORD_NAME).read_text(encoding="utf-8"))
    return tmp_path


def record_of(docs: Path) -> dict:
    """The valid record the fixture wrote (a copy that the malformations never touch)."""
    return json.loads((docs / "valid.json").read_text(encoding="utf-8"))


def error_of(docs: Path, text: str) -> str:
    path = docs / fence_runs.RECORD_NAME
    path.write_text(text, encoding="utf-8")
    with pytest.raises(fence_runs.RecordError) as error:
        fence_runs.load(path)
    message = str(error.value)
    assert "\n" not in message and message.startswith(str(path))
    assert fence_runs.RECORD_COMMAND in message
    return message


def test_a_valid_record_reads(docs: Path):
    runs = fence_runs.load(docs / fence_runs.RECORD_NAME)
    assert sorted(run["no-device"]["output"] for run in runs.values()) == ["1", "2"]


def second_run(record: dict) -> dict:
    return record["pages"]["topic/page.md"][1]["runs"]["no-device"]


FENCE = 'pages["topic/page.md"][1]'
RUN_AT = FENCE + '.runs["no-device"]'
LISTED = {
    "pages as a list": (lambda r: r.update(pages=[]), "pages: expected an object, found a list of 0"),
    "an entry without runs": (
        lambda r: r["pages"]["topic/page.md"][1].pop("runs"),
        FENCE + ".runs: expected an object",
    ),
    "a run without outcome": (lambda r: second_run(r).pop("outcome"), RUN_AT + '.outcome: expected one of "passed"'),
    "an output that is a number": (
        lambda r: second_run(r).update(output=3),
        RUN_AT + ".output: expected a string, found int 3",
    ),
    "date null": (lambda r: second_run(r).update(date=None), RUN_AT + ".date: expected a non-empty string, found null"),
    "a notebook's output as a list": (
        lambda r: second_run(r).update(output=["1\n"]),
        RUN_AT + ".output: expected a string",
    ),
    "an unknown outcome": (lambda r: second_run(r).update(outcome="ok"), RUN_AT + '.outcome: expected one of "passed"'),
    "a page that is not a list": (
        lambda r: r["pages"].update({"topic/page.md": {}}),
        FENCE[:-3] + ": expected a list of fences",
    ),
    "an unknown run tag": (
        lambda r: r["pages"]["topic/page.md"][1]["runs"].update(gpu={}),
        FENCE + '.runs: expected one of "cpu", "cuda", "no-device", found str \'gpu\'',
    ),
}


@pytest.mark.parametrize("case", LISTED, ids=list(LISTED))
def test_each_listed_malformation_is_one_line(docs: Path, case: str):
    change, expected = LISTED[case]
    record = record_of(docs)
    change(record)
    message = error_of(docs, json.dumps(record))
    assert message.startswith(f"{docs / fence_runs.RECORD_NAME}: {expected}"), message


def test_a_truncated_record_is_one_line(docs: Path):
    text = (docs / "valid.json").read_text(encoding="utf-8")
    for cut in (1, len(text) // 3, len(text) // 2, len(text) - 3):
        assert "(the file): expected a complete JSON document" in error_of(docs, text[:cut])


def test_a_folder_for_the_record_is_one_line(docs: Path):
    path = docs / fence_runs.RECORD_NAME
    path.unlink()
    path.mkdir()
    with pytest.raises(fence_runs.RecordError, match=r": \(the file\): expected a file, found a folder; re-create it"):
        fence_runs.load(path)


def test_a_merge_conflict_is_one_line(docs: Path):
    lines = (docs / "valid.json").read_text(encoding="utf-8").splitlines()
    conflicted = [*lines[:4], "<<<<<<< HEAD", lines[4], "=======", lines[4].replace('"1"', '"one"'), ">>>>>>> other"]
    message = error_of(docs, "\n".join(conflicted + lines[5:]))
    assert "found a merge-conflict marker at line 5" in message


BAD_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=4), st.lists(st.none())
)


def paths(value: object, prefix: tuple = ()) -> list[tuple]:
    """Every place in a JSON value: a tuple of keys and indices."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += paths(item, (*prefix, index))
    return found


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_malformation_is_one_line_or_still_a_record(docs: Path, data):
    """Replace or delete any value of a valid record: load either reads a record of the right shape or says
    what is wrong in one line (never a KeyError, TypeError or AttributeError)."""
    record = record_of(docs)
    place = data.draw(st.sampled_from([p for p in paths(record) if p and p[0] == "pages"]))
    broken = copy.deepcopy(record)
    parent = broken
    for step in place[:-1]:
        parent = parent[step]
    if data.draw(st.booleans()) and isinstance(parent, dict):
        del parent[place[-1]]
    else:
        parent[place[-1]] = data.draw(BAD_VALUES)
    path = docs / fence_runs.RECORD_NAME
    path.write_text(json.dumps(broken), encoding="utf-8")
    try:
        runs = fence_runs.load(path)
    except fence_runs.RecordError as error:
        message = str(error)
        assert "\n" not in message and message.startswith(str(path)) and fence_runs.RECORD_COMMAND in message
        return
    for by_tag in runs.values():  # what loads has the shape every reader relies on
        for tag, run in by_tag.items():
            assert tag in (*fence_runs.DEVICES, fence_runs.NO_DEVICE)
            assert run["outcome"] in ("passed", "failed", "skipped") and isinstance(run["output"], str)
            assert all(isinstance(run[k], str) for k in ("torch", "device", "date"))


def test_the_site_build_stops_with_the_line(docs: Path):
    record = record_of(docs)
    second_run(record).pop("outcome")
    (docs / fence_runs.RECORD_NAME).write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(PluginError) as error:
        fence_record.on_config(SimpleNamespace(docs_dir=str(docs)))
    assert str(error.value).startswith(f"{docs / fence_runs.RECORD_NAME}: {RUN_AT}.outcome: expected one of")
