"""Epoch time of this checkout against another one, measured alternately in one run (an A/B speed check).

    git worktree add /tmp/baseline <commit>
    python -m benchmarks.epoch_ab --baseline /tmp/baseline --rounds 5

Each round times the project's trainer (`benchmarks.run.time_project`: Bahdanau, batch 64, H=256,
1 thread, the best of two epochs after a warm-up epoch) in a fresh process for each checkout, on the
by_french training split that both understand; prints one JSON line per run and the median ratio.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROBE = """
import json, sys, torch
torch.set_num_threads(1)
from benchmarks.run import PROJECT, time_project
try:
    from seq2seq_attention.translation.corpus import TranslationDataset, build_vocabularies, load_pairs, split_pairs
    train_pairs, _ = split_pairs(load_pairs(), "by_french")
except ImportError:  # a checkout from before the package was split by concern
    from seq2seq_attention.data import TranslationDataset, build_vocabularies, load_pairs, split_pairs
    train_pairs, _ = split_pairs(load_pairs())
vocabs = build_vocabularies(train_pairs)
result = time_project(TranslationDataset(train_pairs, vocabs), (len(vocabs.source), len(vocabs.target)), 256, PROJECT)
print(json.dumps({"epoch_s": result["epoch_s"]}))
"""


def epoch_seconds(tree: Path) -> float:
    env = {**os.environ, "PYTHONPATH": f"{tree / 'src'}{os.pathsep}{tree}"}
    output = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=tree, env=env, capture_output=True, text=True, check=True
    )
    return json.loads(output.stdout.strip().splitlines()[-1])["epoch_s"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, required=True, help="another checkout of the repository")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    times: dict[str, list[float]] = {"baseline": [], "this": []}
    for _ in range(args.rounds):
        for name, tree in (("baseline", args.baseline.resolve()), ("this", ROOT)):
            times[name].append(epoch_seconds(tree))
            print(json.dumps({"tree": name, "epoch_s": round(times[name][-1], 3)}), flush=True)
    ratio = statistics.median(times["this"]) / statistics.median(times["baseline"])
    print(
        json.dumps(
            {"median_s": {k: round(statistics.median(v), 3) for k, v in times.items()}, "ratio": round(ratio, 4)}
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
