"""Train the sentiment classifiers of the classifier page and write results/sentiment/.

Every model kind (attention, BiLSTM without attention, mean of embeddings) is trained on IMDB
alone and on all three sources, once per seed, with the same split and settings; the test
accuracy of each run, the mean over seeds, the validation curves and the timings go to
`accuracy.json` and `accuracy.md`; the attention model of seed 0 is kept as a checkpoint and
its attention over the words of a few test sentences is drawn.

    python scripts/train_sentiment.py
"""

import argparse
import json
import platform
import shlex
import shutil
import statistics
import sys
import time
from pathlib import Path

import torch
from tqdm.auto import tqdm

from seq2seq_attention.core.files import run_locked, write_json
from seq2seq_attention.model.classifier import CLASSIFIER_KINDS
from seq2seq_attention.sentiment.figures import attention_figure
from seq2seq_attention.sentiment.train import SentimentConfig, run_training

ROOT = Path(__file__).resolve().parent.parent
SETUPS = {"imdb": ("imdb",), "all": ("imdb", "amazon", "yelp")}
LABELS = {"attention": "BiLSTM + attention", "bilstm": "BiLSTM, no attention", "mean": "mean of embeddings"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "sentiment")
    parser.add_argument("--figures", type=Path, default=ROOT / "docs" / "assets" / "figures")
    parser.add_argument(
        "--tables-only", action="store_true", help="only rewrite accuracy.md and accuracy.ko.md from accuracy.json"
    )
    args = parser.parse_args()
    return run_locked(args.out, "--out", "train_sentiment.py", lambda: run(args))


def run(args: argparse.Namespace) -> int:
    if args.tables_only:
        summary = json.loads((args.out / "accuracy.json").read_text(encoding="utf-8"))
        write_tables(args.out, summary)
        return 0

    torch.set_num_threads(args.threads)
    args.out.mkdir(parents=True, exist_ok=True)
    log_file = (args.out / "train.log").open("w", encoding="utf-8")

    def log(line: str) -> None:
        tqdm.write(line)
        log_file.write(line + "\n")
        log_file.flush()

    command = "python scripts/train_sentiment.py " + shlex.join(sys.argv[1:])
    log(f"$ {command.strip()}")
    log(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {platform.processor() or platform.machine()}")
    runs = []
    start = time.perf_counter()
    jobs = [(setup, kind, seed) for setup in SETUPS for kind in CLASSIFIER_KINDS for seed in args.seeds]
    for setup, kind, seed in tqdm(jobs, desc="runs"):
        log(f"--- {kind} on {setup}, seed {seed}")
        checkpoint = None
        if kind == "attention" and seed == args.seeds[0]:
            checkpoint = args.out / "checkpoints" / f"{setup}_attention"
        config = SentimentConfig(kind=kind, sources=SETUPS[setup], seed=seed, epochs=args.epochs)
        run = run_training(config, checkpoint=checkpoint, progress=True, log=log, overwrite=True)
        run["setup"] = setup
        log(f"test accuracy {run['test_accuracy']:.4f} (best validation epoch {run['best_epoch']})")
        runs.append(run)
    total = time.perf_counter() - start

    table = []
    for setup in SETUPS:
        for kind in CLASSIFIER_KINDS:
            chosen = [r for r in runs if r["setup"] == setup and r["kind"] == kind]
            scores = [r["test_accuracy"] for r in chosen]
            table.append(
                {
                    "setup": setup,
                    "kind": kind,
                    "test_size": chosen[0]["sizes"]["test"],
                    "train_size": chosen[0]["sizes"]["train"],
                    "parameters": chosen[0]["parameters"],
                    "accuracies": scores,
                    "mean": statistics.mean(scores),
                    "stdev": statistics.stdev(scores) if len(scores) > 1 else 0.0,
                }
            )

    figures = {}
    for setup in SETUPS:
        png = args.out / f"attention_{setup}.png"
        checkpoint = args.out / "checkpoints" / f"{setup}_attention"
        figures[setup] = {
            "command": f"seq2seq-attention sentiment-attention-figure --checkpoint {shown(checkpoint)} "
            f"--out {shown(png)} --overwrite",
            "sentences": attention_figure(checkpoint, png),
        }
        args.figures.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(png, args.figures / f"sentiment_attention_{setup}.png")

    summary = {
        "command": command.strip(),
        "machine": "shared, loaded 2-core CPU machine; timings are indicative only",
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "epochs": args.epochs,
        "seeds": args.seeds,
        "selection": "weights of the epoch with the best validation accuracy; the test set is used once, at the end",
        "total_seconds": round(total, 1),
        "table": table,
        "runs": runs,
        "figures": figures,
    }
    write_json(args.out / "accuracy.json", summary)
    write_tables(args.out, summary)
    log(f"done in {total:.0f} s")
    log_file.close()
    return 0


def write_tables(out: Path, summary: dict) -> None:
    (out / "accuracy.md").write_text(markdown(summary), encoding="utf-8")
    (out / "accuracy.ko.md").write_text(korean(summary), encoding="utf-8")


KOREAN_LABELS = {"attention": "BiLSTM + 어텐션", "bilstm": "BiLSTM, 어텐션 없음", "mean": "임베딩 평균"}


def korean(summary: dict) -> str:
    """The accuracy table of the classifier page, in Korean."""
    lines = ["| 데이터 | 테스트 문장 | 모델 | 시드별 테스트 정확도 | 평균 ± 표준편차 |", "|---|---:|---|---|---:|"]
    for row in summary["table"]:
        per_seed = ", ".join(f"{a:.3f}" for a in row["accuracies"])
        data = "IMDB" if row["setup"] == "imdb" else "IMDB + Amazon + Yelp"
        lines.append(
            f"| {data} | {row['test_size']} | {KOREAN_LABELS[row['kind']]} | {per_seed} "
            f"| {row['mean']:.3f} ± {row['stdev']:.3f} |"
        )
    seeds = ", ".join(str(s) for s in summary["seeds"])
    lines += [
        "",
        f"시드 {seeds}, {summary['epochs']} 에폭, 검증 정확도가 가장 높은 에폭의 가중치. "
        f"명령: `{summary['command']}` (2코어 CPU에서 {summary['total_seconds']:.0f}초).",
        "",
    ]
    return "\n".join(lines)


def shown(path: Path) -> str:
    """A path as the command that made it would be typed: relative to the repository root when inside it."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def markdown(summary: dict) -> str:
    seeds = ", ".join(str(s) for s in summary["seeds"])
    lines = [
        "| data | test sentences | model | test accuracy per seed | mean ± sd |",
        "|---|---:|---|---|---:|",
    ]
    for row in summary["table"]:
        per_seed = ", ".join(f"{a:.3f}" for a in row["accuracies"])
        lines.append(
            f"| {'IMDB' if row['setup'] == 'imdb' else 'IMDB + Amazon + Yelp'} | {row['test_size']} | "
            f"{LABELS[row['kind']]} | {per_seed} | {row['mean']:.3f} ± {row['stdev']:.3f} |"
        )
    lines += [
        "",
        f"Seeds {seeds}; {summary['epochs']} epochs, weights of the best validation epoch. "
        f"Command: `{summary['command']}` ({summary['total_seconds']:.0f} s on a {summary['machine']}).",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
