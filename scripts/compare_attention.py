"""Train seq2seq (gru), Luong (dot, scaled dot, general) and Bahdanau translators with one budget and compare them.

Every model gets the same data (the tutorial's filtered Tatoeba pairs, training side of --split), the
same settings and the same wall-clock budget; each is then scored on the held-out pairs with corpus
BLEU (sacrebleu, with a 95% bootstrap interval) and exact match, and the pairs of models named in
`COMPARISONS` are compared seed by seed with sacrebleu's paired bootstrap test. A model is named
`decoder` or `decoder:score` (for example `luong:general`). Writes, under --out:

* `results.md` and `results.json`: the table (BLEU with intervals, exact match, training time,
  parameters, epochs), the paired comparisons, and the exact command;
* `results.ko.md`: the chapter's Korean tables, in plain terms: each model's mean BLEU over the seeds and
  its BLEU on every seed, each comparison's difference per seed and its verdict (`stats.verdict`);
* `statistics.ko.md`: the appendix's Korean tables, the evidence behind those verdicts: each seed's 95%
  bootstrap interval, the paired bootstrap p of every seed, and the 95% interval of the mean difference
  over the seeds;
* `logs/<model>-seed<n>.log`: the per-epoch log lines;
* `checkpoints/<model>/`: the trained attention models of the first seed (weights + JSON);
* `heatmap_<n>.png`: the attention of the Bahdanau and the dot-product model, side by side,
  for real held-out sentences (also copied to --figures for the site).

Example (the run committed in results/attention/):

    python scripts/compare_attention.py --epochs 30 --time-budget 240 --hidden-size 128 --batch-size 64 \
        --learning-rate 0.002 --seeds 0 1 2 --threads 1

The tables alone are rewritten from the committed results.json with

    python scripts/compare_attention.py --tables-only
"""

import argparse
import json
import os
import platform
import shlex
import shutil
import statistics
import sys
import time
from pathlib import Path

import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from tqdm.auto import tqdm

from seq2seq_attention.core.batching import collate
from seq2seq_attention.core.checkpoint import load_checkpoint, save_checkpoint
from seq2seq_attention.core.files import run_locked, write_json
from seq2seq_attention.core.plotting import label
from seq2seq_attention.model.search import greedy_decode
from seq2seq_attention.model.tokens import EOS_IDX, PAD_IDX
from seq2seq_attention.stats import Verdict, seed_interval, verdict
from seq2seq_attention.translation.corpus import SPLITS, load_pairs, split_pairs
from seq2seq_attention.translation.evaluate import compare, evaluate
from seq2seq_attention.translation.plotting import plot_attention, save_figure, sentence_attention
from seq2seq_attention.translation.train import TrainConfig, train

DECODER_NAMES = {
    "gru": "seq2seq (no attention)",
    "luong": "dot-product (Luong)",
    "luong:scaled_dot": "scaled dot-product (Luong)",
    "luong:general": "general (Luong)",
    "bahdanau": "additive (Bahdanau)",
}
"""The models compared, by key (`decoder` or `decoder:score`), with their labels."""
DRAWN = ("bahdanau", "luong")
"""The models whose attention the heatmaps show side by side."""
COMPARISONS = (
    ("gru", "luong"),
    ("gru", "bahdanau"),
    ("luong", "bahdanau"),
    ("luong", "luong:scaled_dot"),
    ("luong", "luong:general"),
)
"""(baseline, system) pairs tested with paired bootstrap resampling on each seed."""


def decoder_and_score(key: str) -> tuple[str, str | None]:
    decoder, _, score = key.partition(":")
    return decoder, score or None


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--decoders", nargs="+", default=list(DECODER_NAMES), choices=list(DECODER_NAMES))
    parser.add_argument("--split", default="by_english", choices=list(SPLITS), help="the held-out rule")
    parser.add_argument("--time-budget", type=float, default=240.0, help="training seconds per model")
    parser.add_argument("--epochs", type=int, default=30, help="at most this many epochs per model")
    parser.add_argument("--hidden-size", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--teacher-forcing-ratio", type=float, default=1.0)
    parser.add_argument(
        "--seeds", type=int, nargs="+", default=[0], help="one run per seed; checkpoints and heatmaps use the first"
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch.set_num_threads; on a shared 2-core machine 1 thread was ~30x faster than 2 (no spinning)",
    )
    parser.add_argument("--heatmaps", type=int, default=4, help="held-out sentences to draw")
    parser.add_argument("--out", type=Path, default=Path("results/attention"))
    parser.add_argument("--figures", type=Path, default=Path("docs/assets/figures/attention"))
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument(
        "--tables-only",
        action="store_true",
        help="only rewrite results.md, results.ko.md, statistics.ko.md and heatmaps.ko.md from results.json",
    )
    parser.add_argument(
        "--heatmaps-only", action="store_true", help="only redraw the heatmaps from the saved first-seed checkpoints"
    )
    return parser.parse_args(argv)


def heatmap_sentences(test_pairs, vocabs, count: int) -> list:
    """The first `count` distinct held-out French sentences (in split order) of 5-6 words, all in the vocabulary."""
    chosen, seen = [], set()
    for pair in test_pairs:
        words = pair.source.split()
        if pair.source not in seen and 5 <= len(words) <= 6 and all(w in vocabs.source.word2index for w in words):
            chosen.append(pair)
            seen.add(pair.source)
        if len(chosen) == count:
            break
    return chosen


@torch.no_grad()
def attention_statistics(result, test_pairs) -> dict | None:
    """How peaked the greedy-decoding attention is on the held-out sources: mean largest weight and entropy."""
    if result.model.decoder.attention is None:
        return None
    sources = sorted({pair.source for pair in test_pairs})
    encoded = [result.vocabs.source.encode(source, unknown="unk") for source in sources]
    batch = collate([(indices, [EOS_IDX]) for indices in encoded])
    tokens, attentions = greedy_decode(result.model, batch.source, batch.lengths)  # (B, T), (B, T, S)
    real = tokens != PAD_IDX  # (B, T): steps up to and with <eos>
    rows = attentions[real]  # (N, S): one distribution per generated word
    entropy = -(rows * rows.clamp_min(1e-12).log()).sum(-1)  # (N,)
    return {
        "words": int(real.sum()),
        "mean_max_weight": round(rows.max(-1).values.mean().item(), 4),
        "mean_entropy_nats": round(entropy.mean().item(), 4),
    }


def summarise(decoder: str, runs: list[dict]) -> dict:
    """One table row: the mean (and spread) over the seeds' runs of one model."""

    def mean(key: str) -> float:
        return statistics.fmean(r[key] for r in runs)

    def spread(key: str) -> float:
        return statistics.stdev(r[key] for r in runs) if len(runs) > 1 else 0.0

    row = {
        "decoder": decoder,
        "model": DECODER_NAMES[decoder],
        "score": runs[0]["score"],
        "parameters": runs[0]["parameters"],
        "seeds": [r["seed"] for r in runs],
        "epochs": [r["epochs"] for r in runs],
        "train_seconds": round(mean("train_seconds"), 1),
        "bleu": round(mean("bleu"), 2),
        "bleu_std": round(spread("bleu"), 2),
        "bleu_per_seed": [r["bleu"] for r in runs],
        "bleu_interval_per_seed": [r.get("bleu_interval") for r in runs],
        "exact_match": round(mean("exact_match"), 4),
        "exact_match_std": round(spread("exact_match"), 4),
        "bleu_signature": runs[0]["bleu_signature"],
    }
    if runs[0]["attention"] is not None:
        row["mean_max_weight"] = round(statistics.fmean(r["attention"]["mean_max_weight"] for r in runs), 3)
    return row


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return run_locked(args.out, "--out", "compare_attention.py", lambda: run(args))


def run(args: argparse.Namespace) -> int:
    if args.tables_only or args.heatmaps_only:
        document = json.loads((args.out / "results.json").read_text(encoding="utf-8"))
        if args.heatmaps_only:  # redraw from the saved first-seed checkpoints
            models = {}
            for name in DRAWN:
                loaded = load_checkpoint(args.out / "checkpoints" / name.replace(":", "-"))
                models[name] = (loaded.model, loaded.vocabs)
            test_pairs = split_pairs(load_pairs(), document["data"]["split"])[1]
            document["heatmaps"] = draw_heatmaps(models, test_pairs, args)
            write_json(args.out / "results.json", document)
        write_tables(args.out, document)
        return 0
    torch.set_num_threads(args.threads)
    command = "python scripts/compare_attention.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "logs").mkdir(exist_ok=True)
    load_at_start = os.getloadavg()

    pairs = load_pairs()
    train_pairs, test_pairs = split_pairs(pairs, args.split)
    print(f"{len(pairs)} pairs: {len(train_pairs)} train, {len(test_pairs)} held out", flush=True)

    runs, models, evaluations = [], {}, {}
    jobs = [(seed, decoder) for seed in args.seeds for decoder in args.decoders]
    for seed, decoder in tqdm(jobs, desc="models", unit="model", disable=args.no_progress):
        config = TrainConfig(
            decoder=decoder_and_score(decoder)[0],
            score=decoder_and_score(decoder)[1],
            split=args.split,
            hidden_size=args.hidden_size,
            batch_size=args.batch_size,
            learning_rate=args.learning_rate,
            epochs=args.epochs,
            teacher_forcing_ratio=args.teacher_forcing_ratio,
            seed=seed,
            time_budget=args.time_budget,
        )
        lines: list[str] = []

        def log(line: str, lines=lines, tag=f"{decoder} seed {seed}") -> None:
            lines.append(line)
            tqdm.write(f"[{tag}] {line}")

        tic = time.perf_counter()
        result = train(config, pairs=pairs, progress=not args.no_progress, log=log, measure_bleu=False)
        train_seconds = time.perf_counter() - tic
        tic = time.perf_counter()
        scores = evaluate(result.model, result.vocabs, test_pairs, split=args.split)
        evaluations[decoder, seed] = scores
        eval_seconds = time.perf_counter() - tic
        (args.out / "logs" / f"{decoder.replace(':', '-')}-seed{seed}.log").write_text(
            "\n".join(lines) + "\n", encoding="utf-8"
        )
        run = {
            "decoder": decoder,
            "score": result.model.config["score"],
            "seed": seed,
            "parameters": sum(p.numel() for p in result.model.parameters()),
            "epochs": len(result.history),
            "train_seconds": round(train_seconds, 1),
            "eval_seconds": round(eval_seconds, 1),
            "final_train_loss": round(result.history[-1]["loss"], 4),
            "final_heldout_loss": None if (held_out := result.history[-1]["test_loss"]) is None else round(held_out, 4),
            "bleu": round(scores.bleu, 2),
            "bleu_interval": [round(scores.bleu_low, 2), round(scores.bleu_high, 2)],
            "exact_match": round(scores.exact_match, 4),
            "bleu_signature": scores.signature,
            "attention": attention_statistics(result, test_pairs),
            "samples": [
                {"source": s, "reference": r, "hypothesis": h}
                for s, r, h in list(zip(scores.sources, scores.references, scores.hypotheses, strict=True))[:8]
            ],
        }
        runs.append(run)
        tqdm.write(
            f"[{decoder} seed {seed}] BLEU {run['bleu']:.2f}, exact match {run['exact_match']:.3f}, "
            f"{run['epochs']} epochs in {run['train_seconds']:.0f} s, {run['parameters']:,} parameters"
        )
        if seed == args.seeds[0]:
            models[decoder] = result
            if result.model.decoder.attention is not None:
                training = {"config": vars(config), "epoch": run["epochs"], "history": result.history}
                training["evaluation"] = {k: run[k] for k in ("bleu", "bleu_interval", "exact_match", "bleu_signature")}
                directory = args.out / "checkpoints" / decoder.replace(":", "-")
                save_checkpoint(directory, result.model, result.vocabs, training=training)
    rows = [summarise(decoder, [r for r in runs if r["decoder"] == decoder]) for decoder in args.decoders]
    comparisons = paired_comparisons(evaluations, args.seeds)

    heatmaps = draw_heatmaps({name: (r.model, r.vocabs) for name, r in models.items()}, test_pairs, args)

    document = {
        "command": command,
        "machine": (
            f"shared, loaded 2-core CPU machine ({platform.machine()}, load average {load_at_start[0]:.1f} at start); "
            f"torch {torch.__version__}, {torch.get_num_threads()} threads"
        ),
        "data": {"pairs": len(pairs), "train": len(train_pairs), "held_out": len(test_pairs), "split": args.split},
        "settings": {k: v for k, v in vars(args).items() if k not in ("out", "figures", "no_progress")},
        "models": rows,
        "comparisons": comparisons,
        "runs": runs,
        "heatmaps": heatmaps,
    }
    write_json(args.out / "results.json", document)
    write_tables(args.out, document)
    print(markdown(document))
    return 0


def draw_heatmaps(models: dict, test_pairs, args: argparse.Namespace) -> list[dict]:
    """The attention of the `DRAWN` models, side by side, for the first held-out sentences that fit."""
    heatmaps = []
    drawn = [d for d in DRAWN if d in models]
    if not drawn:
        return heatmaps
    vocabs = models[drawn[0]][1]  # every model built its vocabularies from the same training split
    args.figures.mkdir(parents=True, exist_ok=True)
    for number, pair in enumerate(heatmap_sentences(test_pairs, vocabs, args.heatmaps), start=1):
        figure = Figure(figsize=(5.2 * len(drawn), 4.6), layout="constrained")
        FigureCanvasAgg(figure)
        figure.get_layout_engine().set(wspace=0.12)  # room for the next panel's axis label beside a colour bar
        entry = {"source": pair.source, "reference": pair.target, "file": f"heatmap_{number}.png"}
        for ax, decoder in zip(figure.subplots(1, len(drawn), squeeze=False)[0], drawn, strict=True):
            model, model_vocabs = models[decoder]
            source_words, output_words, weights = sentence_attention(model, model_vocabs, pair.source)
            title = label(KOREAN_NAMES[decoder], DECODER_NAMES[decoder])[0]
            plot_attention(weights, source_words, output_words, title=title, ax=ax)
            entry[decoder] = {"translation": " ".join(output_words), "weights": weights.tolist()}
        path = save_figure(figure, args.out / entry["file"])
        shutil.copyfile(path, args.figures / entry["file"])
        heatmaps.append(entry)
    return heatmaps


def write_tables(out: Path, document: dict) -> None:
    (out / "results.md").write_text(markdown(document), encoding="utf-8")
    (out / "results.ko.md").write_text(korean(document), encoding="utf-8")
    (out / "statistics.ko.md").write_text(korean_statistics(document), encoding="utf-8")
    (out / "heatmaps.ko.md").write_text(korean_heatmaps(document), encoding="utf-8")


def korean_heatmaps(document: dict) -> str:
    """The translations of the heatmap sentences (the heatmaps page's table), in Korean."""
    drawn = [d for d in DRAWN if document["heatmaps"] and d in document["heatmaps"][0]]
    lines = ["| 그림 | 프랑스어 | 정답 | " + " | ".join(KOREAN_NAMES[d] for d in drawn) + " |"]
    lines.append("|---:|---|---|" + "---|" * len(drawn))
    for number, entry in enumerate(document["heatmaps"], start=1):
        outputs = [entry[d]["translation"].removesuffix(" <eos>") for d in drawn]
        lines.append(f"| {number} | {entry['source']} | {entry['reference']} | " + " | ".join(outputs) + " |")
    return "\n".join(lines) + "\n"


KOREAN_NAMES = {
    "gru": "seq2seq (어텐션 없음)",
    "luong": "내적 (루옹)",
    "luong:scaled_dot": "크기 조정 내적 (루옹)",
    "luong:general": "general (루옹)",
    "bahdanau": "덧셈형 (바다나우)",
}


def korean_verdict(row: dict) -> str:
    """The comparison's `verdict` in Korean, with the seeds whose paired bootstrap agrees."""
    decided = seed_verdict(row)
    return f"{decided.korean} (p < 0.05인 시드 {decided.agreeing_seeds}/{decided.seeds})"


def signed(values: list[float]) -> str:
    return ", ".join(f"{v:+.2f}" for v in values)


def korean(document: dict) -> str:
    """The results page's tables in Korean, in plain terms: each model's mean BLEU over the seeds and its BLEU on
    every seed, then each comparison's BLEU difference per seed, their mean and the verdict (`stats.verdict`).
    The evidence behind a verdict (intervals, p-values) is `korean_statistics`'s, for the appendix."""
    seeds = document["settings"]["seeds"]
    seed_names = ", ".join(map(str, seeds))
    lines = [
        f"| 모델 | 점수 | 매개변수 | 평가용 BLEU (시드 평균) | 시드 {seed_names}의 BLEU "
        "| 정확히 일치 | 평균 최대 가중치 |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for row in document["models"]:
        peak = f"{row['mean_max_weight']:.3f}" if "mean_max_weight" in row else "-"
        per_seed = ", ".join(f"{b:.2f}" for b in row["bleu_per_seed"])
        lines.append(
            f"| {KOREAN_NAMES[row['decoder']]} | {'`' + row['score'] + '`' if row['score'] else '-'} "
            f"| {row['parameters']:,} | {row['bleu']:.2f} | {per_seed} | {row['exact_match']:.3f} | {peak} |"
        )
    lines += [
        "",
        f"| 기준 | 비교 대상 | 시드 {seed_names}의 BLEU 차이 | 차이의 평균 | 판정 |",
        "|---|---|---|---:|---|",
    ]
    for row in document.get("comparisons", []):
        decided = seed_verdict(row)
        lines.append(
            f"| {KOREAN_NAMES[row['baseline']]} | {KOREAN_NAMES[row['system']]} "
            f"| {signed(row['difference_per_seed'])} | {decided.mean:+.2f} | {decided.korean} |"
        )
    data = document["data"]
    epochs = sorted({e for row in document["models"] for e in row["epochs"]})
    lines += [
        "",
        f"시드 {seed_names}에서 한 번씩 학습했고, 모든 실행이 {'/'.join(map(str, epochs))} 에폭을 마쳤습니다. "
        f"평가용 분할 `{data['split']}`: {data['held_out']}쌍, 학습 {data['train']}쌍. "
        "차이는 비교 대상에서 기준을 뺀 BLEU입니다. 판정(나아짐, 나빠짐, 동률)은 `evaluate.verdict`가 내립니다.",
        "",
    ]
    return "\n".join(lines)


def korean_statistics(document: dict) -> str:
    """The appendix's tables in Korean: each model's 95% bootstrap interval on every seed, then, for each
    comparison, the two pieces of evidence `stats.verdict` weighs (the 95% interval of the mean difference
    over the seeds, the paired bootstrap p of every seed) and its verdict."""
    seeds = document["settings"]["seeds"]
    lines = [
        "| 모델 | " + " | ".join(f"시드 {seed}: BLEU (95% 구간)" for seed in seeds) + " |",
        "|---|" + "---:|" * len(seeds),
    ]
    for row in document["models"]:
        cells = [
            f"{bleu:.2f} ({low:.1f}–{high:.1f})"
            for bleu, (low, high) in zip(row["bleu_per_seed"], row["bleu_interval_per_seed"], strict=True)
        ]
        lines.append(f"| {KOREAN_NAMES[row['decoder']]} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "| 기준 | 비교 대상 | 시드별 BLEU 차이 | 차이 평균의 95% 구간 | 시드별 p | 판정 |",
        "|---|---|---|---|---|---|",
    ]
    for row in document.get("comparisons", []):
        mean, low, high = seed_interval(row["difference_per_seed"])
        p_values = ", ".join(f"{p:.3f}" for p in row["p_value_per_seed"])
        lines.append(
            f"| {KOREAN_NAMES[row['baseline']]} | {KOREAN_NAMES[row['system']]} "
            f"| {signed(row['difference_per_seed'])} | {mean:+.2f} ({low:+.2f} ~ {high:+.2f}) | {p_values} "
            f"| {korean_verdict(row)} |"
        )
    lines += [
        "",
        f"시드 {', '.join(map(str, seeds))}. BLEU의 구간은 평가용 문장을 1,000번 복원 추출해 얻은 95% bootstrap 구간, "
        "p는 시드마다 같은 평가용 문장에서 두 모델을 견준 짝지은 bootstrap(sacrebleu, 1,000번 재추출)의 값, "
        "차이 평균의 구간은 시드별 차이에 대한 95% t-구간입니다.",
        "",
    ]
    return "\n".join(lines)


def paired_comparisons(evaluations: dict, seeds: list[int]) -> list[dict]:
    """For each pair of `COMPARISONS` that was trained: the paired bootstrap test on every seed."""
    rows = []
    for baseline, system in COMPARISONS:
        if not all((name, seed) in evaluations for name in (baseline, system) for seed in seeds):
            continue
        tests = [compare(evaluations[baseline, seed], evaluations[system, seed]) for seed in seeds]
        rows.append(
            {
                "baseline": baseline,
                "system": system,
                "difference_per_seed": [round(t.difference, 2) for t in tests],
                "p_value_per_seed": [round(t.p_value, 4) for t in tests],
                "significant_seeds": sum(t.significant for t in tests),
                "seeds": len(tests),
            }
        )
    return rows


def seed_verdict(row: dict) -> Verdict:
    """The one rule (`stats.verdict`) on a comparison row: its differences and p-values per seed."""
    return verdict(row["difference_per_seed"], row["p_value_per_seed"])


def verdict_text(row: dict) -> str:
    """A comparison in words: `stats.verdict`'s outcome, with the seeds whose paired bootstrap agrees."""
    decided = seed_verdict(row)
    return f"{decided.outcome} (p < 0.05 in {decided.agreeing_seeds} of {decided.seeds} seeds)"


def markdown(document: dict) -> str:
    seeds = document["settings"]["seeds"]
    spread = len(seeds) > 1
    lines = [
        "| model | score | parameters | epochs | training time (s) | held-out BLEU | 95% interval, seed "
        f"{seeds[0]} | exact match | mean max weight |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in document["models"]:
        bleu = f"{row['bleu']:.2f}" + (f" ± {row['bleu_std']:.2f}" if spread else "")
        exact = f"{row['exact_match']:.3f}" + (f" ± {row['exact_match_std']:.3f}" if spread else "")
        epochs = "/".join(str(e) for e in sorted(set(row["epochs"])))
        peak = f"{row['mean_max_weight']:.3f}" if "mean_max_weight" in row else "-"
        interval = row["bleu_interval_per_seed"][0]
        shown = f"{interval[0]:.1f} – {interval[1]:.1f}" if interval else "-"
        lines.append(
            f"| {row['model']} | {row['score'] or '-'} | {row['parameters']:,} | {epochs} | "
            f"{row['train_seconds']:.0f} | {bleu} | {shown} | {exact} | {peak} |"
        )
    data = document["data"]
    per_seed = "; ".join(
        f"{row['decoder']} " + ", ".join(f"{b:.2f}" for b in row["bleu_per_seed"]) for row in document["models"]
    )
    lines += [
        "",
        f"Mean over seeds {', '.join(map(str, seeds))}" + (" (± sample standard deviation)" if spread else "") + ".",
        f"BLEU per seed: {per_seed}.",
        f"Held-out split `{data['split']}`: {data['held_out']} pairs, trained on {data['train']}.",
        f"BLEU: sacrebleu corpus BLEU, `{document['models'][0]['bleu_signature']}`.",
        "Mean max weight: the largest attention weight of each generated word, averaged over the greedy "
        "translations of the distinct held-out sources (1 = all weight on one source word).",
        f"Timings: {document['machine']}.",
        "",
        "Paired bootstrap resampling (sacrebleu, 1,000 resamples) on each seed; the verdict is `evaluate.verdict`: "
        "the 95% interval of the mean difference over seeds clear of zero and p < 0.05 on most seeds, else a tie:",
        "",
        "| baseline | system | BLEU difference per seed | p per seed | verdict |",
        "|---|---|---|---|---|",
        *(
            f"| {row['baseline']} | {row['system']} | {', '.join(f'{d:+.2f}' for d in row['difference_per_seed'])} "
            f"| {', '.join(f'{p:.3f}' for p in row['p_value_per_seed'])} | {verdict_text(row)} |"
            for row in document.get("comparisons", [])
        ),
        "",
        "Command:",
        "",
        "```bash",
        document["command"],
        "```",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
