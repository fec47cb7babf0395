"""The trainer's pairs/s against the tutorial loop, for this checkout and another, measured alternately in one run.

    git worktree add /tmp/baseline <commit>      # or: git archive <commit> | tar -x -C /tmp/baseline
    python -m benchmarks.trainer_ab --baseline /tmp/baseline --rounds 5 --out results/performance/trainer_ab.json

Each round runs, each in a fresh process on one thread: the tutorial's training loop
(`benchmarks.tutorial_loops.TutorialTrainer`, batch 64, padded to `MAX_LENGTH`), the baseline
checkout's trainer and this checkout's trainer (`train_epoch` with `benchmarks.run.PROJECT`: Bahdanau,
batch 64, H=256, length buckets, forward + backward + Adam), each the best of two epochs after a
warm-up, all on the main split's training pairs. Time is the process's CPU time (`process_time`):
on a shared machine it counts this process's work, not the waiting. The tutorial loop is the
yardstick: the machine's speed changes between rounds, the ratio trainer / tutorial of one round
much less. Prints one JSON line per run
and, at the end, the median ratio of each checkout and their quotient (this / baseline).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from benchmarks.report import ab_result, emit

ROOT = Path(__file__).resolve().parent.parent
SETUP = """
import json, time, torch
torch.set_num_threads(1)
from seq2seq_attention.translation.corpus import TranslationDataset, build_vocabularies, load_pairs, split_pairs
train_pairs, _ = split_pairs(load_pairs())
vocabs = build_vocabularies(train_pairs)
dataset = TranslationDataset(train_pairs, vocabs)
sizes = (len(vocabs.source), len(vocabs.target))
"""
TRAINER = (
    SETUP
    + """
from benchmarks.run import PROJECT
from seq2seq_attention.core.training import make_optimizer
from seq2seq_attention.translation.corpus import make_loader
from seq2seq_attention import build_model
from seq2seq_attention.translation.train import TrainConfig, make_criterion, train_epoch
config = TrainConfig(hidden_size=256, epochs=3, **PROJECT)
torch.manual_seed(0)
model = build_model(config.decoder, *sizes, 256, config.dropout)
loader = make_loader(dataset, config.batch_size, seed=0)
optimizer = make_optimizer(model, config.learning_rate, config.weight_decay)
criterion = make_criterion(config)
train_epoch(model, loader, optimizer, criterion, config, 1)  # warm-up
best = float("inf")
for epoch in (2, 3):
    tic = time.process_time()
    train_epoch(model, loader, optimizer, criterion, config, epoch)
    best = min(best, time.process_time() - tic)
print(json.dumps({"pairs_per_s": len(dataset) / best}))
"""
)
TUTORIAL = (
    SETUP
    + """
from benchmarks.tutorial_loops import TutorialTrainer
trainer = TutorialTrainer(dataset.examples, *sizes, hidden_size=256, batch_size=64)
for indices in trainer.batches()[:5]:  # warm-up
    trainer.step(indices)
best = float("inf")
for _ in range(2):
    tic = time.process_time()
    trainer.epoch()
    best = min(best, time.process_time() - tic)
print(json.dumps({"pairs_per_s": len(dataset) / best}))
"""
)


def pairs_per_second(tree: Path, probe: str) -> float:
    env = {**os.environ, "PYTHONPATH": f"{tree / 'src'}{os.pathsep}{tree}"}
    output = subprocess.run(
        [sys.executable, "-c", probe], cwd=tree, env=env, capture_output=True, text=True, check=True
    )
    return json.loads(output.stdout.strip().splitlines()[-1])["pairs_per_s"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, required=True, help="another checkout of the repository")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, help="write the runs and medians here as JSON")
    args = parser.parse_args(argv)
    runs = {"tutorial": (ROOT, TUTORIAL), "baseline": (args.baseline.resolve(), TRAINER), "this": (ROOT, TRAINER)}
    rates: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, (tree, probe) in runs.items():
            rates[name].append(pairs_per_second(tree, probe))
            print(json.dumps({"run": name, "pairs_per_s": round(rates[name][-1], 1)}), flush=True)
    ratios = {
        name: [trainer / tutorial for trainer, tutorial in zip(rates[name], rates["tutorial"], strict=True)]
        for name in ("baseline", "this")
    }
    medians = {name: statistics.median(values) for name, values in ratios.items()}
    result = ab_result(
        "benchmarks.trainer_ab",
        argv,
        args.rounds,
        rates,
        trainer_over_tutorial={name: [round(x, 4) for x in values] for name, values in ratios.items()},
        median_trainer_over_tutorial={name: round(value, 4) for name, value in medians.items()},
        this_over_baseline=round(medians["this"] / medians["baseline"], 4),
    )
    return emit(result, args.out)


if __name__ == "__main__":
    raise SystemExit(main())
