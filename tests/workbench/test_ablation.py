"""The recipe ablation (scripts/ablation.py): its committed results, its table, its statistics and its resume."""

import json
import math
import statistics
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import load_script

from seq2seq_attention.stats import t_975
from seq2seq_attention.translation.train import TrainConfig

ablation = load_script("ablation")


@pytest.mark.slow
def test_committed_table_is_what_the_script_makes_of_the_committed_results():
    committed = (ablation.OUT / "tables.ko.md").read_text(encoding="utf-8")
    assert committed == ablation.tables_text(ablation.OUT)


def test_committed_results_are_small_dev_runs_that_change_one_thing():
    paths = sorted(ablation.OUT.glob("*.json"))
    assert paths, "no results committed"
    names = {p.name for p in paths} | {"tables.ko.md", "final", "external"}
    assert {p.name for p in ablation.OUT.iterdir()} <= names  # no checkpoints
    for path in paths:
        assert path.stat().st_size < 20_000, path
        document = json.loads(path.read_text(encoding="utf-8"))
        assert path.name == f"{document['row']}-seed{document['seed']}.json"
        assert document["dev"]["split"] == "by_english:dev" and document["dev"]["pairs"] == 513
        config = document["config"]
        assert (config["eval_split"], config["seed"]) == ("dev", document["seed"])
        if document["kind"] == "train":
            assert document["changes"] == ablation.ROWS[document["row"]][1]
            budget = ablation.ROWS[document["row"]][1].get("time_budget", 300.0)  # a row may set its own
            assert (config["budget_clock"], config["time_budget"]) == ("cpu", budget)
            expected = ablation.run_config(document["row"], document["seed"], 300.0)
            assert TrainConfig(**config) == expected  # fields added after the run take their defaults
        else:
            assert document["changes"] == ablation.DECODES[document["row"]][1]
            source = ablation.DECODE_SOURCE.get(document["row"], "baseline")  # the row whose checkpoints it re-scores
            assert TrainConfig(**config) == ablation.run_config(source, document["seed"], 300.0)


@given(st.lists(st.floats(0, 100), min_size=2, max_size=10))
def test_interval_is_the_t_interval_of_the_mean(values: list[float]):
    mean, low, high = ablation.interval(values)
    assert mean == pytest.approx(statistics.fmean(values))
    half = t_975(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    assert low == pytest.approx(mean - half, abs=1e-9) and high == pytest.approx(mean + half, abs=1e-9)
    assert low <= mean <= high


def test_interval_of_one_seed_has_no_bounds():
    mean, low, high = ablation.interval([31.5])
    assert mean == 31.5 and math.isnan(low) and math.isnan(high)


def row(bleus: list[float], seeds: list[int] | None = None) -> dict:
    seeds = list(range(len(bleus))) if seeds is None else seeds
    documents = [
        {"dev": {"bleu": b}, "seed": s, "cpu_seconds": 1, "epochs": 1} for s, b in zip(seeds, bleus, strict=True)
    ]
    return ablation.summarize({"r": documents})["r"]


def test_row_verdict_is_the_one_rule_on_seed_paired_differences():
    baseline = row([30.0, 31.0, 32.0])
    assert ablation.row_verdict(row([31.5, 30.0, 33.5]), baseline).korean == "동률"  # +1.5, -1, +1.5: holds 0
    assert ablation.row_verdict(row([31.5, 32.5, 33.5]), baseline).korean == "나아짐"  # +1.5 every seed
    assert ablation.row_verdict(row([20.0, 20.5, 21.0]), baseline).korean == "나빠짐"
    assert ablation.row_verdict(row([40.0]), baseline).korean == "동률"  # one seed, no paired test: no evidence


def test_paired_differences_match_seeds():
    baseline = row([30.0, 31.0, 32.0])  # seeds 0, 1, 2
    other = row([33.0, 29.0], seeds=[2, 0])
    assert ablation.paired_differences(other, baseline) == [1.0, -1.0]  # seed 2 then seed 0, the row's order


def test_run_resumes_where_the_results_stop(tmp_path: Path, monkeypatch, capsys):
    done = tmp_path / "out" / "baseline-seed0.json"
    done.parent.mkdir()
    result = {"row": "baseline", "seed": 0, "cpu_seconds": 1.0, "epochs": 1, "dev": {"bleu": 30.0}}
    done.write_text(json.dumps(result))
    trained = []
    monkeypatch.setattr(ablation, "train_row", lambda row, seed, args, say: trained.append((row, seed)))
    args = ablation.parse_args(
        ["run", "--rows", "baseline", "--seeds", "0", "1", "--out", str(tmp_path / "out")]
        + ["--checkpoints", str(tmp_path / "scratch")]
    )
    assert ablation.run(args) == 0
    assert trained == [("baseline", 1)]
    assert "1 of 2 runs already have results" in capsys.readouterr().out


def test_decoding_without_a_baseline_checkpoint_is_skipped(tmp_path: Path):
    lines: list[str] = []
    args = ablation.parse_args(["run", "--out", str(tmp_path / "out"), "--checkpoints", str(tmp_path / "none")])
    ablation.decode_row("beam-5", 0, args, lines.append)
    assert "skipped, no baseline checkpoint" in lines[0] and not (tmp_path / "out").exists()


@pytest.mark.parametrize("budget", ["0", "-5", "nan", "inf"])
def test_bad_budget_is_a_usage_error(budget: str):
    with pytest.raises(SystemExit) as error:
        ablation.parse_args(["run", "--budget", budget])
    assert error.value.code == 2


def test_final_results_are_five_seed_runs_read_once_on_the_test_split():
    """Every final run trained on the whole training split and kept its translations of the 465 test pairs."""
    paths = sorted((ablation.OUT / "final").glob("*.json"))
    assert paths, "no final results committed"
    assert {p.name for p in (ablation.OUT / "final").iterdir()} == {p.name for p in paths}  # no checkpoints
    for path in paths:
        assert path.stat().st_size < 60_000, path
        document = json.loads(path.read_text(encoding="utf-8"))
        assert path.name == f"{document['row']}-seed{document['seed']}.json" and document["row"] in ablation.FINAL
        assert "dev" not in document and document["test"]["split"] == "by_english"
        assert document["test"]["pairs"] == len(document["test"]["hypotheses"]) == 465
        config = document["config"]
        assert (config["eval_split"], config["seed"]) == ("test", document["seed"])
        assert TrainConfig(**config) == ablation.run_config(document["row"], document["seed"], 300.0, "test")
    rows = ablation.load_results(ablation.OUT / "final")
    assert all([d["seed"] for d in documents] == [0, 1, 2, 3, 4] for documents in rows.values())


def test_the_paired_bootstrap_of_a_final_row_reads_its_translations(tmp_path):
    """`seed_p_values` compares the kept translations: a row against itself is a tie (p = 1)."""
    documents = ablation.load_results(ablation.OUT / "final")["baseline"]
    assert ablation.seed_p_values(documents[:2], documents[:2]) == [1.0, 1.0]


def test_external_runs_pair_in_order_or_each_against_one():
    assert ablation.external_pairs([40.0, 41.0, 42.0, 43.0, 44.0], [39.0, 41.5, 40.0]) == [1.0, -0.5, 2.0]
    assert ablation.external_pairs([36.0, 37.0], [14.0]) == [22.0, 23.0]  # their one run: only our noise
    verdict = ablation.verdict(ablation.external_pairs([36.0, 37.0, 36.5], [14.0]))
    assert verdict.korean == "나아짐"


def test_committed_external_measurements_say_where_they_come_from():
    for name in ablation.EXTERNAL_COMPARED:
        document = ablation.read_external(ablation.OUT / "external" / f"{name}.json")
        assert "issue" in document["source"] and "not rerun" in document["source"]
        assert document["settings"]["toolkit"] == "Joey NMT 2.3.0"
    transformer = ablation.read_external(ablation.OUT / "external" / "joey-transformer.json")
    mean, low, high = ablation.interval([run["greedy_bleu"] for run in transformer["runs"]])
    assert (round(mean, 2), round(low, 2), round(high, 2)) == (40.49, 38.23, 42.74)  # as the issue states them


@pytest.mark.parametrize(
    ("text", "problem"),
    [("{", "not a readable JSON"), ('{"runs": []}', "non-empty list"), ('{"runs": [{"greedy_bleu": null}]}', "finite"),
     ('{"runs": [{"greedy_bleu": 30}], "label": "x"}', "non-empty strings")],
)  # fmt: skip
def test_a_broken_external_file_is_one_line_naming_it(tmp_path: Path, text: str, problem: str):
    path = tmp_path / "joey.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ablation.ResultError, match=problem) as error:
        ablation.read_external(path)
    assert str(path) in str(error.value)
