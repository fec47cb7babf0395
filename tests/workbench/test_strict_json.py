"""Every JSON the package and its scripts write is strict (no NaN, no Infinity): a training run without held-out
pairs records null, and every writer goes through `core.files.json_text` or passes ``allow_nan=False``."""

import ast
import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import ROOT

from seq2seq_attention.core.files import json_text, write_json
from seq2seq_attention.translation.corpus import load_pairs, split_pairs
from seq2seq_attention.translation.train import TrainConfig, train

WRITERS = [*sorted((ROOT / "src" / "seq2seq_attention").rglob("*.py")), *sorted((ROOT / "scripts").glob("*.py"))]
WRITERS += [ROOT / "hooks" / "fence_runs.py"]


def strict(value: object) -> object:
    """Parse as a strict parser does: NaN and Infinity are errors."""
    return json.loads(value, parse_constant=lambda name: pytest.fail(f"{name} in JSON"))


def loose_dumps(path: Path) -> list[int]:
    """Lines of json.dump/json.dumps calls in `path` that do not pass allow_nan=False."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr not in ("dump", "dumps") or getattr(node.func.value, "id", None) != "json":
            continue
        if not any(k.arg == "allow_nan" and getattr(k.value, "value", True) is False for k in node.keywords):
            lines.append(node.lineno)
    return lines


@pytest.mark.parametrize("path", WRITERS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_json_writer_is_strict(path: Path):
    name = path.relative_to(ROOT).as_posix()
    loose = loose_dumps(path)
    assert not loose, (
        f"{name}: json.dumps without allow_nan=False at line(s) {loose}; use core.files.json_text / write_json"
    )


def test_the_strict_helpers_refuse_nan_and_infinity(tmp_path: Path):
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError):
            json_text({"x": [1, bad]})
        with pytest.raises(ValueError):
            write_json(tmp_path / "x.json", {"x": bad})
    assert not (tmp_path / "x.json").exists() and list(tmp_path.iterdir()) == []


@given(st.recursive(st.none() | st.booleans() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                    max_leaves=10))  # fmt: skip
def test_what_the_helper_writes_parses_strictly_and_round_trips(value):
    assert strict(json_text(value)) == value


def test_training_without_held_out_pairs_records_null(tmp_path: Path):
    """Pairs that all fall on the training side: no held-out loss, null in the history and in the checkpoint."""
    train_side, _ = split_pairs(load_pairs(), "by_english")
    config = TrainConfig(hidden_size=8, epochs=1, batch_size=16, seed=0)
    lines: list[str] = []
    result = train(
        config, pairs=train_side[:40], checkpoint=tmp_path / "run", progress=False, log=lines.append, measure_bleu=False
    )
    assert [h["test_loss"] for h in result.history] == [None]
    assert "held-out loss:        -" in lines[-1]
    document = strict((tmp_path / "run" / "checkpoint.json").read_text(encoding="utf-8"))
    assert document["training"]["history"][0]["test_loss"] is None


def test_the_report_leaves_out_held_out_losses_it_does_not_have():
    import importlib.util

    spec = importlib.util.spec_from_file_location("seq2seq_report", ROOT / "scripts" / "seq2seq_report.py")
    report = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(report)
    none = [{"epoch": 1, "loss": 2.0, "test_loss": None}, {"epoch": 2, "loss": 1.5, "test_loss": None}]
    assert report.held_out_losses(none) == {}
    some = [{"epoch": 1, "loss": 2.0, "test_loss": 1.2}, {"epoch": 2, "loss": 1.5, "test_loss": 1.4}]
    assert report.held_out_losses(some) == {"final_test_loss": 1.4, "best_test_loss": 1.2, "best_test_epoch": 1}
    assert report.loss_cell({}, "best_test_loss") == "-" and report.loss_cell(some[0], "loss") == "2.000"
    strict(json_text(report.held_out_losses(none)))


SCHEMAS = sorted((ROOT / "schemas").glob("*.schema.json"))


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_every_schema_is_valid_and_read_by_the_build(path: Path):
    """Each file in schemas/ is a valid JSON Schema (2020-12) whose $id is its name, and a reader names it."""
    import json_files

    name = path.name.removesuffix(".schema.json")
    json_files.validator(name)  # checks the schema against its metaschema
    assert json.loads(path.read_text(encoding="utf-8"))["$id"].endswith(f"/schemas/{path.name}")
    readers = "".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "hooks").glob("*.py")))
    quoted = '"quality-{split}"' if name in ("quality-dev", "quality-test") else f'"{name}"'  # by the run's folder
    assert name == "common" or quoted in readers, f"no reader uses {name}"
