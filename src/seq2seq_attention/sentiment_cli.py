"""Sentiment commands: `sentiment-train`, `sentiment-predict`, `sentiment-attention-figure`."""

import argparse
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import torch
from tqdm.auto import tqdm

from .classifier import (
    CLASSIFIER_KINDS,
    accuracy,
    build_classifier,
    load_classifier,
    predict,
    save_classifier,
    train_classifier,
)
from .device import parse_device
from .errors import UserError
from .sentiment import SOURCES, Example, prepare_data, tokenize


def run_training(
    sources: Sequence[str],
    kind: str,
    seed: int = 0,
    epochs: int = 12,
    batch_size: int = 32,
    lr: float = 1e-3,
    device: torch.device | None = None,
    checkpoint: Path | None = None,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
) -> dict[str, object]:
    """Train one classifier with a fixed seed and return its sizes, history and test accuracy.

    The seed fixes the initial weights, the batch order and the dropout masks; the split does
    not depend on it (`split_examples`).
    """
    data = prepare_data(sources)
    torch.manual_seed(seed)
    model = build_classifier(kind, len(data.vocab)).to(device or torch.device("cpu"))
    start = time.perf_counter()
    history = train_classifier(model, data, epochs, batch_size, lr, seed, progress=progress, log=log)
    seconds = time.perf_counter() - start
    test_accuracy = accuracy(model, data.test.ids, data.test.labels)
    if checkpoint is not None:
        save_classifier(checkpoint, model, kind, data.vocab, data.sources)
    best = max(history, key=lambda r: -1.0 if r["valid_accuracy"] is None else r["valid_accuracy"])
    return {
        "sources": list(data.sources),
        "kind": kind,
        "seed": seed,
        "sizes": {"train": len(data.train), "valid": len(data.valid), "test": len(data.test), "vocab": len(data.vocab)},
        "parameters": sum(p.numel() for p in model.parameters()),
        "history": history,
        "best_epoch": best["epoch"],
        "test_accuracy": test_accuracy,
        "train_seconds": round(seconds, 1),
    }


def pick_examples(examples: Sequence[Example], count: int, max_words: int) -> list[Example]:
    """The first `count` test sentences of 4 to `max_words` tokens, alternating negative and positive."""
    wanted = [e for e in examples if 4 <= len(tokenize(e.text)) <= max_words]
    negatives = [e for e in wanted if e.label == 0]
    positives = [e for e in wanted if e.label == 1]
    chosen = [e for pair in zip(negatives, positives, strict=False) for e in pair]
    return chosen[:count]


def plot_word_attention(
    words: Sequence[Sequence[str]], weights: Sequence[Sequence[float]], titles: Sequence[str], path: Path
) -> None:
    """One row of coloured cells per sentence: the attention weight on each word, written in the cell."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not words or len(words) != len(weights) or len(words) != len(titles):
        raise ValueError(f"need as many weight rows and titles as sentences, got {len(words)}, {len(weights)}")
    width = max(len(w) for w in words)
    top = max(max(row) for row in weights)  # one colour scale for every row, so rows compare
    fig, axes = plt.subplots(len(words), 1, figsize=(1.0 + 0.9 * width, 1.05 * len(words)), squeeze=False)
    for ax, row_words, row_weights, title in zip(axes[:, 0], words, weights, titles, strict=True):
        if len(row_words) != len(row_weights):
            raise ValueError(f"{len(row_words)} words but {len(row_weights)} weights in {title!r}")
        cells = torch.full((1, width), float("nan"))
        cells[0, : len(row_weights)] = torch.tensor(row_weights)
        ax.imshow(cells.numpy(), cmap="Oranges", vmin=0.0, vmax=top, aspect="auto")
        for j, weight in enumerate(row_weights):
            color = "white" if weight > 0.6 * top else "black"
            ax.text(j, 0, f"{weight:.2f}", ha="center", va="center", fontsize=8, color=color)
        ax.set_xticks(range(len(row_words)), row_words, fontsize=9)
        ax.tick_params(length=0)
        ax.set_yticks([])
        ax.set_title(title, fontsize=9, loc="left")
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def attention_figure(checkpoint: Path, out: Path, count: int = 6, max_words: int = 12) -> list[dict[str, object]]:
    """Draw the attention over the words of a few test sentences of the checkpoint's sources.

    Returns one record per sentence (text, label, probability, words, weights). Words outside
    the vocabulary (read by the model as `<unk>`) are marked with a trailing ``*``.
    """
    model, vocab, meta = load_classifier(checkpoint)
    if meta["kind"] != "attention":
        raise UserError(f"{checkpoint} holds a {meta['kind']!r} classifier, which has no attention to draw")
    data = prepare_data(meta["sources"])
    if data.vocab.itos != vocab.itos:
        raise UserError(f"{checkpoint} was trained with another vocabulary than its sources give now")
    chosen = pick_examples(data.test.examples, count, max_words)
    if not chosen:
        raise UserError(f"no test sentence of 4 to {max_words} words")
    tokens = [tokenize(e.text) for e in chosen]
    probs, weights = predict(model, [vocab.encode(t) for t in tokens])
    words = [[w if w in vocab.stoi else f"{w}*" for w in row] for row in tokens]
    titles = [
        f"label {'positive' if e.label else 'negative'}, P(positive) = {p:.2f}"
        for e, p in zip(chosen, probs, strict=True)
    ]
    plot_word_attention(words, weights, titles, out)
    return [
        {"text": e.text, "label": e.label, "p_positive": round(p, 4), "words": w, "weights": [round(x, 4) for x in a]}
        for e, p, w, a in zip(chosen, probs, words, weights, strict=True)
    ]


def _train(args: argparse.Namespace) -> int:
    torch.set_num_threads(args.threads)
    result = run_training(
        args.sources,
        args.model,
        seed=args.seed,
        epochs=args.epochs,
        batch_size=args.batch_size,
        lr=args.lr,
        device=parse_device(args.device),
        checkpoint=args.out,
        log=tqdm.write,
    )
    sizes = result["sizes"]
    print(
        f"{args.model} on {'+'.join(result['sources'])}: test accuracy {result['test_accuracy']:.4f} "
        f"on {sizes['test']} sentences (best validation epoch {result['best_epoch']}, "
        f"{sizes['train']} training sentences, {result['train_seconds']} s)"
    )
    if args.out is not None:
        print(f"checkpoint written to {args.out}")
    return 0


def _predict(args: argparse.Namespace) -> int:
    model, vocab, _ = load_classifier(args.checkpoint)
    tokens = [tokenize(sentence) for sentence in args.sentences]
    empty = [s for s, t in zip(args.sentences, tokens, strict=True) if not t]
    if empty:
        raise UserError(f"no words in {empty[0]!r}")
    probs, weights = predict(model, [vocab.encode(t) for t in tokens])
    for i, (sentence, p) in enumerate(zip(args.sentences, probs, strict=True)):
        line = f"{'positive' if p >= 0.5 else 'negative'}\t{p:.3f}\t{sentence}"
        if weights is not None and args.top:
            ranked = sorted(zip(tokens[i], weights[i], strict=True), key=lambda item: -item[1])[: args.top]
            line += "\t[" + ", ".join(f"{w} {a:.2f}" for w, a in ranked) + "]"
        print(line)
    return 0


def _figure(args: argparse.Namespace) -> int:
    records = attention_figure(args.checkpoint, args.out, args.count, args.max_words)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(records, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"attention over {len(records)} test sentences written to {args.out}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    train = subparsers.add_parser(
        "sentiment-train", help="train a sentiment classifier on the bundled labelled sentences"
    )
    train.add_argument("--sources", nargs="+", default=["imdb"], choices=sorted(SOURCES), help="default: imdb")
    train.add_argument("--model", choices=CLASSIFIER_KINDS, default="attention", help="default: attention")
    train.add_argument("--epochs", type=int, default=12)
    train.add_argument("--batch-size", type=int, default=32)
    train.add_argument("--lr", type=float, default=1e-3)
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    train.add_argument("--device", default=None, help="cpu or cuda (default: pick_device())")
    train.add_argument("--out", type=Path, default=None, help="write a .safetensors checkpoint here")
    train.set_defaults(func=_train)

    pred = subparsers.add_parser("sentiment-predict", help="classify sentences with a trained checkpoint")
    pred.add_argument("--checkpoint", type=Path, required=True)
    pred.add_argument("--top", type=int, default=3, help="show the N most attended words (attention model)")
    pred.add_argument("sentences", nargs="+")
    pred.set_defaults(func=_predict)

    fig = subparsers.add_parser(
        "sentiment-attention-figure", help="draw the attention weights over the words of a few test sentences"
    )
    fig.add_argument("--checkpoint", type=Path, required=True, help="an 'attention' classifier checkpoint")
    fig.add_argument("--out", type=Path, required=True, help="PNG file to write")
    fig.add_argument("--count", type=int, default=6)
    fig.add_argument("--max-words", type=int, default=12)
    fig.add_argument("--json", type=Path, default=None, help="also write the sentences and weights as JSON")
    fig.set_defaults(func=_figure)
