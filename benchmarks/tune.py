"""Train the project's Bahdanau model with several settings for a fixed wall-clock budget each.

    python -m benchmarks.tune BUDGET EVAL_AT SETTINGS_JSON [SETTINGS_JSON ...]

e.g. ``python -m benchmarks.tune 60 30,60 '{"batch_size": 64, "learning_rate": 0.002, "epochs": 40}'``.
Prints one JSON line per setting: held-out greedy BLEU at each time of EVAL_AT (training clock,
evaluation excluded) and beam-search BLEU (k = 5) at the end. One thread. How the settings in
`benchmarks.run.PROJECT` were chosen; the lines are in results/performance/tuning.jsonl.
"""

import json
import sys

import torch

from seq2seq_attention.translation.corpus import TranslationDataset, build_vocabularies, load_pairs, split_pairs
from seq2seq_attention.translation.train import TrainConfig

from .quality import project_quality


def main(argv: list[str]) -> int:
    torch.set_num_threads(1)
    train_pairs, test_pairs = split_pairs(load_pairs(), "by_french")  # the split of results/performance/tuning.jsonl
    vocabs = build_vocabularies(train_pairs)
    train_set = TranslationDataset(train_pairs, vocabs)
    budget, eval_at = float(argv[0]), [float(x) for x in argv[1].split(",")]
    for spec in argv[2:]:
        settings = json.loads(spec)
        config = TrainConfig(**{"decoder": "bahdanau", "hidden_size": 256, **settings})
        results, _ = project_quality(config, train_set, test_pairs, vocabs, [t for t in eval_at if t <= budget], 5)
        print(json.dumps({"budget_s": budget, "settings": settings, "results": results}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
