"""`seq2seq-attention train` and `seq2seq-attention translate`: the French-to-English translator."""

import argparse
import json
import sys
from pathlib import Path

import torch

from .checkpoint import load_checkpoint, save_checkpoint
from .data import MAX_WORDS, load_pairs, split_pairs
from .decode import translate
from .decoder import MAX_LENGTH
from .device import parse_device
from .errors import UserError
from .evaluate import evaluate
from .models import DECODERS
from .train import SCHEDULES, TrainConfig, train

PRETRAINED_DIR = Path(__file__).resolve().parent / "pretrained"
"""Checkpoints shipped inside the package (trained by `scripts/train_seq2seq.sh`)."""

DEFAULT_PRETRAINED = "bahdanau"


def default_checkpoint() -> Path:
    """The packaged checkpoint that `translate` loads when `--checkpoint` is not given."""
    return PRETRAINED_DIR / DEFAULT_PRETRAINED


def _positive(kind: type):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a {kind.__name__}, got {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be positive, got {text}")
        return value

    return parse


def _ratio(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must lie in [0, 1], got {text}")
    return value


def run_train(args: argparse.Namespace) -> int:
    if args.threads:
        torch.set_num_threads(args.threads)
    config = TrainConfig(
        decoder=args.decoder,
        hidden_size=args.hidden_size,
        dropout=args.dropout,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        epochs=args.epochs,
        teacher_forcing_ratio=args.teacher_forcing_ratio,
        coin_per_step=args.coin_per_step,
        clip=args.clip,
        seed=args.seed,
        max_words=args.max_words,
        time_budget=args.time_budget,
        label_smoothing=args.label_smoothing,
        schedule=args.schedule,
        weight_decay=args.weight_decay,
    )
    device = parse_device(args.device)
    pairs = load_pairs(config.max_words)
    train_pairs, test_pairs = split_pairs(pairs)
    print(
        f"{len(pairs)} pairs ({len(train_pairs)} train, {len(test_pairs)} held out); "
        f"decoder={config.decoder} H={config.hidden_size} device={device}",
        flush=True,
    )
    result = train(
        config,
        pairs=pairs,
        checkpoint=args.checkpoint,
        resume=args.resume,
        overwrite=args.overwrite,
        device=device,
        progress=not args.no_progress,
        log=lambda line: print(line, flush=True),
    )
    scores = evaluate(result.model, result.vocabs, test_pairs)
    epochs = result.history[-1]["epoch"] if result.history else 0
    training = {"config": vars_of(config), "epoch": epochs, "history": result.history}
    training["evaluation"] = {
        "split": "held-out (zlib.crc32(french) % 10 == 0)",
        "pairs": len(scores),
        "bleu": scores.bleu,
        "exact_match": scores.exact_match,
        "signature": scores.signature,
    }
    if not args.keep_training_state:
        save_checkpoint(args.checkpoint, result.model, result.vocabs, training=training)
    print(
        f"held-out BLEU {scores.bleu:.2f} ({scores.signature}), exact match {scores.exact_match:.3f} "
        f"on {len(scores)} pairs; checkpoint: {args.checkpoint}",
        flush=True,
    )
    return 0


def vars_of(config: TrainConfig) -> dict:
    return {name: getattr(config, name) for name in config.__dataclass_fields__}


def _read_stdin() -> str:
    """Standard input as UTF-8 text, decoded here so that a bad byte is an error, whatever the locale.

    Python decodes `sys.stdin` with `surrogateescape` in the C locale, where a Latin-1 byte would
    silently vanish from a word; reading the bytes ourselves makes every locale behave alike.
    """
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:
        return sys.stdin.read()
    data = buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UserError(
            f"standard input is not UTF-8 text (byte 0x{data[error.start]:02x} at offset {error.start}); "
            "convert it first, e.g. iconv -f latin1 -t utf-8"
        ) from None


def run_translate(args: argparse.Namespace) -> int:
    checkpoint_dir = Path(args.checkpoint) if args.checkpoint else default_checkpoint()
    checkpoint = load_checkpoint(checkpoint_dir, parse_device(args.device))
    sentences = list(args.sentences)
    if not sentences:
        sentences = [line for line in _read_stdin().splitlines() if line.strip()]
    max_words = int(checkpoint.training.get("config", {}).get("max_words", MAX_WORDS))
    translations = translate(
        checkpoint.model,
        checkpoint.vocabs,
        sentences,
        max_words=max_words,
        max_length=args.max_length,
        beam_size=args.beam_size,
        length_penalty=args.length_penalty,
    )
    if args.json:
        print(json.dumps([{"source": s, "translation": t} for s, t in zip(sentences, translations, strict=True)]))
    else:
        for translation in translations:
            print(translation)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `train` and `translate` commands."""
    train_parser = subparsers.add_parser(
        "train",
        help="train a French-to-English translator on the bundled Tatoeba pairs",
        description=(
            "Train an encoder-decoder translator on the bundled Tatoeba pairs (seed 001's filter: at most "
            "--max-words words per side, English starting with 'i am', 'he is', ...). French is the source, "
            "English the target; pairs with zlib.crc32(french) %% 10 == 0 are held out. A checkpoint "
            "(safetensors + JSON) is saved after every epoch; at the end the held-out BLEU is printed."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    train_parser.add_argument("--decoder", choices=sorted(DECODERS), default="gru", help="the decoder to train")
    train_parser.add_argument("--checkpoint", required=True, type=Path, help="checkpoint directory to write")
    train_parser.add_argument("--resume", action="store_true", help="continue from --checkpoint if it exists")
    train_parser.add_argument(
        "--overwrite", action="store_true", help="replace a checkpoint that --checkpoint already holds"
    )
    train_parser.add_argument(
        "--keep-training-state",
        action="store_true",
        help="keep the optimizer and RNG state in the final checkpoint (by default it keeps the weights only)",
    )
    train_parser.add_argument("--hidden-size", type=_positive(int), default=256, help="H")
    train_parser.add_argument("--dropout", type=_ratio, default=0.1, help="dropout on the embeddings")
    train_parser.add_argument("--batch-size", type=_positive(int), default=32, help="pairs per batch")
    train_parser.add_argument("--learning-rate", type=_positive(float), default=1e-3, help="Adam's step size")
    train_parser.add_argument("--epochs", type=_positive(int), default=40, help="passes over the training split")
    train_parser.add_argument(
        "--teacher-forcing-ratio",
        type=_ratio,
        default=1.0,
        help="chance of feeding the true previous word (1: teacher forcing, 0.5: the seed's mixed training)",
    )
    train_parser.add_argument(
        "--coin-per-step", action="store_true", help="toss the teacher-forcing coin per step, not per sentence"
    )
    train_parser.add_argument("--clip", type=float, default=1.0, help="largest gradient norm (0: no clipping)")
    train_parser.add_argument(
        "--label-smoothing", type=float, default=0.0, help="weight moved from the true word to all words, in [0, 1)"
    )
    train_parser.add_argument(
        "--schedule", choices=SCHEDULES, default="constant", help="learning-rate schedule (cosine: warm-up, then decay)"
    )
    train_parser.add_argument("--weight-decay", type=float, default=0.0, help="AdamW's decoupled weight decay")
    train_parser.add_argument("--seed", type=int, default=0, help="seeds weights, dropout, coins, batch order")
    train_parser.add_argument("--max-words", type=_positive(int), default=MAX_WORDS, help="the data filter's limit")
    train_parser.add_argument(
        "--time-budget", type=_positive(float), default=None, help="seconds; no epoch starts that would overrun it"
    )
    train_parser.add_argument("--device", default=None, help="cpu or cuda (default: cuda when available)")
    train_parser.add_argument("--threads", type=_positive(int), default=None, help="torch.set_num_threads")
    train_parser.add_argument("--no-progress", action="store_true", help="no progress bar (for log files)")
    train_parser.set_defaults(func=run_train)

    translate_parser = subparsers.add_parser(
        "translate",
        help="translate French sentences to English",
        description=(
            "Translate French sentences to English with greedy decoding (or beam search with --beam-size). "
            "Sentences are normalised like the "
            "training data (lowercase, accents dropped, punctuation split off), so 'Je suis fatigué.' works. "
            "Words the model never saw, empty sentences and sentences longer than the training limit are "
            "rejected with one line and exit code 2."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    translate_parser.add_argument(
        "sentences", nargs="*", help="French sentences (one per argument); read from stdin, one per line, if none"
    )
    translate_parser.add_argument(
        "--checkpoint",
        type=Path,
        default=None,
        help=f"checkpoint directory (default: the packaged {DEFAULT_PRETRAINED!r} model)",
    )
    translate_parser.add_argument("--max-length", type=_positive(int), default=MAX_LENGTH, help="most output words")
    translate_parser.add_argument(
        "--beam-size", type=_positive(int), default=1, help="beam width (1: greedy decoding, as the seeds do)"
    )
    translate_parser.add_argument(
        "--length-penalty",
        type=float,
        default=1.0,
        help="beam search ranks hypotheses by log-probability / length**this (0: no length normalisation)",
    )
    translate_parser.add_argument("--device", default="cpu", help="cpu or cuda")
    translate_parser.add_argument("--json", action="store_true", help="print a JSON list of source/translation")
    translate_parser.set_defaults(func=run_translate)
