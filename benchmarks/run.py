"""Time the seeds' training loops against the project's trainer, and compare quality at equal time.

Run from the repository root:

    python -m benchmarks.run --threads 1 --out results/performance

Prints one JSON line per contender (pairs/s, seconds per epoch, GFLOP/s) and one with the
ratios, then the equal-time BLEU table and the decoding table, and writes
``benchmark.json`` and ``benchmark.md`` to ``--out``. Not a test: it takes about 15 minutes.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import torch

from seq2seq_attention.core.batching import collate
from seq2seq_attention.core.training import make_optimizer
from seq2seq_attention.model.search import beam_search_decode, greedy_decode
from seq2seq_attention.model.seq2seq import build_model
from seq2seq_attention.model.tokens import EOS_IDX
from seq2seq_attention.translation.corpus import (
    TranslationDataset,
    build_vocabularies,
    load_pairs,
    make_loader,
    split_pairs,
)
from seq2seq_attention.translation.train import TrainConfig, make_criterion, train_epoch

from .quality import corpus_bleu, project_quality, tutorial_quality
from .tutorial_loops import MAX_LENGTH, PerSentenceTrainer, TutorialTrainer

PROJECT = dict(
    decoder="bahdanau",
    batch_size=64,
    learning_rate=2e-3,
    schedule="cosine",
    dropout=0.3,
    label_smoothing=0.1,
)
"""The project's training settings, chosen with `benchmarks.tune` (results/performance/tuning.jsonl); the
cosine schedule spans as many epochs as fit in the quality budget at the measured epoch time."""

MARKS = (30.0, 60.0, 120.0, 180.0, 240.0, 300.0)
"""Moments of the training clock (s) at which both contenders are evaluated."""


# --- FLOP model ---------------------------------------------------------------------------------


def forward_flops(S: int, T: int, H: int, V: int, keys_every_step: bool = False) -> int:
    """Multiply-adds x 2 of one pair's forward pass through the Bahdanau Seq2Seq (matrix products only).

    Encoder GRU: 3H x H input and 3H x H hidden gates per source position (12 H^2 S). Keys `Ua`:
    H^2 per source position, once (2 H^2 S), or at every decoder step when `keys_every_step`.
    Decoder step: query `Wa` (2 H^2), GRU input gates on [embedded; context] (12 H^2), hidden
    gates (6 H^2), scores `Va` and the context sum (4 H S), output layer (2 H V).
    """
    keys = 2 * H * H * S
    step = 20 * H * H + 4 * H * S + 2 * H * V + (keys if keys_every_step else 0)
    return 12 * H * H * S + (0 if keys_every_step else keys) + T * step


def epoch_flops(examples, H: int, V: int, padded_to: int | None = None, keys_every_step: bool = False) -> float:
    """Training FLOPs of one epoch: forward x 3 (the backward pass costs about twice the forward)."""
    total = 0
    for source, target in examples:
        S, T = (padded_to, padded_to) if padded_to else (len(source), len(target))
        total += 3 * forward_flops(S, T, H, V, keys_every_step)
    return float(total)


def sgemm_peak(threads: int, seconds: float = 2.0) -> dict:
    """The best float32 matrix-multiply rate of a few square sizes, in GFLOP/s."""
    best = {}
    for n in (512, 1024, 2048):
        a, b = torch.randn(n, n), torch.randn(n, n)
        for _ in range(3):
            a @ b
        reps, tic = 0, time.perf_counter()
        while time.perf_counter() - tic < seconds / 3:
            a @ b
            reps += 1
        best[n] = 2 * n**3 * reps / (time.perf_counter() - tic) / 1e9
    return {"threads": threads, "by_size": {str(k): round(v, 1) for k, v in best.items()}, "gflops": max(best.values())}


# --- machine ------------------------------------------------------------------------------------


def machine() -> dict:
    """CPU model, cores, torch version, load average and the other Python processes running."""
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if "model name" in line
        ),
        platform.processor(),
    )
    others = subprocess.run(["ps", "-eo", "pid,pcpu,args"], capture_output=True, text=True).stdout.splitlines()
    others = [
        line.strip()[:120]
        for line in others[1:]
        if "python" in line and str(os.getpid()) != line.split()[0] and float(line.split()[1]) > 5.0
    ]
    load = os.getloadavg()
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "load_average_1_5_15": [round(x, 2) for x in load],
        "busy_python_processes": others,
        "quiet": load[0] < 0.5 and not others,
    }


# --- speed --------------------------------------------------------------------------------------


def time_per_sentence(examples, vocab_sizes, H: int, n_pairs: int) -> dict:
    trainer = PerSentenceTrainer(examples, *vocab_sizes, hidden_size=H)
    for index in range(20):  # warm-up
        trainer.step(index)
    tic = time.perf_counter()
    for index in range(20, 20 + n_pairs):
        trainer.step(index)
    seconds = time.perf_counter() - tic
    pairs_per_s = n_pairs / seconds
    return {"pairs_timed": n_pairs, "pairs_per_s": pairs_per_s, "epoch_s": len(examples) / pairs_per_s}


def time_tutorial(examples, vocab_sizes, H: int) -> dict:
    trainer = TutorialTrainer(examples, *vocab_sizes, hidden_size=H)
    for indices in trainer.batches()[:5]:  # warm-up
        trainer.step(indices)
    tic = time.perf_counter()
    trainer.epoch()
    seconds = time.perf_counter() - tic
    return {"pairs_timed": len(examples), "pairs_per_s": len(examples) / seconds, "epoch_s": seconds}


def time_project(train_set, vocab_sizes, H: int, settings: dict, epochs: int = 2) -> dict:
    config = TrainConfig(hidden_size=H, epochs=epochs + 1, **settings)
    torch.manual_seed(0)
    model = build_model(config.decoder, *vocab_sizes, H, config.dropout)
    loader = make_loader(train_set, config.batch_size, seed=0)
    optimizer = make_optimizer(model, config.learning_rate, config.weight_decay)
    criterion = make_criterion(config)
    train_epoch(model, loader, optimizer, criterion, config, 1)  # warm-up epoch
    times = []
    for epoch in range(2, epochs + 2):
        tic = time.perf_counter()
        train_epoch(model, loader, optimizer, criterion, config, epoch)
        times.append(time.perf_counter() - tic)
    seconds = min(times)
    return {
        "pairs_timed": len(train_set) * epochs,
        "pairs_per_s": len(train_set) / seconds,
        "epoch_s": seconds,
        "epoch_s_all": times,
        "batches": len(loader),
    }


def batch_sweep(train_set, vocab_sizes, H: int, sizes) -> list[dict]:
    """Seconds per epoch of the project's trainer for several batch sizes (one epoch each, after a warm-up)."""
    rows = []
    for batch_size in sizes:
        row = time_project(train_set, vocab_sizes, H, {**PROJECT, "batch_size": batch_size}, epochs=1)
        rows.append({"batch_size": batch_size, "pairs_per_s": row["pairs_per_s"], "epoch_s": row["epoch_s"]})
        print(json.dumps({"batch_sweep": rows[-1]}), flush=True)
    return rows


# --- decoding -----------------------------------------------------------------------------------


DECODERS = ((1, 1.0), (3, 1.0), (5, 0.0), (5, 0.5), (5, 1.0), (10, 1.0))
"""(beam size, length penalty) pairs measured; beam size 1 is greedy decoding."""


def decoding(model, vocabs, test_pairs, settings=DECODERS, repeats: int = 3) -> list[dict]:
    """Held-out BLEU and sentences/s (all 566 sentences in one batch) of greedy decoding and beam search."""
    model.eval()
    encoded = [vocabs.source.encode(p.source, unknown="unk") for p in test_pairs]
    batch = collate([(e, [EOS_IDX]) for e in encoded])
    references = [" ".join(p.target.split()) for p in test_pairs]
    rows = []
    for k, alpha in settings:
        best = float("inf")
        for _ in range(repeats):
            tic = time.perf_counter()
            if k == 1:
                tokens, _ = greedy_decode(model, batch.source, batch.lengths)
            else:
                tokens, _ = beam_search_decode(model, batch.source, batch.lengths, beam_size=k, length_penalty=alpha)
            best = min(best, time.perf_counter() - tic)
        hypotheses = [vocabs.target.decode(row) for row in tokens.tolist()]
        rows.append(
            {
                "decoder": "greedy" if k == 1 else f"beam k={k}, alpha={alpha}",
                "bleu": corpus_bleu(hypotheses, references),
                "sentences_per_s": len(test_pairs) / best,
            }
        )
        print(json.dumps({"decoding": rows[-1]}), flush=True)
    return rows


# --- main ---------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads for every contender")
    parser.add_argument("--hidden-size", type=int, default=256)
    parser.add_argument("--per-sentence-pairs", type=int, default=600, help="pairs timed for the per-sentence loop")
    parser.add_argument("--quality-budget", type=float, default=300.0, help="seconds of training per contender")
    parser.add_argument("--skip-quality", action="store_true", help="only the timings")
    parser.add_argument("--batch-sweep", default="32,64,128,256,512", help="batch sizes timed for the project")
    parser.add_argument("--out", type=Path, default=None, help="write benchmark.json and benchmark.md here")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    H = args.hidden_size
    started = time.perf_counter()
    report = {"command": "python -m benchmarks.run " + " ".join(argv if argv is not None else sys.argv[1:])}
    report["machine_before"] = machine()
    report["threads"] = args.threads
    print(json.dumps({"machine": report["machine_before"], "threads": args.threads}), flush=True)

    pairs = load_pairs()
    train_pairs, test_pairs = split_pairs(pairs, "by_french")  # the split of the committed results/performance
    vocabs = build_vocabularies(train_pairs)
    train_set = TranslationDataset(train_pairs, vocabs)
    vocab_sizes = (len(vocabs.source), len(vocabs.target))
    V = vocab_sizes[1]
    report["data"] = {
        "pairs": len(pairs),
        "train": len(train_pairs),
        "test": len(test_pairs),
        "V_src": vocab_sizes[0],
        "V": V,
    }

    peak = sgemm_peak(args.threads)
    report["sgemm_peak"] = peak
    print(json.dumps({"sgemm_peak": peak}), flush=True)

    useful = epoch_flops(train_set.examples, H, V)
    tutorial_executed = epoch_flops(train_set.examples, H, V, padded_to=MAX_LENGTH, keys_every_step=True)
    report["flop_model"] = {
        "useful_gflop_per_epoch": useful / 1e9,
        "useful_mflop_per_pair": useful / len(train_set) / 1e6,
        "tutorial_executed_mflop_per_pair": tutorial_executed / len(train_set) / 1e6,
    }
    print(json.dumps({"flop_model": report["flop_model"]}), flush=True)

    contenders = {}
    contenders["per_sentence"] = time_per_sentence(train_set.examples, vocab_sizes, H, args.per_sentence_pairs)
    contenders["tutorial"] = time_tutorial(train_set.examples, vocab_sizes, H)
    contenders["project"] = time_project(train_set, vocab_sizes, H, PROJECT)
    for name, row in contenders.items():
        row["contender"] = name
        row["useful_gflops_per_s"] = useful / row["epoch_s"] / 1e9
        row["useful_fraction_of_sgemm_peak"] = row["useful_gflops_per_s"] / peak["gflops"]
        print(json.dumps(row), flush=True)
    contenders["tutorial"]["executed_gflops_per_s"] = tutorial_executed / contenders["tutorial"]["epoch_s"] / 1e9
    ratios = {
        "project_vs_tutorial": contenders["tutorial"]["epoch_s"] / contenders["project"]["epoch_s"],
        "project_vs_per_sentence": contenders["per_sentence"]["epoch_s"] / contenders["project"]["epoch_s"],
        "tutorial_vs_per_sentence": contenders["per_sentence"]["epoch_s"] / contenders["tutorial"]["epoch_s"],
    }
    report["contenders"], report["ratios"] = contenders, ratios
    report["project_settings"] = PROJECT
    print(json.dumps({"ratios": ratios}), flush=True)
    sizes = [int(x) for x in args.batch_sweep.split(",") if x]
    report["batch_sweep"] = batch_sweep(train_set, vocab_sizes, H, sizes) if sizes else []
    if report["batch_sweep"]:
        fastest = min(report["batch_sweep"], key=lambda row: row["epoch_s"])
        ratios["fastest_batch_size"] = fastest["batch_size"]
        ratios["fastest_batch_vs_tutorial"] = contenders["tutorial"]["epoch_s"] / fastest["epoch_s"]
        ratios["fastest_batch_vs_per_sentence"] = contenders["per_sentence"]["epoch_s"] / fastest["epoch_s"]
        ratios["fastest_batch_fraction_of_sgemm_peak"] = useful / fastest["epoch_s"] / 1e9 / peak["gflops"]
        print(json.dumps({"ratios": ratios}), flush=True)

    if not args.skip_quality:
        budget = args.quality_budget
        marks = [t for t in MARKS if t <= budget] or [budget]
        epochs = max(1, int(budget / contenders["project"]["epoch_s"]))
        quality = {"tutorial": tutorial_quality(train_set, test_pairs, vocabs, marks, H)}
        print(json.dumps({"quality_tutorial": quality["tutorial"]}), flush=True)
        config = TrainConfig(hidden_size=H, epochs=epochs, **PROJECT)
        quality["project"], model = project_quality(config, train_set, test_pairs, vocabs, marks, beam_size=5)
        print(json.dumps({"quality_project": quality["project"], "epochs_planned": epochs}), flush=True)
        report["quality"], report["quality_epochs_planned"] = quality, epochs
        report["decoding"] = decoding(model, vocabs, test_pairs)  # the project's model after the budget

    report["machine_after"] = machine()
    report["wall_s"] = time.perf_counter() - started
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "benchmark.json").write_text(json.dumps(report, indent=2) + "\n")
        (args.out / "benchmark.md").write_text(markdown(report))
    return 0


def markdown(report: dict) -> str:
    """The tables of benchmark.md."""
    m, c, r = report["machine_before"], report["contenders"], report["ratios"]
    lines = [
        "# Training speed and quality at equal time (generated by benchmarks/run.py)",
        "",
        f"Command: `{report['command']}`",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores, torch {m['torch']}, {report['threads']} thread(s) per contender; "
        f"load average before {m['load_average_1_5_15']}, after {report['machine_after']['load_average_1_5_15']}; "
        f"{'quiet' if m['quiet'] else 'not quiet by the rule 1-minute load < 0.5 and no other busy Python process'}"
        + (f" ({'; '.join(m['busy_python_processes'])})" if m["busy_python_processes"] else "")
        + ".",
        "",
        f"Data: {report['data']['train']} training pairs, {report['data']['test']} held-out, H = 256, "
        f"V = {report['data']['V']}. sgemm peak: {report['sgemm_peak']['gflops']:.1f} GFLOP/s "
        f"({report['sgemm_peak']['by_size']}).",
        "",
        "| contender | pairs/s | s/epoch | useful GFLOP/s | of sgemm peak |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, row in c.items():
        lines.append(
            f"| {name} | {row['pairs_per_s']:.0f} | {row['epoch_s']:.2f} | {row['useful_gflops_per_s']:.1f} | "
            f"{100 * row['useful_fraction_of_sgemm_peak']:.0f}% |"
        )
    fm = report["flop_model"]
    lines += [
        "",
        f"Ratios (epoch time): project vs tutorial {r['project_vs_tutorial']:.2f}x, "
        f"project vs per-sentence {r['project_vs_per_sentence']:.1f}x, tutorial vs per-sentence "
        f"{r['tutorial_vs_per_sentence']:.1f}x.",
        "",
        f"FLOP model: {fm['useful_mflop_per_pair']:.1f} MFLOP of useful work per pair "
        f"({fm['useful_gflop_per_epoch']:.0f} GFLOP per epoch); the tutorial loop executes "
        f"{fm['tutorial_executed_mflop_per_pair']:.1f} MFLOP per pair (padding to {MAX_LENGTH}, keys every step).",
        "",
    ]
    if report.get("batch_sweep"):
        lines += ["The project's trainer by batch size (one epoch each, after a warm-up epoch):", ""]
        lines += [
            "| batch size | pairs/s | s/epoch | vs tutorial | useful GFLOP/s |",
            "| --- | --- | --- | --- | --- |",
        ]
        useful = fm["useful_gflop_per_epoch"]
        for b in report["batch_sweep"]:
            speedup = c["tutorial"]["epoch_s"] / b["epoch_s"]
            cells = [str(b["batch_size"]), f"{b['pairs_per_s']:.0f}", f"{b['epoch_s']:.2f}", f"{speedup:.2f}x"]
            lines.append("| " + " | ".join([*cells, f"{useful / b['epoch_s']:.1f}"]) + " |")
        lines.append("")
    if "quality" in report:
        tutorial, project = report["quality"]["tutorial"], report["quality"]["project"]
        lines += [
            "Held-out BLEU (greedy, sacrebleu corpus BLEU, 566 pairs) after equal training time (evaluation excluded):",
            "",
            "| training s | tutorial-style peer | epochs | project | epochs |",
            "| --- | --- | --- | --- | --- |",
        ]
        for peer, ours in zip(tutorial, project, strict=True):
            peer_epochs = peer["steps"] * 32 / report["data"]["train"]
            cells = [f"{peer['at_s']:.0f}", f"{peer['bleu']:.2f}", f"{peer_epochs:.1f}", f"{ours['bleu']:.2f}"]
            lines.append("| " + " | ".join([*cells, f"{ours['epochs']:.1f}"]) + " |")
        lines += [
            "",
            f"The project's cosine schedule was planned for {report['quality_epochs_planned']} epochs; "
            f"beam search (k = 5, alpha = 1) on its final model: {project[-1]['beam_bleu']:.2f}.",
            "",
            "| decoder | held-out BLEU | sentences/s |",
            "| --- | --- | --- |",
        ]
        lines += [f"| {d['decoder']} | {d['bleu']:.2f} | {d['sentences_per_s']:.0f} |" for d in report["decoding"]]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
