"""Held-out BLEU, sample translations and the loss curves of the runs of `scripts/train_seq2seq.sh`.

Usage (after the training script):

    python scripts/seq2seq_report.py

Writes `results/seq2seq/metrics.json`, `results/seq2seq/README.md`, `results/seq2seq/samples.md`,
`results/seq2seq/loss_curve.png` and a copy of the figure in `docs/assets/figures/`.
"""

import json
import platform
import shutil
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402

from seq2seq_attention.core.checkpoint import load_checkpoint  # noqa: E402
from seq2seq_attention.translation.corpus import load_pairs, split_pairs  # noqa: E402
from seq2seq_attention.translation.decoders import MAX_LENGTH  # noqa: E402
from seq2seq_attention.translation.evaluate import evaluate  # noqa: E402
from seq2seq_attention.translation.search import translate  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "seq2seq"
FIGURE = ROOT / "docs" / "assets" / "figures" / "seq2seq_loss.png"
RUNS = {
    "gru": ("src/seq2seq_attention/pretrained/gru", "GRU seq2seq, teacher forcing"),
    "gru-mixed": ("runs/seq2seq/gru-mixed", "GRU seq2seq, mixed training (ratio 0.5)"),
    "bahdanau": ("src/seq2seq_attention/pretrained/bahdanau", "Bahdanau attention, teacher forcing"),
}
TRAIN_COMMAND = "scripts/train_seq2seq.sh"  # `scripts/train_seq2seq.sh NAME` trains the run NAME alone
BEAM_SIZE = 5
REPORT_COMMAND = "python scripts/seq2seq_report.py"
EXTRA_SENTENCES = ["je suis fatigue .", "nous sommes en retard .", "elle est tres intelligente ."]


def main() -> None:
    torch.set_num_threads(1)
    _, test = split_pairs(load_pairs())
    samples = test[::71][:8]
    metrics = {
        "train_command": TRAIN_COMMAND,
        "report_command": REPORT_COMMAND,
        "machine": f"shared, loaded 2-core CPU machine ({platform.processor() or platform.machine()}), "
        f"torch {torch.__version__}, 1 thread per run",
        "held_out_pairs": len(test),
        "runs": {},
    }
    sample_rows = []
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, (path, label) in RUNS.items():
        checkpoint = load_checkpoint(ROOT / path)
        scores = evaluate(checkpoint.model, checkpoint.vocabs, test)
        beam_bleu = beam_search_bleu(checkpoint, test)
        history = checkpoint.training["history"]
        config = checkpoint.training["config"]
        metrics["runs"][name] = {
            "label": label,
            "checkpoint": path,
            "train_command": f"{TRAIN_COMMAND} {name}",
            "log": f"results/seq2seq/{name}.log",
            "config": config,
            "epochs": len(history),
            "train_seconds": round(sum(h["seconds"] for h in history), 1),
            "final_loss": round(history[-1]["loss"], 4),
            "final_test_loss": round(history[-1]["test_loss"], 4),
            "bleu": round(scores.bleu, 2),
            "exact_match": round(scores.exact_match, 4),
            f"bleu_beam{BEAM_SIZE}": round(beam_bleu, 2),
            "bleu_signature": scores.signature,
            "parameters": sum(p.numel() for p in checkpoint.model.parameters()),
        }
        epochs = [h["epoch"] for h in history]
        tag = f"{name}, H={config['hidden_size']}"
        line = ax.plot(epochs, [h["loss"] for h in history], label=f"{tag} (train)")[0]
        ax.plot(epochs, [h["test_loss"] for h in history], "--", color=line.get_color(), label=f"{tag} (held-out)")
        sample_rows.append((name, [scores.hypotheses[test.index(p)] for p in samples]))
        extra = translate(checkpoint.model, checkpoint.vocabs, EXTRA_SENTENCES)
        metrics["runs"][name]["examples"] = dict(zip(EXTRA_SENTENCES, extra, strict=True))
    ax.set_xlabel("epoch")
    ax.set_ylabel("loss per target token")
    ax.set_title("Tatoeba fra->eng: training criterion (solid), held-out NLL (dashed)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(OUT / "loss_curve.png", dpi=100)
    FIGURE.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(OUT / "loss_curve.png", FIGURE)

    (OUT / "metrics.json").write_text(json.dumps(metrics, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    lines = ["| French | reference | " + " | ".join(name for name, _ in sample_rows) + " |"]
    lines.append("|" + " --- |" * (2 + len(sample_rows)))
    for i, pair in enumerate(samples):
        lines.append(f"| {pair.source} | {pair.target} | " + " | ".join(rows[i] for _, rows in sample_rows) + " |")
    (OUT / "samples.md").write_text("\n".join(lines) + "\n", encoding="utf-8")

    table = [
        "| run | command | H | dropout | schedule | label smoothing | epochs | seconds | train loss | held-out loss "
        f"| BLEU | exact match | BLEU, beam {BEAM_SIZE} |",
        "|" + " --- |" * 13,
    ]
    for name, run in metrics["runs"].items():
        config = run["config"]
        table.append(
            f"| {name} | `{run['train_command']}` | {config['hidden_size']} | {config['dropout']} "
            f"| {config.get('schedule', 'constant')} | {config.get('label_smoothing', 0.0)} | {run['epochs']} "
            f"| {run['train_seconds']} | {run['final_loss']} | {run['final_test_loss']} | {run['bleu']} "
            f"| {run['exact_match']} | {run[f'bleu_beam{BEAM_SIZE}']} |"
        )
    readme = f"""# seq2seq results (Tatoeba fra->eng, seed 001's filter)

Made by

```bash
{TRAIN_COMMAND}
{REPORT_COMMAND}
```

on a {metrics["machine"]}: the timings are wall-clock seconds under load from other jobs.
BLEU is sacrebleu's corpus BLEU ({metrics["runs"]["gru"]["bleu_signature"]}) of greedy translations of the
{len(test)} held-out pairs (`zlib.crc32(french) % 10 == 0`), one reference per pair; the last column is the same with
beam search (k = {BEAM_SIZE}, length penalty 1.0, as `seq2seq-attention translate --beam-size {BEAM_SIZE}`).
Each row's checkpoint was made by the command in its row (the settings are in `scripts/train_seq2seq.sh`).
The train loss is the training criterion: cross-entropy with label smoothing where that is on, so it is
higher than a plain NLL; the held-out loss is plain NLL (teacher forced) for every run.

{chr(10).join(table)}

Logs: `gru.log`, `gru-mixed.log`, `bahdanau.log`. Sample translations: `samples.md`. Figure: `loss_curve.png`.
Checkpoints: `src/seq2seq_attention/pretrained/gru` and `.../bahdanau` (packaged; `gru-mixed` is not committed).
"""
    (OUT / "README.md").write_text(readme, encoding="utf-8")
    print(json.dumps({name: (run["bleu"], run["exact_match"]) for name, run in metrics["runs"].items()}))


def beam_search_bleu(checkpoint, pairs) -> float:
    """Corpus BLEU of beam-search translations of the held-out pairs."""
    return evaluate(checkpoint.model, checkpoint.vocabs, pairs, max_length=MAX_LENGTH, beam_size=BEAM_SIZE).bleu


if __name__ == "__main__":
    main()
