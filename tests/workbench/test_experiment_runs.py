"""scripts/ablation.py's bookkeeping of runs: claims that expire with their process, results checked when read,
one line (never a traceback, never a silent skip) for a broken result or a bad option."""

import importlib.util
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import ROOT

_spec = importlib.util.spec_from_file_location("ablation_runs", ROOT / "scripts" / "ablation.py")
ablation = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ablation)

GOOD = {"row": "baseline", "seed": 0, "cpu_seconds": 12.5, "epochs": 3, "dev": {"bleu": 31.2, "split": "x"}}


def claim_of(pid: int, start: str | None, host: str | None = None) -> str:
    return json.dumps({"pid": pid, "start": start, "host": host or socket.gethostname()})


# claims --------------------------------------------------------------------------------------------


def test_a_free_run_is_claimed_with_this_process_identity_and_released(tmp_path: Path):
    claim = tmp_path / "scratch" / "baseline-seed0.claim"
    assert ablation.take_claim(claim)
    held = json.loads(claim.read_text())
    assert held == {"pid": os.getpid(), "start": ablation.process_start(os.getpid()), "host": socket.gethostname()}
    assert held["start"] is not None
    assert not ablation.take_claim(claim)  # held by a live process (this one)
    ablation.release_claim(claim)
    assert not claim.exists() and ablation.take_claim(claim)


NOT_A_PID = json.dumps({"pid": "x", "start": "1", "host": socket.gethostname()})


@pytest.mark.parametrize("text", ["", "1234", "{", '{"pid": 1}', "null", NOT_A_PID])
def test_an_empty_or_broken_claim_is_stale(tmp_path: Path, text: str):
    """A runner killed before it finished writing its claim left it empty or half written: taken over."""
    claim = tmp_path / "run.claim"
    claim.write_text(text)
    assert ablation.take_claim(claim)
    assert json.loads(claim.read_text())["pid"] == os.getpid()


def test_a_claim_whose_process_is_gone_is_taken_over(tmp_path: Path):
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    start = ablation.process_start(child.pid)
    child.wait()
    claim = tmp_path / "run.claim"
    claim.write_text(claim_of(child.pid, start or "1"))
    assert ablation.process_start(child.pid) is None
    assert ablation.take_claim(claim)


def test_a_claim_whose_pid_now_belongs_to_another_process_is_taken_over(tmp_path: Path):
    """The pid number is alive, but its start time is not the claim's: another process reused the number."""
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        real = ablation.process_start(live.pid)
        claim = tmp_path / "run.claim"
        claim.write_text(claim_of(live.pid, real))
        assert not ablation.take_claim(claim)  # the very process: respected
        claim.write_text(claim_of(live.pid, str(int(real) - 1)))
        assert ablation.take_claim(claim)  # same number, another process
    finally:
        live.kill()
        live.wait()


def test_a_claim_made_on_another_host_is_respected(tmp_path: Path):
    claim = tmp_path / "run.claim"
    claim.write_text(claim_of(os.getpid() + 10**6, "1", host=socket.gethostname() + "-elsewhere"))
    assert not ablation.take_claim(claim)


def test_a_run_whose_claim_is_stale_is_run_not_skipped(tmp_path: Path, monkeypatch, capsys):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "baseline-seed0.claim").write_text("")  # a runner killed before writing its pid
    trained = []
    monkeypatch.setattr(ablation, "train_row", lambda row, seed, args, say: trained.append((row, seed)))
    args = ablation.parse_args(
        ["run", "--rows", "baseline", "--seeds", "0", "--out", str(tmp_path / "out"), "--checkpoints", str(scratch)]
    )
    assert ablation.run(args) == 0
    assert trained == [("baseline", 0)] and not (scratch / "baseline-seed0.claim").exists()


# results -------------------------------------------------------------------------------------------


def write(directory: Path, document: object, name: str = "baseline-seed0.json") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(0, len(json.dumps(GOOD)) - 1))
def test_a_truncated_result_is_not_done(tmp_path: Path, cut: int):
    path = write(tmp_path / f"cut{cut}", json.dumps(GOOD)[:cut])
    with pytest.raises(ablation.ResultError, match=rf"^{path}: not a complete JSON result"):
        ablation.read_result(path)
    assert not ablation.finished(path, None)


BROKEN = st.one_of(st.none(), st.booleans(), st.text(max_size=3), st.lists(st.integers(), max_size=2), st.just({}))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(["row", "seed", "cpu_seconds", "epochs", "dev", "dev.bleu"]), value=BROKEN)
def test_a_result_with_a_wrong_field_names_the_file_and_the_field(tmp_path: Path, field: str, value):
    document = json.loads(json.dumps(GOOD))
    if field == "dev.bleu":
        document["dev"]["bleu"] = value
    else:
        document[field] = value
    path = write(tmp_path / "bad", document)
    with pytest.raises(ablation.ResultError) as error:
        ablation.read_result(path)
    message = str(error.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    assert field.split(".")[-1] in message or "file name" in message


def test_a_valid_result_reads_back(tmp_path: Path):
    assert ablation.read_result(write(tmp_path, GOOD)) == GOOD


def test_a_broken_result_is_run_again(tmp_path: Path, monkeypatch, capsys):
    out = tmp_path / "out"
    write(out, {**GOOD, "dev": None})
    write(out, json.dumps({**GOOD, "seed": 1})[:20], name="baseline-seed1.json")
    write(out, {**GOOD, "seed": 2}, name="baseline-seed2.json")
    trained = []
    monkeypatch.setattr(ablation, "train_row", lambda row, seed, args, say: trained.append((row, seed)))
    args = ablation.parse_args(
        ["run", "--rows", "baseline", "--seeds", "0", "1", "2", "--out", str(out)]
        + ["--checkpoints", str(tmp_path / "scratch")]
    )
    assert ablation.run(args) == 0
    printed = capsys.readouterr().out
    assert trained == [("baseline", 0), ("baseline", 1)]
    assert f"{out / 'baseline-seed0.json'}: " in printed and f"{out / 'baseline-seed1.json'}: " in printed
    assert "1 of 3 runs already have results" in printed


@pytest.mark.parametrize(
    "document", [{**GOOD, "dev": None}, json.dumps(GOOD)[:-5], "", {**GOOD, "dev": {"bleu": None}}, [1, 2]]
)
def test_table_with_a_broken_result_is_one_line_naming_the_file(tmp_path: Path, capsys, document):
    path = write(tmp_path / "out", document)
    assert ablation.main(["table", "--out", str(tmp_path / "out")]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and error.startswith(f"ablation.py: error: {path}: ")
    assert not (tmp_path / "out" / "tables.ko.md").exists()


def test_results_are_written_strictly_and_atomically(tmp_path: Path, monkeypatch):
    """train_row writes through core.files.write_json: a NaN is refused, and nothing half-written is left."""
    path = tmp_path / "out" / "r.json"
    with pytest.raises(ValueError):
        ablation.write_json(path, {"dev": {"bleu": float("nan")}})
    assert not path.parent.exists()  # refused before anything was touched
    ablation.write_json(path, GOOD)
    assert json.loads(path.read_text()) == GOOD


# options -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["run", "--seeds", "-1"], "--seeds: seed must lie in [0, 4294967295], got -1"),
        (["final", "--seeds", "0", "4294967296"], "--seeds: seed must lie in"),
        (["run", "--rows", "beam-5", "--seeds", "-3"], "--seeds: seed must lie in"),
        (["run", "--budget", "1e300"], "--budget: time_budget must lie in"),
        (["run", "--budget", "-2"], "--budget must be a positive number of seconds, got -2.0"),
        (["final", "--budget", "nan"], "--budget must be a positive number of seconds, got nan"),
    ],
)
def test_a_bad_option_is_one_usage_line(argv, expected, capsys):
    with pytest.raises(SystemExit) as exit:
        ablation.main(argv)
    error = capsys.readouterr().err
    assert exit.value.code == 2 and "Traceback" not in error
    assert error.splitlines()[-1].startswith("ablation.py: error: ") and expected in error.splitlines()[-1]


# two runners ---------------------------------------------------------------------------------------


def _fake_training(log: Path):
    """A train_row that logs the run it trains and writes a valid result for it, as the real one does."""

    def train_row(row, seed, args, say, **_):
        with open(log, "a", encoding="utf-8") as out:  # O_APPEND: one whole line per write, from either process
            out.write(f"{row} {seed} {os.getpid()}\n")
        ablation.write_json(args.out / f"{row}-seed{seed}.json", dict(GOOD, row=row, seed=seed))

    return train_row


def test_a_run_another_runner_finished_after_the_list_was_made_is_not_trained_again(tmp_path: Path, monkeypatch):
    """The race: this runner lists the run as to do, the other finishes it and lets go of its claim, this one
    takes the free claim; it must see the result under the claim and skip the run."""
    out, scratch, log = tmp_path / "out", tmp_path / "scratch", tmp_path / "trained.log"
    take = ablation.take_claim

    def other_runner_finishes_first(path: Path) -> bool:
        row, seed = path.stem.rsplit("-seed", 1)
        ablation.write_json(out / f"{row}-seed{seed}.json", dict(GOOD, row=row, seed=int(seed)))
        return take(path)

    monkeypatch.setattr(ablation, "take_claim", other_runner_finishes_first)
    monkeypatch.setattr(ablation, "train_row", _fake_training(log))
    args = ablation.parse_args(
        ["run", "--rows", "baseline", "--seeds", "0", "1", "--out", str(out), "--checkpoints", str(scratch)]
    )
    assert ablation.run(args) == 0
    assert not log.exists() and not list(scratch.glob("*.claim"))


def _runner(out: str, scratch: str, log: str, seeds: list[str]) -> None:
    ablation.train_row = _fake_training(Path(log))
    args = ablation.parse_args(["run", "--rows", "baseline", "--seeds", *seeds, "--out", out, "--checkpoints", scratch])
    raise SystemExit(ablation.run(args))


def test_two_concurrent_runners_train_each_run_once(tmp_path: Path):
    import multiprocessing

    seeds = [str(seed) for seed in range(40)]
    out, scratch, log = tmp_path / "out", tmp_path / "scratch", tmp_path / "trained.log"
    context = multiprocessing.get_context("fork")
    runners = [
        context.Process(target=_runner, args=(str(out), str(scratch), str(log), order))
        for order in (seeds, seeds[::-1])  # one from each end, so that they meet in the middle
    ]
    for runner in runners:
        runner.start()
    for runner in runners:
        runner.join(60)
        assert runner.exitcode == 0
    trained = [line.split()[:2] for line in log.read_text().splitlines()]
    assert sorted(int(seed) for _, seed in trained) == list(range(40))  # every run once, none twice
    assert len(list(out.glob("baseline-seed*.json"))) == 40
