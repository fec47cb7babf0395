"""One change at a time from the Bahdanau baseline recipe, on the development split, over seeds.

Every run starts from the baseline recipe (`BASELINE`: the recipe the packaged checkpoint was
trained with before this ablation, the `bahdanau` run of `scripts/train_seq2seq.sh` until then),
changes one setting or a named combination (`ROWS`), trains on one thread for a budget of this
process's CPU seconds (`--budget`, or the row's own `time_budget`; `budget_clock="cpu"`: wall-clock
time is distorted on a shared machine) and is scored with greedy BLEU on the development split
(`eval_split="dev"`: the training split less its dev part; the test split is never read here).
Decoding rows (`DECODES`) re-score the baseline's checkpoints with beam search on the same dev pairs.

Each finished run writes one small JSON under --out (`<row>-seed<n>.json`: the config, seed,
seconds, epochs and dev scores), atomically; a run whose JSON reads back whole is skipped, so the
script resumes where the committed results stop, and a broken one (truncated, a null score) is
named and run again. A run in progress holds a claim (`<row>-seed<n>.claim` under --checkpoints:
pid, process start time, host) so that two processes never train it twice; a claim whose process
is gone, or whose pid now names another process, is taken over. Checkpoints go to --checkpoints
(scratch, never committed). The verdicts are `stats.verdict`'s (the one rule of every page).

`final` trains the rows of `FINAL`, chosen on the dev rows, on the whole training split with five
seeds and reads the test split once per run (OUT/final/<row>-seed<n>.json, with the translations,
so that the table can run the paired bootstrap per seed).

    OMP_NUM_THREADS=1 nice -n 15 python scripts/ablation.py run --seeds 0 1 2
    OMP_NUM_THREADS=1 nice -n 15 python scripts/ablation.py final --seeds 0 1 2 3 4
    python scripts/ablation.py table    # results/quality/tables.ko.md, included by docs/appendix/recipe-*.md
"""

import argparse
import contextlib
import fcntl
import json
import math
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

import torch

from seq2seq_attention.core.checkpoint import load_checkpoint
from seq2seq_attention.core.errors import InputError
from seq2seq_attention.core.files import write_json
from seq2seq_attention.stats import Verdict, seed_interval, verdict
from seq2seq_attention.translation.corpus import load_pairs, split_pairs
from seq2seq_attention.translation.evaluate import Evaluation, compare, evaluate
from seq2seq_attention.translation.train import TrainConfig, evaluation_record, train

ROOT = Path(__file__).resolve().parent.parent
BASELINE: dict = {
    "decoder": "bahdanau",
    "score": None,
    "hidden_size": 256,
    "dropout": 0.3,
    "batch_size": 64,
    "learning_rate": 0.002,
    "epochs": 70,
    "teacher_forcing_ratio": 1.0,
    "coin_per_step": False,
    "clip": 1.0,
    "seed": 0,
    "max_words": 6,
    "split": "by_english",
    "time_budget": 400.0,
    "label_smoothing": 0.1,
    "schedule": "cosine",
    "weight_decay": 0.0,
}
"""The baseline recipe, as the packaged checkpoint saved it before this ablation (commit c9302be); fields it
did not save take `TrainConfig`'s defaults. Frozen here so that the rows keep meaning one change from it."""
OUT = ROOT / "results" / "quality"

_BEST = {"bidirectional": True, "batch_size": 32, "dropout": 0.0}
"""The changes of round one's best row (combo-bi-b32-d0), which the rows of round two start from."""

ROWS: dict[str, tuple[str, dict]] = {
    "baseline": ("기준 레시피 (지금까지의 패키지 레시피)", {}),
    "smoothing-0": ("label smoothing 0.1 → 0", {"label_smoothing": 0.0}),
    "dropout-0.1": ("dropout 0.3 → 0.1", {"dropout": 0.1}),
    "schedule-constant": ("cosine 스케줄 → 고정 학습률", {"schedule": "constant"}),
    "batch-32": ("배치 64 → 32", {"batch_size": 32}),
    "batch-10": ("배치 64 → 10", {"batch_size": 10}),
    "dropout-0": ("dropout 0.3 → 0", {"dropout": 0.0}),
    "init-xavier": ("초기화 PyTorch 기본 → Xavier", {"init": "xavier"}),
    "bidirectional": ("양방향 인코더 (H/2씩 두 방향)", {"bidirectional": True}),
    "tied": ("출력층과 번역문 쪽 임베딩의 가중치 공유", {"tie_embeddings": True}),
    "luong": ("루옹 디코더 (scaled_dot)", {"decoder": "luong", "score": "scaled_dot"}),
    "luong-feeding": (
        "루옹 디코더 + input feeding",
        {"decoder": "luong", "score": "scaled_dot", "input_feeding": True},
    ),
    "combo-b32-d0": ("배치 32 + dropout 0 (같은 구조에서 평균이 높던 두 변화)", {"batch_size": 32, "dropout": 0.0}),
    "combo-bi-b32-d0": (
        "양방향 인코더 + 배치 32 + dropout 0",
        {"bidirectional": True, "batch_size": 32, "dropout": 0.0},
    ),
    "baseline-60s": ("기준 레시피, 60초 예산 (70 에폭 스케줄이 중간에 끊김)", {"time_budget": 60.0}),
    "baseline-60s-fit": ("기준 레시피, 60초 예산, 스케줄을 15 에폭에 맞춤", {"time_budget": 60.0, "epochs": 15}),
    "combo-bi-b32-d0-60s": (
        "양방향 + 배치 32 + dropout 0, 60초 예산 (70 에폭 스케줄이 중간에 끊김)",
        {"bidirectional": True, "batch_size": 32, "dropout": 0.0, "time_budget": 60.0},
    ),
    "combo-bi-b32-d0-60s-fit": (
        "양방향 + 배치 32 + dropout 0, 60초 예산, 스케줄을 13 에폭에 맞춤",
        {"bidirectional": True, "batch_size": 32, "dropout": 0.0, "time_budget": 60.0, "epochs": 13},
    ),
    # Round two (issue 42): one change at a time on top of the best recipe of round one (combo-bi-b32-d0), first
    # its schedule spread over the budget (it stopped at ~64 of its 70 planned epochs), then each lever on that.
    "bi-budget": (
        "양방향 + 배치 32 + dropout 0, 스케줄을 예산(300 CPU 초)에 맞춤",
        {**_BEST, "schedule_over": "budget", "epochs": 1000},
    ),
    "bi-budget-tied": (
        "예산 스케줄 + 출력층과 번역문 쪽 임베딩의 가중치 공유",
        {**_BEST, "schedule_over": "budget", "epochs": 1000, "tie_embeddings": True},
    ),
    "bi-budget-d0.1": (
        "예산 스케줄 + dropout 0 → 0.1",
        {**_BEST, "schedule_over": "budget", "epochs": 1000, "dropout": 0.1},
    ),
    "bi-budget-b64-lr0.004": (
        "예산 스케줄 + 배치 32 → 64, 학습률 0.002 → 0.004",
        {**_BEST, "schedule_over": "budget", "epochs": 1000, "batch_size": 64, "learning_rate": 0.004},
    ),
    "bi-budget-avg5": (
        "예산 스케줄 + 마지막 5 에폭의 가중치 평균",
        {**_BEST, "schedule_over": "budget", "epochs": 1000, "average_last": 5},
    ),
    "bi-budget-60s": (
        "양방향 + 배치 32 + dropout 0, 60초 예산, 스케줄을 예산에 맞춤",
        {**_BEST, "schedule_over": "budget", "epochs": 1000, "time_budget": 60.0},
    ),
}
"""Training rows: a name, its Korean label, and the settings it changes in the packaged recipe."""

REFERENCES: dict[str, str] = {
    "luong-feeding": "luong",
    "baseline-60s-fit": "baseline-60s",
    "combo-bi-b32-d0-60s-fit": "baseline-60s",
    "combo-bi-b32-d0-60s": "baseline-60s",
    "bi-budget": "combo-bi-b32-d0",
    "bi-budget-tied": "bi-budget",
    "bi-budget-d0.1": "bi-budget",
    "bi-budget-b64-lr0.004": "bi-budget",
    "bi-budget-avg5": "bi-budget",
    "bi-budget-60s": "combo-bi-b32-d0-60s-fit",
    "bi-budget-beam-5": "bi-budget",
    "bi-budget-beam-5-lp-0.6": "bi-budget",
}
"""The row a row is compared with, when it is not the baseline: input feeding is a change of the
Luong decoder (the Bahdanau decoder already feeds its context into the GRU), so it is measured
against the Luong decoder without it; a 60-second row is measured against a 60-second row; a round-two row
against the row it changes one setting of; a decoding row against the checkpoints it re-scores, greedily."""
REFERENCE_ROWS = ("baseline", "baseline-60s")
"""Rows that other rows are compared with (shown as 기준)."""

SHORT = {
    "baseline": "기준",
    "luong": "루옹 행",
    "baseline-60s": "60초 기준",
    "combo-bi-b32-d0": "1차 최선",
    "bi-budget": "예산 스케줄 행",
    "combo-bi-b32-d0-60s-fit": "1차 60초 최선",
}
"""Short Korean names of the rows others are compared with, for the verdict column and the paired table."""

FINAL: dict[str, str | None] = {
    "baseline": None,
    "combo-b32-d0": "baseline",
    "combo-bi-b32-d0": "baseline",
    "baseline-60s": None,
    "combo-bi-b32-d0-60s-fit": "baseline-60s",
    "bi-budget": "combo-bi-b32-d0",
}
"""Rows of the final comparison on the test split (`final`), five seeds each, and the row each is compared with
(None: a reference). The new rows are the best by dev mean at their budget (see the dev table); round two's
(bi-budget, 300 CPU-s) is compared with round one's best. A row without results is left out of the tables:
`final --rows bi-budget` runs only it. bi-budget-60s has no dev row yet, so it is not a final row."""

DECODES: dict[str, tuple[str, dict]] = {
    "beam-5": ("빔 5 (길이 보정 1.0)", {"beam_size": 5, "length_penalty": 1.0}),
    "beam-5-lp-0": ("빔 5, 길이 보정 없음", {"beam_size": 5, "length_penalty": 0.0}),
    "beam-10": ("빔 10 (길이 보정 1.0)", {"beam_size": 10, "length_penalty": 1.0}),
    "bi-budget-beam-5": ("예산 스케줄 행을 빔 5로 (길이 보정 1.0)", {"beam_size": 5, "length_penalty": 1.0}),
    "bi-budget-beam-5-lp-0.6": ("예산 스케줄 행을 빔 5로 (길이 보정 0.6)", {"beam_size": 5, "length_penalty": 0.6}),
}
"""Decoding rows: beam search on the checkpoints of the same seeds of a training row (`DECODE_SOURCE`, else the
baseline), no retraining."""

DECODE_SOURCE = {"bi-budget-beam-5": "bi-budget", "bi-budget-beam-5-lp-0.6": "bi-budget"}
"""The training row whose checkpoints a decoding row re-scores (the baseline when not named here)."""

interval = seed_interval
"""(mean, low, high) over seeds: `stats.seed_interval`, the interval `stats.verdict` decides with."""


class ResultError(Exception):
    """A result file that cannot be read as a finished run: the one line `table` prints, naming the file."""


def recipe() -> dict:
    """The baseline recipe (`BASELINE`), a copy."""
    return dict(BASELINE)


def run_config(row: str, seed: int, budget: float, eval_split: str = "dev") -> TrainConfig:
    """The packaged recipe with the row's changes; a row may set its own `time_budget` (the 60-second rows)."""
    changes = ROWS[row][1]
    measured = {"seed": seed, "time_budget": budget, "budget_clock": "cpu", "eval_split": eval_split}
    return TrainConfig(**{**recipe(), **measured, **changes})


def code_version() -> str:
    result = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False)
    return result.stdout.strip() or "unknown"


def environment() -> dict:
    return {"code": code_version(), "torch": torch.__version__, "python": platform.python_version(), "threads": 1}


def train_row(row: str, seed: int, args: argparse.Namespace, say, eval_split: str = "dev") -> None:
    """Train one row with one seed and write its JSON; on the test split (`final`) with its translations too."""
    config = run_config(row, seed, args.budget, eval_split)
    cpu, wall = time.process_time(), time.perf_counter()
    final = eval_split == "test"
    result = train(
        config,
        pairs=load_pairs(config.max_words),
        checkpoint=args.checkpoints / ("final" if final else "") / f"{row}-seed{seed}",
        overwrite=True,
        progress=False,
        log=lambda line: say(f"    {line}"),
        keep_training_state=False,
        measure_bleu=not final,
    )
    training_cpu = time.process_time() - cpu
    if final:  # the test split, read once for this run: keep the translations for the paired bootstrap
        _, test = split_pairs(load_pairs(config.max_words), config.split)
        scores = evaluate(result.model, result.vocabs, test, split=config.split)
        result.evaluation = {**evaluation_record(scores), "hypotheses": scores.hypotheses}
    document = {
        "row": row,
        "kind": "train",
        "changes": ROWS[row][1],
        "seed": seed,
        "config": asdict(config),
        "cpu_seconds": training_cpu,
        "wall_seconds": time.perf_counter() - wall,
        "epochs": len(result.history),
        "stopped_by_budget": result.stopped_by_budget,
        eval_split: result.evaluation,
        "environment": environment(),
    }
    write_json(args.out / f"{row}-seed{seed}.json", document)
    say(f"  {row} seed {seed}: {eval_split} BLEU {result.evaluation['bleu']:.2f} after {len(result.history)} epochs")


def decode_row(row: str, seed: int, args: argparse.Namespace, say) -> None:
    source = DECODE_SOURCE.get(row, "baseline")
    directory = args.checkpoints / f"{source}-seed{seed}"
    if not (directory / "checkpoint.json").is_file():
        say(f"  {row} seed {seed}: skipped, no {source} checkpoint in {directory}")
        return
    loaded = load_checkpoint(directory)
    config = loaded.training["config"]
    _, dev = split_pairs(load_pairs(config["max_words"]), config["split"], "dev")
    cpu, wall = time.process_time(), time.perf_counter()
    scores = evaluate(loaded.model, loaded.vocabs, dev, split=f"{config['split']}:dev", **DECODES[row][1])
    document = {
        "row": row,
        "kind": "decode",
        "changes": DECODES[row][1],
        "seed": seed,
        "config": config,
        "cpu_seconds": time.process_time() - cpu,
        "wall_seconds": time.perf_counter() - wall,
        "epochs": loaded.training["epoch"],
        "dev": evaluation_record(scores),
        "environment": environment(),
    }
    write_json(args.out / f"{row}-seed{seed}.json", document)
    say(f"  {row} seed {seed}: dev BLEU {scores.bleu:.2f}")


def run(args: argparse.Namespace) -> int:
    torch.set_num_threads(1)
    final = args.command == "final"
    if final:
        args.out = args.out / "final"
    rows = args.rows or ([*FINAL] if final else [*ROWS, *DECODES])
    plan = [(row, seed) for row in rows for seed in args.seeds]

    def say(line: str) -> None:
        print(f"{time.strftime('%H:%M:%S')} {line}", flush=True)

    todo = [(row, seed) for row, seed in plan if not finished(args.out / f"{row}-seed{seed}.json", say)]
    say(f"{len(plan) - len(todo)} of {len(plan)} runs already have results in {args.out}; {len(todo)} to go")
    for number, (row, seed) in enumerate(todo, start=1):
        claim = args.checkpoints / ("final" if final else "") / f"{row}-seed{seed}.claim"
        if not take_claim(claim):
            say(f"[{number}/{len(todo)}] {row} seed {seed}: running in another live process ({claim}), skipped")
            continue
        if finished(args.out / f"{row}-seed{seed}.json", None):  # checked under the claim: another runner may have
            # finished it after this one made its list, and let go of its claim
            release_claim(claim)
            say(f"[{number}/{len(todo)}] {row} seed {seed}: finished by another process meanwhile")
            continue
        say(f"[{number}/{len(todo)}] {row} seed {seed}")
        try:
            if final:
                train_row(row, seed, args, say, eval_split="test")
            else:
                (train_row if row in ROWS else decode_row)(row, seed, args, say)
        finally:
            release_claim(claim)
    return 0


def finished(path: Path, say) -> bool:
    """True when `path` holds a valid result (`read_result`); a broken one is reported (through `say`) and re-run."""
    if not path.exists():
        return False
    try:
        read_result(path)
    except ResultError as error:
        if say is not None:
            say(f"{error}: running it again")
        return False
    return True


def read_result(path: Path) -> dict:
    """One run's JSON, checked: the fields `table` reads, each of the right type, the row and seed its name says.

    Raises:
        ResultError: one line naming the file and what is wrong (truncated JSON, a null score...).
    """
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as error:  # truncated or broken JSON (JSONDecodeError), or bytes that are not UTF-8
        raise ResultError(f"{path}: not a complete JSON result ({error}); a run stopped while writing it?") from None
    except OSError as error:
        raise ResultError(f"{path}: cannot be read ({error.strerror or error})") from None
    problem = _result_problem(document, path.name)
    if problem:
        raise ResultError(f"{path}: {problem}")
    return document


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _result_problem(document: object, name: str) -> str | None:
    """What is wrong with a result document, or None."""
    if not isinstance(document, dict):
        return f"expected a JSON object, got {type(document).__name__}"
    row, seed = document.get("row"), document.get("seed")
    if not isinstance(row, str) or row not in {*ROWS, *DECODES}:
        return f'"row" must name a row of the script, got {row!r}'
    if not isinstance(seed, int) or isinstance(seed, bool) or name != f"{row}-seed{seed}.json":
        return f'"row" and "seed" ({row!r}, {seed!r}) do not match the file name'
    for key in ("cpu_seconds", "epochs"):
        if not _number(document.get(key)):
            return f'"{key}" must be a finite number, got {document.get(key)!r}'
    split = "test" if "test" in document and "dev" not in document else "dev"
    scores = document.get(split)
    if not isinstance(scores, dict):
        return f'"{split}" must hold the scores (an object with "bleu"), got {scores!r}'
    if not (_number(scores.get("bleu")) and 0 <= scores["bleu"] <= 100):
        return f'"{split}"."bleu" must be a number in [0, 100], got {scores.get("bleu")!r}'
    if split == "test":
        hypotheses, bounds = scores.get("hypotheses"), scores.get("bleu_interval")
        if not (isinstance(hypotheses, list) and hypotheses and all(isinstance(h, str) for h in hypotheses)):
            return '"test"."hypotheses" must be the list of translations'
        if not (isinstance(bounds, list) and len(bounds) == 2 and all(_number(b) for b in bounds)):
            return f'"test"."bleu_interval" must be two numbers, got {bounds!r}'
        for key in ("exact_match", "signature", "split"):
            if key not in scores:
                return f'"test" lacks "{key}"'
    return None


def process_start(pid: int) -> str | None:
    """The identity of a live process: its start time (field 22 of /proc/<pid>/stat), so that a pid number
    reused by another process does not pass for the runner; ``"alive"`` where /proc is missing; None when gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None if Path("/proc/self/stat").exists() else _signal_check(pid)
    except OSError:
        return _signal_check(pid)
    fields = text.rsplit(")", 1)[-1].split()  # the command name may hold spaces and parentheses
    return fields[19] if len(fields) > 19 else None


def _signal_check(pid: int) -> str | None:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return "alive"
    return "alive"


def _claim_alive(text: str) -> bool:
    """Whether the claim's process is still the one that wrote it (same host, same pid, same start time).

    An empty, truncated or old-style claim is stale (its writer died before finishing it); a claim
    made on another host cannot be checked from here and is respected."""
    try:
        claim = json.loads(text)
        pid, start, host = claim["pid"], claim["start"], claim["host"]
    except (ValueError, KeyError, TypeError):
        return False
    if host != socket.gethostname():
        return True
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    current = process_start(pid)
    return current is not None and current in (start, "alive")  # "alive": running, but its start time unreadable


def take_claim(path: Path) -> bool:
    """Claim a run for this process, so that two processes never train the same run; False when a live process
    holds it. The claim names this process (pid, start time, host); a claim whose process is gone, whose pid now
    belongs to another process, or that is empty or broken, is taken over. The check and the write happen under
    an exclusive lock (flock on `<claim>.lock`), and the claim is written whole (a temporary file, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            text = None
        except (OSError, UnicodeDecodeError):
            text = ""
        if text is not None and _claim_alive(text):
            return False
        claim = {"pid": os.getpid(), "start": process_start(os.getpid()), "host": socket.gethostname()}
        temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temp.write_text(json.dumps(claim, allow_nan=False), encoding="utf-8")
        os.replace(temp, path)
        return True


def release_claim(path: Path) -> None:
    """Remove this process's claim (a claim another process took over stays)."""
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        if json.loads(path.read_text(encoding="utf-8"))["pid"] == os.getpid():
            path.unlink()


def summarize(results: dict[str, list[dict]]) -> dict[str, dict]:
    """Per row: seeds, BLEUs, mean, spread (max - min), 95% interval, mean CPU seconds and epochs."""
    summary = {}
    for row, documents in results.items():
        bleus = [(d.get("dev") or d["test"])["bleu"] for d in documents]  # dev rows; test in `final`
        mean, low, high = interval(bleus)
        summary[row] = {
            "seeds": [d["seed"] for d in documents],
            "bleus": bleus,
            "mean": mean,
            "low": low,
            "high": high,
            "spread": max(bleus) - min(bleus),
            "cpu_seconds": statistics.fmean(d["cpu_seconds"] for d in documents),
            "epochs": statistics.fmean(d["epochs"] for d in documents),
        }
    return summary


def row_verdict(row: dict, reference: dict, p_values: list[float] | None = None) -> Verdict:
    """`stats.verdict` (the one rule) on the seed-paired differences of two summary rows (and their p-values)."""
    return verdict(paired_differences(row, reference), p_values)


def load_results(out: Path) -> dict[str, list[dict]]:
    results: dict[str, list[dict]] = {}
    for path in sorted(out.glob("*-seed*.json")):
        document = read_result(path)
        results.setdefault(document["row"], []).append(document)
    for documents in results.values():
        documents.sort(key=lambda d: d["seed"])
    return results


def table_lines(out: Path) -> list[str]:
    """The Korean table in a snippet section, from the JSON under `out` (rows in `ROWS`, `DECODES` order)."""
    summary = summarize(load_results(out))
    labels = {row: label for row, (label, _) in {**ROWS, **DECODES}.items()}
    lines = [
        "--8<-- [start:ablation]",
        "| 바꾼 것 | 시드 | dev BLEU (시드별) | 평균 | 범위 | 평균의 95% 구간 | CPU 초 | 에폭 | 기준 대비 |",
        "|---|---:|---|---:|---:|---|---:|---:|---|",
    ]
    for row in [*ROWS, *DECODES]:
        if row not in summary:
            continue
        s = summary[row]
        bleus = ", ".join(f"{b:.2f}" for b in s["bleus"])
        bounds = "-" if math.isnan(s["low"]) else f"{s['low']:.2f} – {s['high']:.2f}"
        reference = summary.get(reference_of(row))
        against = "기준" if row in REFERENCE_ROWS else (row_verdict(s, reference).korean if reference else "-")
        if row in REFERENCES and reference:
            against += f" ({SHORT[reference_of(row)]} 대비)"
        seconds = f"{s['cpu_seconds']:.0f}" + (" (디코딩만)" if row in DECODES else "")
        lines.append(
            f"| {labels[row]} | {len(s['bleus'])} | {bleus} | {s['mean']:.2f} | {s['spread']:.2f} | {bounds} "
            f"| {seconds} | {s['epochs']:.1f} | {against} |"
        )
    missing = [labels[row] for row in [*ROWS, *DECODES] if row not in summary]
    if missing:
        lines += ["", f"아직 결과가 없는 행: {', '.join(missing)}."]
    lines += ["--8<-- [end:ablation]", "", *paired_lines(summary, labels)]
    return lines


def paired_differences(row: dict, baseline: dict) -> list[float]:
    """Row minus baseline, seed by seed, over the seeds both have (in the row's seed order)."""
    base = dict(zip(baseline["seeds"], baseline["bleus"], strict=True))
    return [bleu - base[seed] for seed, bleu in zip(row["seeds"], row["bleus"], strict=True) if seed in base]


def paired_lines(summary: dict[str, dict], labels: dict[str, str]) -> list[str]:
    """The Korean table of differences from the baseline with the same seed, with their 95% interval."""
    lines = [
        "--8<-- [start:paired]",
        "| 바꾼 것 | 짝지은 시드 | 시드별 차 (행 - 기준) | 평균 차 | 평균 차의 95% 구간 |",
        "|---|---:|---|---:|---|",
    ]
    for row in [*ROWS, *DECODES]:
        reference = summary.get(reference_of(row))
        if row in REFERENCE_ROWS or row not in summary or reference is None:
            continue
        differences = paired_differences(summary[row], reference)
        if not differences:
            continue
        mean, low, high = interval(differences)
        bounds = "-" if math.isnan(low) else f"{low:+.2f} – {high:+.2f}"
        each = ", ".join(f"{d:+.2f}" for d in differences)
        name = labels[row] + (f" − {SHORT[reference_of(row)]}" if row in REFERENCES else "")
        lines.append(f"| {name} | {len(differences)} | {each} | {mean:+.2f} | {bounds} |")
    return [*lines, "--8<-- [end:paired]", ""]


def reference_of(row: str) -> str:
    """The row `row` is compared with: `REFERENCES`, else the baseline."""
    return REFERENCES.get(row, "baseline")


def final_lines(out: Path) -> list[str]:
    """The Korean tables of the final comparison on the test split (`final`), from the JSON under `out`.

    One table per budget: each recipe's test BLEU per seed, mean, spread and 95% interval over
    seeds; then, per seed, the paired bootstrap over the test sentences of the new recipe against
    the packaged one (`compare`), the seed-paired differences with their interval, and the verdict
    (`stats.verdict`, from both).
    """
    results = load_results(out)
    summary = summarize(results)
    labels = {row: label for row, (label, _) in ROWS.items()}
    lines = [
        "--8<-- [start:final]",
        "| 레시피 | 시드 | 평가용 BLEU (시드별) | 평균 | 범위 | 평균의 95% 구간 | CPU 초 | 에폭 |",
        "|---|---:|---|---:|---:|---|---:|---:|",
    ]
    for row in (row for row in FINAL if row in summary):
        s = summary[row]
        bleus = ", ".join(f"{b:.2f}" for b in s["bleus"])
        bounds = "-" if math.isnan(s["low"]) else f"{s['low']:.2f} – {s['high']:.2f}"
        lines.append(
            f"| {labels[row]} | {len(s['bleus'])} | {bleus} | {s['mean']:.2f} | {s['spread']:.2f} | {bounds} "
            f"| {s['cpu_seconds']:.0f} | {s['epochs']:.1f} |"
        )
    lines += ["--8<-- [end:final]", "", "--8<-- [start:final_paired]"]
    lines += [
        "| 비교 | 시드 | 평가용 BLEU 차 (시드별) | 평균 차 | 평균 차의 95% 구간 | 짝 부트스트랩 p (시드별) | 판정 |",
        "|---|---:|---|---:|---|---|---|",
    ]
    for row, reference in FINAL.items():
        if reference is None or row not in summary or reference not in summary:
            continue
        differences = paired_differences(summary[row], summary[reference])
        mean, low, high = interval(differences)
        bounds = "-" if math.isnan(low) else f"{low:+.2f} – {high:+.2f}"
        p_values = seed_p_values(results[reference], results[row])
        decided = row_verdict(summary[row], summary[reference], p_values)
        shown = ", ".join(f"{p:.3f}" for p in p_values)
        each = ", ".join(f"{d:+.2f}" for d in differences)
        name = f"{labels[row]} − {SHORT.get(reference, labels[reference])}"
        lines.append(f"| {name} | {len(differences)} | {each} | {mean:+.2f} | {bounds} | {shown} | {decided.korean} |")
    return [*lines, "--8<-- [end:final_paired]", ""]


def seed_p_values(reference: list[dict], system: list[dict]) -> list[float]:
    """The paired bootstrap p of `system` against `reference` on the test sentences, seed by seed."""
    _, test = split_pairs(load_pairs(reference[0]["config"]["max_words"]), reference[0]["config"]["split"])
    by_seed = {d["seed"]: d for d in reference}
    return [
        compare(_evaluation(by_seed[d["seed"]], test), _evaluation(d, test)).p_value
        for d in system
        if d["seed"] in by_seed
    ]


def _evaluation(document: dict, test: list) -> Evaluation:
    """The `Evaluation` a final run's JSON keeps (its translations of the test pairs)."""
    scores = document["test"]
    low, high = scores["bleu_interval"]
    sources, references = [p.source for p in test], [p.target for p in test]
    return Evaluation(
        scores["bleu"], low, high, scores["exact_match"], scores["signature"], scores["split"],
        sources, references, scores["hypotheses"],
    )  # fmt: skip


EXTERNAL_COMPARED = {
    "joey-transformer": ("bi-budget", "combo-bi-b32-d0"),
    "joey-recurrent": ("bi-budget", "combo-bi-b32-d0"),
}
"""External measurements (OUT/external/<name>.json) and the final rows at 300 CPU-s each is compared with."""
EXTERNAL_60S = {"joey-transformer": ("combo-bi-b32-d0-60s-fit",)}
"""External measurements with one run at about 60 CPU-s (``at_60s``), and the final row compared with it."""


def read_external(path: Path) -> dict:
    """An external measurement: ``label``, ``source``, ``settings`` and ``runs`` (``greedy_bleu`` each), checked.

    Raises:
        ResultError: one line naming the file and what is wrong.
    """
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, OSError) as error:
        raise ResultError(f"{path}: not a readable JSON document ({error})") from None
    runs = document.get("runs") if isinstance(document, dict) else None
    if not isinstance(runs, list) or not runs:
        return _external_error(path, '"runs" must be a non-empty list')
    if not all(isinstance(run, dict) and _number(run.get("greedy_bleu")) for run in runs):
        return _external_error(path, 'every run needs a finite "greedy_bleu"')
    if not all(isinstance(document.get(key), str) and document[key] for key in ("label", "source")):
        return _external_error(path, '"label" and "source" must be non-empty strings')
    return document


def _external_error(path: Path, problem: str) -> dict:
    raise ResultError(f"{path}: {problem}")


def external_pairs(ours: list[float], theirs: list[float]) -> list[float]:
    """Ours minus theirs for runs of two recipes that share no seeds: the i-th run of each (in seed order, as
    many pairs as the shorter list has), or each of ours against their one run when they have one.

    Runs of different recipes are independent, so any fixed pairing gives differences whose mean estimates the
    difference of the means and whose t-interval is valid; pairing in listed order picks nothing after the fact.
    Against one run, the interval measures only our seeds' noise, not theirs.
    """
    if len(theirs) == 1:
        return [bleu - theirs[0] for bleu in ours]
    return [a - b for a, b in zip(ours, theirs, strict=False)]


def external_lines(out: Path, final: Path) -> list[str]:
    """The Korean tables of the external measurements (OUT/external) and of the final rows against them, with
    `stats.verdict` over `external_pairs` (no p-values: their translations are not here)."""
    documents = {
        name: read_external(out / f"{name}.json") for name in EXTERNAL_COMPARED if (out / f"{name}.json").exists()
    }
    summary = summarize(load_results(final)) if final.is_dir() else {}
    labels = {row: label for row, (label, _) in ROWS.items()}
    lines = [
        "--8<-- [start:external]",
        "| 외부 레시피 (다른 사람이 잰 것) | 실행 | 탐욕적 BLEU (실행별) | 평균 | 평균의 95% 구간 | 빔 5 평균 |",
        "|---|---:|---|---:|---|---:|",
    ]
    for document in documents.values():
        bleus = [run["greedy_bleu"] for run in document["runs"]]
        mean, low, high = interval(bleus)
        bounds = "-" if math.isnan(low) else f"{low:.2f} – {high:.2f}"
        beams = [run["beam5_bleu"] for run in document["runs"] if _number(run.get("beam5_bleu"))]
        beam = f"{statistics.fmean(beams):.2f}" if beams else "-"
        each = ", ".join(f"{b:.2f}" for b in bleus)
        lines.append(f"| {document['label']} | {len(bleus)} | {each} | {mean:.2f} | {bounds} | {beam} |")
    lines += ["--8<-- [end:external]", "", "--8<-- [start:external_verdict]"]
    lines += [
        "| 비교 (우리 − 외부) | 예산 | 짝 | 차 (짝별) | 평균 차 | 평균 차의 95% 구간 | 판정 |",
        "|---|---|---:|---|---:|---|---|",
    ]
    for name, document in documents.items():
        theirs = [run["greedy_bleu"] for run in document["runs"]]
        compared = [("300 CPU 초", row, theirs) for row in EXTERNAL_COMPARED[name]]
        if name in EXTERNAL_60S and isinstance(document.get("at_60s"), dict):
            compared += [("60 CPU 초", row, [document["at_60s"]["greedy_bleu"]]) for row in EXTERNAL_60S[name]]
        for budget, row, reference in compared:
            if row not in summary:
                continue
            differences = external_pairs(summary[row]["bleus"], reference)
            mean, low, high = interval(differences)
            bounds = "-" if math.isnan(low) else f"{low:+.2f} – {high:+.2f}"
            each = ", ".join(f"{d:+.2f}" for d in differences)
            decided = verdict(differences).korean
            lines.append(
                f"| {labels[row]} − {document['label']} | {budget} | {len(differences)} | {each} | {mean:+.2f} "
                f"| {bounds} | {decided} |"
            )
    return [*lines, "--8<-- [end:external_verdict]", ""]


def tables_text(out: Path) -> str:
    """The text of tables.ko.md: the dev tables, the final tables and the external comparison."""
    return "\n".join(table_lines(out) + final_lines(out / "final") + external_lines(out / "external", out / "final"))


def table(args: argparse.Namespace) -> int:
    text = tables_text(args.out)
    path = args.out / "tables.ko.md"
    temp = path.with_suffix(".md.tmp")
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, path)
    print(text)
    return 0


def check_runs(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Every run's configuration, built before anything trains: a bad seed or budget is one usage line."""
    rows = args.rows or ([*FINAL] if args.command == "final" else [*ROWS, *DECODES])
    try:
        for row in rows:  # a decoding row re-scores the baseline's checkpoints: its settings are the baseline's
            for seed in args.seeds:
                run_config(row if row in ROWS else "baseline", seed, args.budget)
    except InputError as error:
        option = "--budget" if "time_budget" in str(error) else "--seeds" if "seed" in str(error) else "a setting"
        parser.error(f"{option}: {error}")


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="ablation.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    runner = commands.add_parser("run", help="train and score the rows that have no result yet")
    runner.add_argument("--rows", nargs="+", choices=[*ROWS, *DECODES], help="rows to run (default: all, in order)")
    runner.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2], help="random seeds (default: 0 1 2)")
    runner.add_argument("--budget", type=float, default=300.0, help="CPU seconds of training per run (default: 300)")
    runner.add_argument("--out", type=Path, default=OUT, help="where the per-run JSON go (default: results/quality)")
    runner.add_argument(
        "--checkpoints", type=Path, default=Path("/tmp/quality-checkpoints"), help="scratch for checkpoints"
    )
    finals = commands.add_parser(
        "final", help="train the final rows on the whole training split and score them once on the test split"
    )
    finals.add_argument("--rows", nargs="+", choices=[*FINAL], help="rows to run (default: all of FINAL, in order)")
    finals.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4], help="random seeds (default: 0-4)")
    finals.add_argument("--budget", type=float, default=300.0, help="CPU seconds of training per run (default: 300)")
    finals.add_argument("--out", type=Path, default=OUT, help="results go to OUT/final (default: results/quality)")
    finals.add_argument(
        "--checkpoints", type=Path, default=Path("/tmp/quality-checkpoints"), help="scratch for checkpoints"
    )
    tables = commands.add_parser("table", help="write results/quality/tables.ko.md from the JSON")
    tables.add_argument("--out", type=Path, default=OUT, help="where the per-run JSON are (default: results/quality)")
    args = parser.parse_args(argv)
    if args.command in ("run", "final"):
        if not (math.isfinite(args.budget) and args.budget > 0):
            parser.error(f"--budget must be a positive number of seconds, got {args.budget}")
        check_runs(parser, args)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return table(args) if args.command == "table" else run(args)
    except ResultError as error:  # a broken result file: one line naming it, no traceback
        print(f"ablation.py: error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
