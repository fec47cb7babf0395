"""`seq2seq-attention train` and `seq2seq-attention translate`: the French-to-English translator."""

import argparse
import json
import sys
from pathlib import Path

import torch

from ..core.config import saved_setting
from ..core.device import parse_device
from ..core.errors import InputError
from ..core.files import EXPORT_NAMES, check_destination, staged_writes
from ..translation.corpus import split_lines
from ..translation.decoders import MAX_LENGTH
from ..translation.export import export_onnx, export_sentences
from ..translation.pretrained import DEFAULT_PRETRAINED, default_checkpoint
from ..translation.search import MAX_STEPS, SentenceError, translate
from ..translation.train import TrainConfig, load_translator, train
from .options import add_config_options, bounded_float, check_output_directory, config_from_args, positive_int


def run_train(args: argparse.Namespace) -> int:
    config = config_from_args(TrainConfig, args)
    device = parse_device(args.device)
    check_output_directory(args.checkpoint, "--checkpoint")
    check_destination(args.checkpoint, "a translation checkpoint", overwrite=True, what="--checkpoint")
    if args.threads:
        torch.set_num_threads(args.threads)
    result = train(
        config,
        checkpoint=args.checkpoint,
        resume=args.resume,
        overwrite=args.overwrite,
        device=device,
        progress=not args.no_progress,
        log=lambda line: print(line, flush=True),
        keep_training_state=args.keep_training_state,
    )
    scores = result.evaluation
    if scores is not None:
        print(
            f"held-out BLEU {scores['bleu']:.2f} ({scores['signature']}), exact match {scores['exact_match']:.3f} "
            f"on {scores['pairs']} pairs; checkpoint: {args.checkpoint}",
            flush=True,
        )
    return 0


def read_stdin() -> list[tuple[int, str]]:
    r"""The non-blank lines of standard input with their line numbers, decoded as UTF-8 in every locale.

    Python decodes `sys.stdin` with `surrogateescape` in the C locale, where a Latin-1 byte would
    silently vanish from a word; reading the bytes ourselves makes every locale behave alike. A
    line ends at ``\n`` (``\r\n`` too) and nowhere else (`split_lines`).
    """
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:
        text = sys.stdin.read()
    else:
        data = buffer.read()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise InputError(
                f"standard input is not UTF-8 text (byte 0x{data[error.start]:02x} at offset {error.start}); "
                "convert it first, e.g. iconv -f latin1 -t utf-8"
            ) from None
    return [(number, line) for number, line in enumerate(split_lines(text), start=1) if line.strip()]


def run_translate(args: argparse.Namespace) -> int:
    device = parse_device(args.device)
    translator = load_translator(args.checkpoint or default_checkpoint(), device)
    if args.sentences:
        numbered = list(enumerate(args.sentences, start=1))
        where = "sentence"
    else:
        numbered = read_stdin()
        where = "line"
    sentences = [sentence for _, sentence in numbered]
    try:
        translations = translate(
            translator.model,
            translator.vocabs,
            sentences,
            max_words=translator.max_words,
            max_length=args.max_length,
            beam_size=args.beam_size,
            length_penalty=args.length_penalty,
        )
    except SentenceError as error:
        if where == "line":
            raise InputError(f"line {numbered[error.index][0]} of standard input {error.problem}") from None
        raise
    if args.json:
        print(json.dumps([{"source": s, "translation": t} for s, t in zip(sentences, translations, strict=True)]))
    else:
        for translation in translations:
            print(translation)
    return 0


def run_export(args: argparse.Namespace) -> int:
    check_output_directory(args.out, "--out")
    check_destination(args.out, "an ONNX export", overwrite=args.overwrite, what="--out")
    translator = load_translator(args.checkpoint or default_checkpoint(), "cpu")
    split = saved_setting(TrainConfig, translator.training, "split", f"checkpoint {translator.path}")
    targets = [args.out / name for name in EXPORT_NAMES]
    with staged_writes(*targets) as staged:  # the graphs and the sentences land together or not at all
        export_onnx(translator.model, translator.vocabs, staged[0].parent, translator.max_words)
        export_sentences(staged[0].parent, split)
    for path in targets:
        print(f"wrote {path} ({path.stat().st_size:,} bytes)")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `train`, `translate` and `export-onnx` commands."""
    train_parser = subparsers.add_parser(
        "train",
        help="train a French-to-English translator on the bundled Tatoeba pairs",
        description=(
            "Train an encoder-decoder translator on the bundled Tatoeba pairs (the tutorial's filter: at most "
            "--max-words words per side, English starting with 'i am', 'he is', ...). French is the source, "
            "English the target; pairs with zlib.crc32(english) % 10 == 0 are held out (--split by_english; "
            "by_french holds out by the French side). A checkpoint "
            "(safetensors + JSON) is saved after every epoch; at the end the held-out BLEU is measured, "
            "printed and saved with it."
        ),
    )
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
    add_config_options(train_parser, TrainConfig)
    train_parser.add_argument("--device", default=None, help="cpu, cuda or cuda:N (default: cuda when available)")
    train_parser.add_argument("--threads", type=positive_int(1024), default=None, help="torch.set_num_threads")
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
    translate_parser.add_argument(
        "--max-length", type=positive_int(MAX_STEPS), default=MAX_LENGTH, help="most output words, <eos> included"
    )
    translate_parser.add_argument(
        "--beam-size", type=positive_int(1000), default=1, help="beam width (1: greedy decoding, as the tutorial does)"
    )
    translate_parser.add_argument(
        "--length-penalty",
        type=bounded_float(-100, 100),
        default=1.0,
        help="beam search ranks hypotheses by log-probability / length**this (0: no length normalisation)",
    )
    translate_parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    translate_parser.add_argument("--json", action="store_true", help="print a JSON list of source/translation")
    translate_parser.set_defaults(func=run_translate)

    export_parser = subparsers.add_parser(
        "export-onnx",
        help="export a translator to ONNX for the live page (encoder and decoder step, float16 weights)",
        description=(
            "Write encoder.onnx, step.onnx and vocabularies.json of an attention translator to --out, and "
            "sentences.json (the French sentences of its training and held-out split). The weights "
            "are stored as float16; the graphs compute what the model computes with its weights rounded to float16."
        ),
    )
    export_parser.add_argument(
        "--checkpoint", type=Path, default=None, help="checkpoint directory (default: the packaged bahdanau model)"
    )
    export_parser.add_argument("--out", type=Path, required=True, help="directory to write (docs/assets/live)")
    export_parser.add_argument("--overwrite", action="store_true", help="replace the export that --out already holds")
    export_parser.set_defaults(func=run_export)
