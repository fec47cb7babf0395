"""Held-out BLEU with 95% intervals, paired comparisons, samples and loss curves of `scripts/train_seq2seq.sh`.

Usage (after the training script):

    python scripts/seq2seq_report.py
    python scripts/seq2seq_report.py --tables-only   # rewrite the tables from the committed metrics.json
    python scripts/seq2seq_report.py --figure-only   # redraw the loss figure from committed files only

Writes `results/seq2seq/metrics.json`, `results/seq2seq/README.md`, `results/seq2seq/samples.md`,
`results/seq2seq/loss_curve.png` and a copy of the figure in `docs/assets/figures/`. Each comparison's
verdict is `stats.verdict` (one seed: the paired bootstrap p decides).

The loss figure (`docs/assets/figures/seq2seq_loss.png`) has Korean labels when a Hangul font is installed
(`core.plotting.hangul_font`), English ones otherwise. `--figure-only` draws it without the uncommitted
checkpoints under `runs/`: a run's history comes from its checkpoint where that is committed
(`src/seq2seq_attention/pretrained/*`), else from its committed training log (`results/seq2seq/<run>.log`,
whose epoch lines carry the same losses to four decimals); which runs are on the main split is read from
the committed `metrics.json`. The committed figure was drawn with

    python scripts/seq2seq_report.py --figure-only
"""

import argparse
import json
import math
import platform
import re
import shutil
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402

from seq2seq_attention.core.checkpoint import load_checkpoint  # noqa: E402
from seq2seq_attention.core.files import run_locked, write_json  # noqa: E402
from seq2seq_attention.core.plotting import hangul_font  # noqa: E402
from seq2seq_attention.core.plotting import label as text_label  # noqa: E402
from seq2seq_attention.stats import verdict  # noqa: E402
from seq2seq_attention.translation.corpus import SPLITS, load_pairs, split_pairs, target_overlap  # noqa: E402
from seq2seq_attention.translation.evaluate import compare, evaluate  # noqa: E402
from seq2seq_attention.translation.translator import translate  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "seq2seq"
FIGURE = ROOT / "docs" / "assets" / "figures" / "seq2seq_loss.png"
RUNS = {
    "gru": ("src/seq2seq_attention/pretrained/gru", "GRU seq2seq, teacher forcing"),
    "gru-mixed": ("runs/seq2seq/gru-mixed", "GRU seq2seq, mixed training (ratio 0.5)"),
    "gru-scheduled": ("runs/seq2seq/gru-scheduled", "GRU seq2seq, scheduled sampling (inverse sigmoid, k = 10)"),
    "bahdanau": ("src/seq2seq_attention/pretrained/bahdanau", "Bahdanau attention, teacher forcing"),
    "bahdanau-bi": ("src/seq2seq_attention/pretrained/bahdanau-bi", "Bahdanau attention, bidirectional encoder"),
    "gru-by_french": ("runs/seq2seq/gru-by_french", "GRU seq2seq, teacher forcing, by_french split"),
    "bahdanau-by_french": ("runs/seq2seq/bahdanau-by_french", "Bahdanau attention, by_french split"),
}
COMPARISONS = (
    ("gru", "bahdanau", "greedy"),
    ("bahdanau", "bahdanau-bi", "greedy"),
    ("gru", "gru-mixed", "greedy"),
    ("gru", "gru-scheduled", "greedy"),
    ("bahdanau", "bahdanau", "beam"),
    ("gru-by_french", "bahdanau-by_french", "greedy"),
)
"""(baseline, system, how): paired bootstrap tests; "beam" compares the run's greedy translations
with its beam-search ones on the same pairs."""
LEGACY_SPLIT = "by_french"  # a checkpoint saved before `split` existed was trained on this split
TRAIN_COMMAND = "scripts/train_seq2seq.sh"  # `scripts/train_seq2seq.sh NAME` trains the run NAME alone
BEAM_SIZE = 5
REPORT_COMMAND = "python scripts/seq2seq_report.py"
EXTRA_SENTENCES = ["je suis fatigue .", "nous sommes en retard .", "elle est tres intelligente ."]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--tables-only",
        action="store_true",
        help="rewrite metrics.json's verdicts, README.md, bleu.ko.md and losses.ko.md from the committed metrics.json",
    )
    parser.add_argument(
        "--figure-only",
        action="store_true",
        help="redraw the loss figure from the committed checkpoints, training logs and metrics.json",
    )
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    return run_locked(OUT, "results folder", "seq2seq_report.py", lambda: run(args))


def run(args: argparse.Namespace) -> None:
    if args.tables_only:
        write_reports(json.loads((OUT / "metrics.json").read_text(encoding="utf-8")))
        return
    if args.figure_only:
        draw_losses(committed_curves(json.loads((OUT / "metrics.json").read_text(encoding="utf-8"))))
        return
    torch.set_num_threads(1)
    pairs = load_pairs()
    splits = {name: split_pairs(pairs, name) for name in SPLITS}
    test = splits["by_english"][1]
    samples = test[::58][:8]
    metrics = {
        "train_command": TRAIN_COMMAND,
        "report_command": REPORT_COMMAND,
        "machine": f"2-core CPU machine ({platform.processor() or platform.machine()}), torch {torch.__version__}, "
        "1 thread per run, two runs at a time",
        "splits": {
            name: {"train": len(train), "held_out": len(held_out), "target_overlap": target_overlap(train, held_out)}
            for name, (train, held_out) in splits.items()
        },
        "runs": {},
    }
    evaluations = {}
    sample_rows = []
    curves = []
    for name, (path, label) in RUNS.items():
        checkpoint = load_checkpoint(ROOT / path)
        config = checkpoint.training["config"]
        split = config.get("split", LEGACY_SPLIT)
        held_out = splits[split][1]
        scores = evaluate(checkpoint.model, checkpoint.vocabs, held_out, split=split)
        beam = evaluate(checkpoint.model, checkpoint.vocabs, held_out, split=split, beam_size=BEAM_SIZE)
        evaluations[name, "greedy"], evaluations[name, "beam"] = scores, beam
        history = checkpoint.training["history"]
        metrics["runs"][name] = {
            "label": label,
            "checkpoint": path,
            "train_command": f"{TRAIN_COMMAND} {name}",
            "log": f"results/seq2seq/{name}.log",
            "config": config,
            "split": split,
            "held_out_pairs": len(held_out),
            "epochs": len(history),
            "train_seconds": round(sum(h["seconds"] for h in history), 1),
            "final_loss": round(history[-1]["loss"], 4),
            **held_out_losses(history),
            "bleu": round(scores.bleu, 2),
            "bleu_interval": [round(scores.bleu_low, 2), round(scores.bleu_high, 2)],
            "exact_match": round(scores.exact_match, 4),
            f"bleu_beam{BEAM_SIZE}": round(beam.bleu, 2),
            f"bleu_beam{BEAM_SIZE}_interval": [round(beam.bleu_low, 2), round(beam.bleu_high, 2)],
            "bleu_signature": scores.signature,
            "parameters": sum(p.numel() for p in checkpoint.model.parameters()),
            "target_vocabulary": len(checkpoint.vocabs.target),
        }
        if split == "by_english":  # the main split's curves and samples
            curves.append((name, config["hidden_size"], history))
            sample_rows.append((name, [scores.hypotheses[test.index(p)] for p in samples]))
        extra = translate(checkpoint.model, checkpoint.vocabs, EXTRA_SENTENCES)
        metrics["runs"][name]["examples"] = dict(zip(EXTRA_SENTENCES, extra, strict=True))
    draw_losses(curves)

    metrics["comparisons"] = []
    for baseline, system, how in COMPARISONS:
        first = evaluations[baseline, "greedy"]
        second = evaluations[system, "beam" if how == "beam" else "greedy"]
        result = compare(first, second)
        metrics["comparisons"].append(
            {
                "baseline": f"{baseline} (greedy)",
                "system": f"{system} ({'beam ' + str(BEAM_SIZE) if how == 'beam' else 'greedy'})",
                "split": first.split,
                "difference": round(result.difference, 2),
                "p_value": round(result.p_value, 4),
                "significant": result.significant,
            }
        )
    lines = ["| French | reference | " + " | ".join(name for name, _ in sample_rows) + " |"]
    lines.append("|" + " --- |" * (2 + len(sample_rows)))
    for i, pair in enumerate(samples):
        lines.append(f"| {pair.source} | {pair.target} | " + " | ".join(rows[i] for _, rows in sample_rows) + " |")
    (OUT / "samples.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    packaged = [(name, rows) for name, rows in sample_rows if name in KOREAN_NAMES]
    korean = ["| 프랑스어 | 정답 | " + " | ".join(KOREAN_NAMES[name] for name, _ in packaged) + " |"]
    korean.append("|" + "---|" * (2 + len(packaged)))
    for i, pair in enumerate(samples):
        korean.append(f"| {pair.source} | {pair.target} | " + " | ".join(rows[i] for _, rows in packaged) + " |")
    (OUT / "samples.ko.md").write_text("\n".join(korean) + "\n", encoding="utf-8")
    write_reports(metrics)
    print(
        json.dumps({name: (run["bleu"], run["exact_match"]) for name, run in metrics["runs"].items()}, allow_nan=False)
    )


MARKERS = ("o", "s", "^", "D", "v", "P", "X")
"""One marker per run (in `RUNS` order, next to its colour): two runs whose losses coincide for many epochs (bahdanau
and bahdanau-bi, both near 1.1 from epoch 10 on) draw one line over the other, and the markers, placed on different
epochs for each run, still show both."""
MARK_EVERY = 5
"""A run's markers stand on every fifth epoch, the run's place in `RUNS` deciding which one (epoch 1 + its place)."""


def loss_figure(curves: list[tuple[str, int, list[dict]]]) -> plt.Figure:
    """Each run's training loss (solid) and held-out loss (dashed) by epoch, one colour and one marker per run.
    `curves`: (run name, hidden size, history) per run, history as `checkpoint.training["history"]`."""
    korean = hangul_font() is not None
    if korean:
        plt.rcParams["font.family"] = hangul_font()
    fig, ax = plt.subplots(figsize=(7, 4.6))
    for place, (name, hidden_size, history) in enumerate(curves):
        epochs = [h["epoch"] for h in history]
        tag = f"{name}, H={hidden_size}"
        train_label, held_out_label = (
            (f"{tag} (학습용)", f"{tag} (평가용)") if korean else (f"{tag} (train)", f"{tag} (held-out)")
        )
        style = {
            "marker": MARKERS[place % len(MARKERS)],
            "markevery": (place % MARK_EVERY, MARK_EVERY),
            "markersize": 5,
        }
        line = ax.plot(epochs, [h["loss"] for h in history], label=train_label, **style)[0]
        ax.plot(
            epochs, [h["test_loss"] for h in history], "--", color=line.get_color(), label=held_out_label,
            markerfacecolor="none", **style,
        )  # fmt: skip
    ax.set_xlabel(*text_label("에폭", "epoch"))
    ax.set_ylabel(*text_label("번역문 토큰당 손실", "loss per target token"))
    ax.set_title(
        *text_label(
            "Tatoeba 프랑스어→영어: 학습용 손실(실선), 평가용 손실(점선)",
            "Tatoeba fra->eng: training (solid), held-out (dashed)",
        )
    )
    ax.grid(alpha=0.3)
    # the legend under the axes, out of the curves' way: training lines in the left column, held-out ones in the right
    lines = ax.get_lines()
    ax.legend(
        handles=lines[0::2] + lines[1::2], fontsize=8, ncols=2, loc="upper center", bbox_to_anchor=(0.5, -0.14),
        frameon=False,
    )  # fmt: skip
    fig.tight_layout()
    return fig


def draw_losses(curves: list[tuple[str, int, list[dict]]]) -> None:
    """`loss_figure(curves)` into `loss_curve.png` and the site's copy."""
    fig = loss_figure(curves)
    OUT.mkdir(parents=True, exist_ok=True)
    fig.savefig(OUT / "loss_curve.png", dpi=100)
    plt.close(fig)
    FIGURE.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(OUT / "loss_curve.png", FIGURE)


EPOCH_LINE = re.compile(
    r"^\| epoch: +(?P<epoch>\d+) \| time: +(?P<seconds>[\d.]+) sec \| loss: +(?P<loss>[\d.]+) "
    r"\| held-out loss: +(?P<test_loss>[\d.]+|-)$"
)
"""One epoch's line in a training log (`translation/train.py` writes it)."""


def history_from_log(text: str) -> list[dict]:
    """The per-epoch history in a training log, as `checkpoint.training["history"]` holds it (four decimals)."""
    history = []
    for line in text.splitlines():
        match = EPOCH_LINE.match(line.strip())
        if match:
            held_out = match["test_loss"]
            history.append(
                {
                    "epoch": int(match["epoch"]),
                    "seconds": float(match["seconds"]),
                    "loss": float(match["loss"]),
                    "test_loss": None if held_out == "-" else float(held_out),
                }
            )
    if [h["epoch"] for h in history] != list(range(1, len(history) + 1)):
        raise ValueError(f"a training log's epochs run 1, 2, ... once each; found {[h['epoch'] for h in history]}")
    return history


def committed_curves(metrics: dict) -> list[tuple[str, int, list[dict]]]:
    """(run name, hidden size, history) of each main-split run in `metrics`, in `RUNS` order, from committed
    files: the run's checkpoint where it is committed, else its training log under `results/seq2seq/`."""
    curves = []
    for name in RUNS:
        run = metrics["runs"][name]
        if run["split"] != "by_english":
            continue
        checkpoint = ROOT / run["checkpoint"]
        if (checkpoint / "checkpoint.json").is_file():
            history = load_checkpoint(checkpoint).training["history"]
        else:
            history = history_from_log((ROOT / run["log"]).read_text(encoding="utf-8"))
        if len(history) != run["epochs"]:
            raise ValueError(f"{name}: {len(history)} epochs in its history, metrics.json says {run['epochs']}")
        curves.append((name, run["config"]["hidden_size"], history))
    return curves


def held_out_losses(history: list[dict]) -> dict:
    """The last and the best held-out loss of a history (keys left out when no epoch had held-out pairs)."""
    measured = [h for h in history if h.get("test_loss") is not None]
    if not measured:
        return {}
    best = min(measured, key=lambda h: h["test_loss"])
    last = history[-1]["test_loss"]
    return {
        **({} if last is None else {"final_test_loss": round(last, 4)}),
        "best_test_loss": round(best["test_loss"], 4),
        "best_test_epoch": best["epoch"],
    }


def comparison_verdict(row: dict) -> str:
    """`stats.verdict` of one comparison row (one seed: its paired bootstrap p decides)."""
    return verdict([row["difference"]], [row["p_value"]]).outcome


def write_reports(metrics: dict) -> None:
    """metrics.json (strict JSON, each comparison with its verdict), README.md, bleu.ko.md and losses.ko.md."""
    for row in metrics["comparisons"]:
        row["verdict"] = comparison_verdict(row)
    write_json(OUT / "metrics.json", metrics, indent=2)
    table = [
        "| run | split | command | H | dropout | schedule | label smoothing | epochs | seconds | train loss "
        f"| held-out loss | BLEU (95% interval) | exact match | BLEU, beam {BEAM_SIZE} (95% interval) |",
        "|" + " --- |" * 14,
    ]
    for name, run in metrics["runs"].items():
        config = run["config"]
        low, high = run["bleu_interval"]
        beam_low, beam_high = run[f"bleu_beam{BEAM_SIZE}_interval"]
        table.append(
            f"| {name} | {run['split']} | `{run['train_command']}` | {config['hidden_size']} | {config['dropout']} "
            f"| {config.get('schedule', 'constant')} | {config.get('label_smoothing', 0.0)} | {run['epochs']} "
            f"| {run['train_seconds']} | {run['final_loss']} | {run.get('final_test_loss', '-')} "
            f"| {run['bleu']} ({low:.1f}–{high:.1f}) | {run['exact_match']} "
            f"| {run[f'bleu_beam{BEAM_SIZE}']} ({beam_low:.1f}–{beam_high:.1f}) |"
        )
    comparison_table = [
        "| baseline | system | split | BLEU difference | p | verdict (`evaluate.verdict`) |",
        "|" + " --- |" * 6,
    ]
    for row in metrics["comparisons"]:
        comparison_table.append(
            f"| {row['baseline']} | {row['system']} | {row['split']} | {row['difference']:+.2f} | {row['p_value']:.3f} "
            f"| {row['verdict']} |"
        )
    split_lines = [
        f"- `{name}`: {info['train']} training / {info['held_out']} held-out pairs; {info['target_overlap']:.1%} "
        "of the held-out pairs have an English sentence that is also a training target"
        for name, info in metrics["splits"].items()
    ]
    readme = f"""# seq2seq results (Tatoeba fra->eng, the tutorial's filter)

Made by

```bash
{TRAIN_COMMAND}
{REPORT_COMMAND}
```

on a {metrics["machine"]}: the timings are wall-clock seconds.
BLEU is sacrebleu's corpus BLEU ({metrics["runs"]["gru"]["bleu_signature"]}) of greedy translations of the
held-out pairs of the run's split, one reference per pair, with its 95% bootstrap interval (1,000 resamples of the
sentences); the last column is the same with beam search (k = {BEAM_SIZE}, length penalty 1.0, as
`seq2seq-attention translate --beam-size {BEAM_SIZE}`). The splits (held out when crc32 of one side is 0 mod 10):

{chr(10).join(split_lines)}

The main split is `by_english`; the `-by_french` runs repeat the recipes on the French-side split to show what
the leaked targets add.
Each row's checkpoint was made by the command in its row (the settings are in `scripts/train_seq2seq.sh`).
The train loss is the training criterion: cross-entropy with label smoothing where that is on, so it is
higher than a plain NLL; the held-out loss is plain NLL (teacher forced) for every run.

{chr(10).join(table)}

Paired bootstrap resampling (sacrebleu, 1,000 resamples) on the same held-out pairs:

{chr(10).join(comparison_table)}

Logs: `<run>.log`. Sample translations (by_english held-out pairs): `samples.md`. Figure: `loss_curve.png`.
Checkpoints: `src/seq2seq_attention/pretrained/gru`, `.../bahdanau` and `.../bahdanau-bi` (packaged; the `runs/` ones
are not committed).
"""
    (OUT / "README.md").write_text(readme, encoding="utf-8")
    (OUT / "bleu.ko.md").write_text(korean_tables(metrics), encoding="utf-8")
    (OUT / "losses.ko.md").write_text(korean_losses(metrics), encoding="utf-8")


KOREAN_NAMES = {
    "gru": "GRU seq2seq (패키지)",
    "bahdanau": "바다나우 어텐션 (패키지)",
    "bahdanau-bi": "바다나우 어텐션 + 양방향 인코더 (패키지)",
}
KOREAN_LABELS = {
    "gru": "GRU seq2seq, 교사 강요, H=128",
    "gru-mixed": "GRU seq2seq, 혼합 학습(0.5), H=128",
    "gru-scheduled": "GRU seq2seq, 점점 줄이는 스케줄(inverse sigmoid, k=10), H=128",
    "bahdanau": "바다나우 어텐션, H=256, cosine, 배치 32, dropout 0, label smoothing 0.1",
    "bahdanau-bi": "바다나우 어텐션 + 양방향 인코더, 나머지는 위와 같음",
    "gru-by_french": "GRU seq2seq, 교사 강요, H=128",
    "bahdanau-by_french": "바다나우 어텐션, H=256, cosine, 배치 32, dropout 0, label smoothing 0.1",
}


def smoothing_floor(label_smoothing: float, vocabulary: int) -> float:
    """The least cross-entropy with label smoothing: the entropy of the smoothed target distribution."""
    if label_smoothing == 0:
        return 0.0
    on, off = 1 - label_smoothing + label_smoothing / vocabulary, label_smoothing / vocabulary
    return -on * math.log(on) - (vocabulary - 1) * off * math.log(off)


def loss_cell(run: dict, key: str) -> str:
    """A held-out loss to 3 decimals, or "-" where the run had no held-out pairs (the key is left out)."""
    return f"{run[key]:.3f}" if key in run else "-"


def korean_losses(metrics: dict) -> str:
    """The loss table of the training page, in Korean."""
    lines = [
        "| 모델 | 분할 | 에폭 | 마지막 학습 손실 | 학습 손실의 바닥 | 평가용 손실 최저 (에폭) | 마지막 평가용 손실 |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for name, run in metrics["runs"].items():
        config = run["config"]
        floor = smoothing_floor(config.get("label_smoothing", 0.0), run["target_vocabulary"])
        lines.append(
            f"| {KOREAN_LABELS[name]} | `{run['split']}` | {run['epochs']} | {run['final_loss']:.3f} | {floor:.3f} "
            f"| {loss_cell(run, 'best_test_loss')} ({run.get('best_test_epoch', '-')}) "
            f"| {loss_cell(run, 'final_test_loss')} |"
        )
    return "\n".join(lines) + "\n"


def korean_run(run: str) -> str:
    """A compared run in the Korean table: its name as code, how it decoded in Korean: `bahdanau` (빔 5)."""
    name, _, how = run.partition(" (")
    return f"`{name}` (" + how.replace("greedy", "탐욕적").replace("beam", "빔")


def korean_tables(metrics: dict) -> str:
    """The BLEU table and the comparison table of the evaluation page, in Korean (included at build time)."""
    lines = [
        f"| 모델 | 분할 | 에폭 | 평가용 쌍 | BLEU (95% 구간) | beam {BEAM_SIZE} BLEU (95% 구간) | 정확히 일치 |",
        "|---|---|---:|---:|---|---|---:|",
    ]
    for name, run in metrics["runs"].items():
        low, high = run["bleu_interval"]
        beam_low, beam_high = run[f"bleu_beam{BEAM_SIZE}_interval"]
        lines.append(
            f"| {KOREAN_LABELS[name]} | `{run['split']}` | {run['epochs']} | {run['held_out_pairs']} "
            f"| {run['bleu']:.2f} ({low:.1f}–{high:.1f}) "
            f"| {run[f'bleu_beam{BEAM_SIZE}']:.2f} ({beam_low:.1f}–{beam_high:.1f}) | {run['exact_match']:.1%} |"
        )
    lines += ["", "| 기준 | 비교 대상 | 분할 | BLEU 차이 | p | 판정 |", "|---|---|---|---:|---:|---|"]
    for row in metrics["comparisons"]:
        decided = verdict([row["difference"]], [row["p_value"]]).korean
        baseline, system = (korean_run(row[side]) for side in ("baseline", "system"))
        difference, p_value = f"{row['difference']:+.2f}", f"{row['p_value']:.3f}"
        lines.append(f"| {baseline} | {system} | `{row['split']}` | {difference} | {p_value} | {decided} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
