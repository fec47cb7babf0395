"""Sentiment commands: `sentiment-train`, `sentiment-predict`, `sentiment-attention-figure`."""

import argparse
import contextlib
import json
from pathlib import Path

from ..core.errors import InputError, echo
from ..core.files import check_destination, folder_lock, staged_writes
from ..sentiment.config import SentimentConfig
from . import COMMANDS
from .options import (
    add_config_options,
    add_threads_option,
    check_output_directory,
    check_output_file,
    config_from_args,
    positive_int,
)


def _train(args: argparse.Namespace) -> int:
    import torch
    from tqdm.auto import tqdm

    from ..core.device import parse_device
    from ..sentiment.train import run_training  # the one command that trains; the others never import it

    config = config_from_args(SentimentConfig, args)
    device = parse_device(args.device)
    if args.out is not None:
        check_output_directory(args.out, "--out")
        check_destination(args.out, "a sentiment checkpoint", overwrite=args.overwrite, what="--out")
    if args.out is not None:
        args.interrupted = lambda: f"nothing in {args.out} was changed (its checkpoint is written whole, at the end)"
    torch.set_num_threads(args.threads)
    with folder_lock(args.out, "--out", wait=False) if args.out is not None else contextlib.nullcontext():
        result = run_training(config, device=device, checkpoint=args.out, overwrite=args.overwrite, log=tqdm.write)
    sizes = result["sizes"]
    print(
        f"{config.kind} on {'+'.join(result['sources'])}: test accuracy {result['test_accuracy']:.4f} "
        f"on {sizes['test']} sentences (best validation epoch {result['best_epoch']}, "
        f"{sizes['train']} training sentences, {result['train_seconds']} s)"
    )
    if args.out is not None:
        print(f"checkpoint written to {args.out}")
    return 0


def _predict(args: argparse.Namespace) -> int:
    from ..sentiment.data import encode_tokens, tokenize  # torch: imported to run, never to parse
    from ..sentiment.predict import load_classifier, predict

    checkpoint = load_classifier(args.checkpoint)
    vocab = checkpoint.vocabs.source
    tokens = [tokenize(sentence) for sentence in args.sentences]
    for number, (sentence, words) in enumerate(zip(args.sentences, tokens, strict=True), start=1):
        if not words:
            raise InputError(f"sentence {number} has no words: {echo(sentence)}")
    probs, weights = predict(checkpoint.model, [encode_tokens(vocab, t) for t in tokens])
    attended = weights is not None and args.top
    print("label\tP(positive)\tsentence" + (f"\ttop {args.top} attended words [word weight]" if attended else ""))
    for i, (sentence, p) in enumerate(zip(args.sentences, probs, strict=True)):
        line = f"{'positive' if p >= 0.5 else 'negative'}\t{p:.3f}\t{sentence}"
        if attended:
            ranked = sorted(zip(tokens[i], weights[i], strict=True), key=lambda item: -item[1])[: args.top]
            line += "\t[" + ", ".join(f"{w} {a:.2f}" for w, a in ranked) + "]"
        print(line)
    return 0


def _figure(args: argparse.Namespace) -> int:
    from ..sentiment.figures import attention_figure  # torch, matplotlib: imported to run, never to parse

    check_output_file(args.out, "--out", (".png", ".svg", ".pdf"))
    check_destination(args.out, "a file", overwrite=args.overwrite, what="--out")
    args.interrupted = lambda: f"nothing was written to {args.out} (its files land together or not at all)"
    outputs = [args.out]
    if args.json is not None:
        check_output_file(args.json, "--json", (".json",))
        check_destination(args.json, "a file", overwrite=args.overwrite, what="--json")
        outputs.append(args.json)
    with staged_writes(*outputs) as staged:  # the figure and its JSON land together or not at all
        records = attention_figure(args.checkpoint, staged[0], args.count, args.max_words)
        if args.json is not None:
            staged[1].write_text(
                json.dumps(records, indent=1, ensure_ascii=False, allow_nan=False) + "\n", encoding="utf-8"
            )
    print(f"attention over {len(records)} test sentences written to {args.out}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `sentiment-train`, `sentiment-predict` and `sentiment-attention-figure` commands."""
    train = subparsers.add_parser(
        "sentiment-train",
        help=COMMANDS["sentiment-train"][1],
        description="Train a sentiment classifier on the bundled UCI labelled sentences and print its test accuracy.",
    )
    add_config_options(train, SentimentConfig)
    add_threads_option(train)
    train.add_argument("--device", default=None, help="cpu, cuda or cuda:N (default: cuda when available)")
    train.add_argument(
        "--out", type=Path, default=None, help="write a checkpoint directory here (created with its missing parents)"
    )
    train.add_argument("--overwrite", action="store_true", help="replace the sentiment checkpoint that --out holds")
    train.set_defaults(func=_train)

    pred = subparsers.add_parser(
        "sentiment-predict",
        help=COMMANDS["sentiment-predict"][1],
        description=(
            "Classify English sentences as positive or negative with a checkpoint that sentiment-train wrote. "
            "Prints a header line, then one tab-separated line per sentence: the label, P(positive), the "
            "sentence and, for the attention classifier, its most attended words with their weights."
        ),
    )
    pred.add_argument("--checkpoint", type=Path, required=True, help="a sentiment checkpoint directory (required)")
    pred.add_argument(
        "--top", type=positive_int(1000), default=3, help="show the N most attended words (attention model; default: 3)"
    )
    pred.add_argument("sentences", nargs="+", help="English sentences to classify")
    pred.set_defaults(func=_predict)

    fig = subparsers.add_parser(
        "sentiment-attention-figure",
        help=COMMANDS["sentiment-attention-figure"][1],
        description=(
            "Draw, for the first --count test sentences of an attention classifier, the weight its attention "
            "gives each word (the figure of the classifier page); --json also writes the sentences and weights."
        ),
    )
    required = fig.add_argument_group("required arguments")
    required.add_argument(
        "--checkpoint", type=Path, required=True, help="an 'attention' classifier checkpoint directory"
    )
    required.add_argument(
        "--out", type=Path, required=True, help="image file to write (.png, .svg or .pdf; its folder is created)"
    )
    fig.add_argument("--count", type=positive_int(100), default=6, help="sentences to draw (default: 6)")
    fig.add_argument("--max-words", type=positive_int(1000), default=12, help="longest sentence drawn (default: 12)")
    fig.add_argument("--json", type=Path, default=None, help="also write the sentences and weights as JSON")
    fig.add_argument("--overwrite", action="store_true", help="replace the files that --out and --json name")
    fig.set_defaults(func=_figure)
