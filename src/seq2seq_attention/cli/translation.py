"""`seq2seq-attention train` and `seq2seq-attention translate`: the French-to-English translator."""

import argparse
import dataclasses
import json
import shlex
import sys
from pathlib import Path

from ..core.config import saved_setting
from ..core.errors import InputError
from ..core.files import EXPORT_NAMES, check_destination, folder_lock, staged_writes
from ..model.defaults import MAX_BEAM, MAX_LENGTH, MAX_LENGTH_PENALTY, MAX_STEPS
from ..model.names import ATTENTION_DECODERS, DECODER_NAMES, DEFAULT_SCORES, SCORE_NAMES
from ..translation.config import TrainConfig, not_resumable_when_averaged
from ..translation.pretrained import DEFAULT_PRETRAINED
from . import COMMANDS
from .models import LIMITS
from .options import (
    add_config_options,
    add_model_options,
    add_threads_option,
    bounded_float,
    check_output_directory,
    chosen_checkpoint,
    config_from_args,
    given_settings,
    positive_int,
)

# torch and the modules that import it are imported by the commands that run, never while parsing:
# `--help` and an argument error answer without them (tests/workbench/test_cli_help.py checks it).


def run_train(args: argparse.Namespace) -> int:
    from ..core.device import parse_device

    device = parse_device(args.device)
    check_output_directory(args.checkpoint, "--checkpoint")
    check_destination(args.checkpoint, "a translation checkpoint", overwrite=True, what="--checkpoint")
    with folder_lock(args.checkpoint, "--checkpoint", wait=False):  # a second train into it is refused
        return _train_locked(args, device)


def _train_locked(args: argparse.Namespace, device) -> int:
    import torch

    from ..core.checkpoint import JSON_NAME
    from ..translation.train import train  # the one command that trains; the others never import it

    saved = (args.checkpoint / JSON_NAME).is_file()
    resuming = saved and args.resume
    if args.init_from is not None:
        if args.resume:
            raise InputError("--init-from starts a new run; it cannot be combined with --resume")
        if saved and not args.overwrite:
            raise InputError(f"{args.checkpoint} already holds a checkpoint; {_what_to_do_with(args.checkpoint)}")
        config, finished = resumed_config(args.init_from, given_settings(TrainConfig, args), new_run=True)
        print(f"starting a new run from the weights of {args.init_from} (its {finished} epochs; saved settings)")
    elif resuming:
        config, finished = resumed_config(args.checkpoint, given_settings(TrainConfig, args))
        print(
            f"resuming {args.checkpoint} from epoch {finished + 1} of {config.epochs} "
            f"({finished} done; its saved settings)",
            flush=True,
        )
    else:
        config = config_from_args(TrainConfig, args)
        if saved and not args.overwrite:
            raise InputError(f"{args.checkpoint} already holds a checkpoint; {_what_to_do_with(args.checkpoint)}")
    args.interrupted = lambda: _what_was_kept(args.checkpoint, config.epochs)
    torch.set_num_threads(args.threads)
    result = train(
        config,
        checkpoint=args.checkpoint,
        resume=args.resume,
        overwrite=args.overwrite,
        device=device,
        progress=not args.no_progress,
        log=lambda line: print(line, flush=True),
        keep_training_state=(args.keep_training_state or resuming) and not args.drop_training_state,
        init_from=args.init_from,
    )
    scores = result.evaluation
    if scores is not None:
        print(
            f"held-out BLEU {scores['bleu']:.2f} ({scores['signature']}), exact match {scores['exact_match']:.3f} "
            f"on {scores['pairs']} pairs; checkpoint: {args.checkpoint}",
            flush=True,
        )
    return 0


def _what_was_kept(directory: Path, epochs: int) -> str:
    """What an interrupted `train` left in `directory`, and the command that continues it (the Ctrl-C message)."""
    try:
        training, resumable = _training_state(directory)
    except InputError:
        return f"no checkpoint was saved in {directory} (the first epoch had not ended); run the command again"
    finished = int(training.get("epoch", 0))
    if not resumable or finished >= epochs:
        return f"{directory} keeps the checkpoint of epoch {finished}"
    return (
        f"{directory} keeps the checkpoint of epoch {finished} of {epochs}, with its training state; continue with: "
        f"seq2seq-attention train --checkpoint {shlex.quote(str(directory))} --resume --epochs {epochs}"
    )


def _training_state(directory: Path) -> tuple[dict, bool]:
    """The training record a checkpoint saved, and whether it holds what resuming needs (the optimizer's state, and
    a run that does not average its last epochs' weights)."""
    from ..core.checkpoint import load_checkpoint

    checkpoint = load_checkpoint(directory, "cpu", task="translation")
    return checkpoint.training, checkpoint.files.get("training") is not None and _averaged(checkpoint.training) < 2


def _averaged(training: dict) -> int:
    """The saved run's `average_last` (1 when it saved none, or one that is not a count)."""
    config = training.get("config")
    value = config.get("average_last", 1) if isinstance(config, dict) else 1
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


def _what_to_do_with(directory: Path) -> str:
    """What the user may do with an existing checkpoint: resume it only where that can work."""
    try:
        training, resumable = _training_state(directory)
    except InputError as error:  # unreadable: it cannot be resumed either
        return f"it cannot be read ({error}); replace it (--overwrite) or choose another --checkpoint"
    if resumable:
        return f"resume it (--resume; it finished {training.get('epoch', 0)} epochs) or replace it (--overwrite)"
    return f"{_not_resumable(training)}, so it cannot be resumed; {_ways_on(directory)}"


def _not_resumable(training: dict) -> str:
    if _averaged(training) > 1:
        return not_resumable_when_averaged(_averaged(training))
    return (
        "it holds the weights only, without the optimizer state that resuming needs (its last run ended without "
        "--keep-training-state, or with --drop-training-state)"
    )


def _ways_on(directory: Path) -> str:
    """What a user may do with a finished weights-only checkpoint that keeps it."""
    quoted = shlex.quote(str(directory))
    more = shlex.quote(f"{directory}-more")
    return (
        f"it stays usable as it is (seq2seq-attention translate --checkpoint {quoted}); to train on from its weights, "
        f"start a new run from them: seq2seq-attention train --init-from {quoted} --checkpoint {more} --epochs N "
        "--keep-training-state; or replace it (--overwrite)"
    )


def resumed_config(directory: Path, given: dict[str, object], *, new_run: bool = False) -> tuple[TrainConfig, int]:
    """The config a run resumed from `directory` trains with, and the epochs it finished: the saved config, with
    the options that may change (`TrainConfig.RESUMABLE_CHANGES`: epochs, time budget) taken from the command
    line. With `new_run`, the config of a new run that starts from the weights saved in `directory`
    (`--init-from`): the same rule, and its epochs count from 1 (the weights only are needed).

    Raises:
        InputError: the checkpoint cannot be resumed (weights only, or all its epochs done), or an option
            contradicts its saved config (named, with both values).
    """
    verb = "start from" if new_run else "resume from"
    training, resumable = _training_state(directory)
    if not resumable and not new_run:
        raise InputError(f"cannot resume from {directory}: {_not_resumable(training)}; {_ways_on(directory)}")
    where = f"checkpoint {directory}"
    if not isinstance(training.get("config"), dict):
        raise InputError(f"cannot {verb} {directory}: it holds no training config")
    values = {}
    for field in dataclasses.fields(TrainConfig):
        if field.name in training["config"]:
            values[field.name] = saved_setting(TrainConfig, training, field.name, where)
        else:
            values[field.name] = TrainConfig.LEGACY_DEFAULTS.get(field.name, field.default)
    differing = [name for name in given if name not in TrainConfig.RESUMABLE_CHANGES and given[name] != values[name]]
    if differing:
        raise InputError(
            f"cannot {verb} {directory}: it was trained with {' '.join(_option(n, values[n]) for n in differing)}, "
            f"not {' '.join(_option(n, given[n]) for n in differing)}; leave these options out to train with its "
            f"saved settings (only {', '.join(_option(n) for n in TrainConfig.RESUMABLE_CHANGES)} may change)"
        )
    config = TrainConfig(**{**values, **given})
    finished = int(training.get("epoch", 0))
    if not new_run and finished >= config.epochs:
        raise InputError(
            f"nothing to resume in {directory}: it finished {finished} of {config.epochs} epochs; "
            f"ask for more (--epochs {finished + 1} or more)"
        )
    return config, finished


def _option(name: str, value: object = None) -> str:
    """A setting as the command line writes it: ``--hidden-size 256`` (or the bare ``--hidden-size``)."""
    flag = "--" + name.replace("_", "-")
    if value is None:
        return flag
    if isinstance(value, bool):
        return flag if value else f"(no {flag})"
    return f"{flag} {shlex.quote(str(value))}"


def read_stdin() -> list[tuple[int, str]]:
    r"""The lines of standard input with their line numbers, decoded as UTF-8 in every locale.

    Python decodes `sys.stdin` with `surrogateescape` in the C locale, where a Latin-1 byte would
    silently vanish from a word; reading the bytes ourselves makes every locale behave alike. A
    line ends at ``\n``, ``\r\n`` or a lone ``\r``, and nowhere else (`split_lines`). At a terminal, a
    line on stderr first says that standard input is read and how to end it.
    """
    from ..translation.corpus import split_lines

    if getattr(sys.stdin, "isatty", lambda: False)():
        print(STDIN_PROMPT, file=sys.stderr, flush=True)
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
    return list(enumerate(split_lines(text), start=1))


STDIN_PROMPT = (
    "seq2seq-attention translate: no sentence given, reading French sentences from standard input, one per line; "
    "end with Ctrl-D (Ctrl-Z then Enter on Windows), or give sentences as arguments"
)
"""What `translate` says at a terminal when it waits for standard input."""


def run_translate(args: argparse.Namespace) -> int:
    """Translate every good sentence; a refused one is named on stderr and gets an empty output line.

    Output line i belongs to input line i (a blank input line gives a blank output line); the exit
    code is 2 when any sentence was refused. With --all-or-nothing the first refused sentence stops
    the command before anything is printed.
    """
    from ..core.device import parse_device
    from ..translation.translator import SentenceError, load_translator, prepare_sentences

    device = parse_device(args.device)
    translator = load_translator(chosen_checkpoint(args, DEFAULT_PRETRAINED), device)
    if args.sentences:
        numbered = list(enumerate(args.sentences, start=1))
        blank_lines_are_input = True  # an empty argument is a sentence to refuse
    else:
        numbered = read_stdin()
        blank_lines_are_input = False
    problems: dict[int, str] = {}  # input number -> what is wrong with it
    for number, sentence in numbered:
        if not blank_lines_are_input and not sentence.strip():
            continue
        try:
            prepare_sentences(translator.vocabs, [sentence], translator.max_words)
        except SentenceError as error:
            problems[number] = error.problem
            if args.all_or_nothing:
                others = sum(1 for n, s in numbered if n != number and (blank_lines_are_input or s.strip()))
                raise InputError(
                    f"{_refusal(number, error.problem, blank_lines_are_input)}; nothing was translated: "
                    f"--all-or-nothing held back the other {others} sentence(s)"
                ) from None
    good = [(n, s) for n, s in numbered if n not in problems and (blank_lines_are_input or s.strip())]
    translated = dict(zip([n for n, _ in good], _translate([s for _, s in good], translator, args), strict=True))
    for number, problem in problems.items():
        refusal = _refusal(number, problem, blank_lines_are_input)
        print(f"seq2seq-attention translate: error: {refusal}", file=sys.stderr)
    if args.json:
        records = [
            {"source": sentence, "translation": translated.get(number)}
            | ({"error": _refusal(number, problems[number], blank_lines_are_input)} if number in problems else {})
            for number, sentence in numbered
            if number in translated or number in problems
        ]
        print(json.dumps(records, ensure_ascii=False, allow_nan=False))
    else:
        for number, _ in numbered:
            print(translated.get(number, ""))
    return 2 if problems else 0


def _refusal(number: int, problem: str, arguments: bool) -> str:
    return f"sentence {number} {problem}" if arguments else f"line {number} of standard input {problem}"


def _translate(sentences: list[str], translator, args: argparse.Namespace) -> list[str]:
    from ..translation.translator import translate

    if not sentences:
        return []
    return translate(
        translator.model,
        translator.vocabs,
        sentences,
        max_words=translator.max_words,
        max_length=args.max_length,
        beam_size=args.beam_size,
        length_penalty=args.length_penalty,
    )


def run_export(args: argparse.Namespace) -> int:
    check_output_directory(args.out, "--out")
    check_destination(args.out, "an ONNX export", overwrite=args.overwrite, what="--out")
    args.interrupted = lambda: f"nothing in {args.out} was changed (an export lands whole or not at all)"
    with folder_lock(args.out, "--out", wait=False):  # one writer of the export folder at a time
        return _export_locked(args)


def _export_locked(args: argparse.Namespace) -> int:
    from ..translation.export import export_onnx, export_sentences  # only this command needs the ONNX exporter
    from ..translation.translator import load_translator

    check_destination(args.out, "an ONNX export", overwrite=args.overwrite, what="--out")
    translator = load_translator(chosen_checkpoint(args, DEFAULT_PRETRAINED), "cpu")
    split = saved_setting(TrainConfig, translator.training, "split", f"checkpoint {translator.path}")
    targets = [args.out / name for name in EXPORT_NAMES]
    with staged_writes(*targets) as staged:  # the graphs and the sentences land together or not at all
        export_onnx(translator.model, translator.vocabs, staged[0].parent, translator.max_words)
        export_sentences(staged[0].parent, split)
    for path in targets:
        print(f"wrote {path} ({path.stat().st_size:,} bytes)")
    return 0


def run_export_weights(args: argparse.Namespace) -> int:
    check_output_directory(args.out, "--out")
    check_destination(args.out, "a weights export", overwrite=args.overwrite, what="--out")
    args.interrupted = lambda: f"nothing in {args.out} was changed (an export lands whole or not at all)"
    with folder_lock(args.out, "--out", wait=False):  # one writer of the export folder at a time
        from ..translation.export import export_weights
        from ..translation.translator import load_translator

        check_destination(args.out, "a weights export", overwrite=args.overwrite, what="--out")
        translator = load_translator(chosen_checkpoint(args, DEFAULT_PRETRAINED), "cpu")
        split = saved_setting(TrainConfig, translator.training, "split", f"checkpoint {translator.path}")
        written = export_weights(translator.model, translator.vocabs, args.out, translator.max_words, split)
    for path in written:
        print(f"wrote {path} ({path.stat().st_size:,} bytes)")
    return 0


def _score_help() -> str:
    """The --score choices per decoder, from the registries' names (`model.names`): an attending decoder takes every
    registered score, its own default first."""
    per_decoder = [
        f"{name}: {', '.join(dict.fromkeys((DEFAULT_SCORES[name], *SCORE_NAMES)))} (default {DEFAULT_SCORES[name]})"
        for name in ATTENTION_DECODERS
    ]
    without = [name for name in DECODER_NAMES if name not in ATTENTION_DECODERS]
    return f"the attention's score function; {'; '.join(per_decoder)}" + (
        f"; {', '.join(without)} has no attention and takes none" if without else ""
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `train`, `translate`, `export-weights` and `export-onnx` commands."""
    train_parser = subparsers.add_parser(
        "train",
        help=COMMANDS["train"][1],
        description=(
            "Train an encoder-decoder translator on the bundled Tatoeba pairs (the tutorial's filter: at most "
            "--max-words words per side, English starting with 'i am', 'he is', ...). French is the source, "
            "English the target; pairs with zlib.crc32(english) % 10 == 0 are held out (--split by_english; "
            "by_french holds out by the French side). A checkpoint "
            "(safetensors + JSON) is saved after every epoch; at the end the held-out BLEU is measured, "
            "printed and saved with it. An interrupted run, or one trained with --keep-training-state, "
            "continues with --resume and its saved settings (give --epochs to train longer), as often as you like: "
            "a resumed run keeps its training state (--drop-training-state keeps the weights only). One train "
            "at a time writes a --checkpoint folder: a second one into it is refused."
        ),
    )
    train_parser.add_argument(
        "--checkpoint",
        required=True,
        type=Path,
        help="checkpoint directory to write (created with its missing parent folders)",
    )
    train_parser.add_argument(
        "--resume",
        action="store_true",
        help=(
            "continue the run that --checkpoint holds, with its saved settings (only --epochs, --time-budget and "
            "--budget-clock may change; another option that differs from the saved one is refused); "
            "starts afresh when --checkpoint does not exist yet. A run with --average-last above 1 cannot be "
            "resumed (the average of its last epochs is not saved): start a new run from it with --init-from"
        ),
    )
    train_parser.add_argument(
        "--overwrite", action="store_true", help="replace a checkpoint that --checkpoint already holds"
    )
    train_parser.add_argument(
        "--init-from",
        type=Path,
        default=None,
        metavar="CHECKPOINT",
        help=(
            "start a new run (epochs from 1, a fresh optimizer) from the weights and vocabularies of this checkpoint, "
            "with its saved settings (only --epochs, --time-budget and --budget-clock may change): how a checkpoint "
            "that kept its weights only trains on"
        ),
    )
    state = train_parser.add_mutually_exclusive_group()
    state.add_argument(
        "--keep-training-state",
        action="store_true",
        help="keep the optimizer and RNG state in the final checkpoint, to --resume it later with more --epochs "
        "(by default a new run's final checkpoint keeps the weights only; a --resume keeps the state)",
    )
    state.add_argument(
        "--drop-training-state",
        action="store_true",
        help="with --resume: keep the weights only in the final checkpoint (smaller; it cannot be resumed again)",
    )
    add_config_options(train_parser, TrainConfig)
    next(action for action in train_parser._actions if action.dest == "score").help = _score_help()
    train_parser.add_argument("--device", default=None, help="cpu, cuda or cuda:N (default: cuda when available)")
    add_threads_option(train_parser)
    train_parser.add_argument("--no-progress", action="store_true", help="no progress bar (for log files)")
    train_parser.set_defaults(func=run_train)

    translate_parser = subparsers.add_parser(
        "translate",
        help=COMMANDS["translate"][1],
        description=(
            "Translate French sentences to English with greedy decoding (or beam search with --beam-size). "
            "Sentences are normalised like the training data (lowercase, accents dropped, punctuation split "
            f"off), so 'Je suis fatigué.' works. {LIMITS} Standard input is read line by line when no sentence is "
            "given (a line ends at \\n, \\r\\n or a lone \\r): output line i is the translation of input "
            "line i. A blank input line is no sentence: its output line is blank and the exit code stays 0. "
            "A sentence with a word the model never saw (such as '?': the training pairs hold no questions), an "
            'empty argument ("") or one longer than the training limit is refused: each is named on stderr, '
            "its output line is blank, the others are translated, and the exit code is 2. The English comes out "
            "normalised like the training targets: lowercase, punctuation split off, an apostrophe turned into a "
            "space ('i m tired .' is \"I'm tired.\")."
        ),
    )
    translate_parser.add_argument(
        "sentences", nargs="*", help="French sentences (one per argument); read from stdin, one per line, if none"
    )
    add_model_options(translate_parser, DEFAULT_PRETRAINED)
    translate_parser.add_argument(
        "--max-length",
        type=positive_int(MAX_STEPS),
        default=MAX_LENGTH,
        help=f"most output words, <eos> included (default: {MAX_LENGTH})",
    )
    translate_parser.add_argument(
        "--beam-size",
        type=positive_int(MAX_BEAM),
        default=1,
        help="beam width (default: 1, greedy decoding, as the tutorial does)",
    )
    translate_parser.add_argument(
        "--length-penalty",
        type=bounded_float(-MAX_LENGTH_PENALTY, MAX_LENGTH_PENALTY),
        default=1.0,
        help="beam search ranks hypotheses by log-probability / length**this, 0 for no length normalisation "
        "(default: 1.0)",
    )
    translate_parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (default: cpu)")
    translate_parser.add_argument(
        "--json",
        action="store_true",
        help="print a JSON list of {source, translation} (translation null and an error for a refused sentence)",
    )
    translate_parser.add_argument(
        "--all-or-nothing",
        action="store_true",
        help="translate nothing when any sentence is refused: print its error alone and exit 2",
    )
    translate_parser.set_defaults(func=run_translate)

    _add_export_parser(
        subparsers,
        "export-weights",
        "Write weights.bin (the weights the live page computes with: float16, and int8 with a scale per row "
        "or per block of columns, a few rows float16, where the translations of held-out sentences stay those of "
        "the float16 model), vocabularies.json and sentences.json (the French sentences of its training and "
        "held-out split) of an attention translator to --out.",
        "directory to write (docs/assets/live)",
        run_export_weights,
    )

    _add_export_parser(
        subparsers,
        "export-onnx",
        "Write encoder.onnx, step.onnx and vocabularies.json of an attention translator to --out, and "
        "sentences.json (the French sentences of its training and held-out split). The weights "
        "are stored as float16; the graphs compute what the model computes with its weights rounded to float16.",
        "directory to write",
        run_export,
    )


def _add_export_parser(subparsers, name: str, description: str, out_help: str, func) -> None:
    """An export command: an attention translator (`--model` or `--checkpoint`) written to `--out`."""
    parser = subparsers.add_parser(name, help=COMMANDS[name][1], description=description)
    add_model_options(parser, DEFAULT_PRETRAINED, attention=True)  # the live page draws attention weights
    required = parser.add_argument_group("required arguments")
    required.add_argument("--out", type=Path, required=True, help=out_help)
    parser.add_argument("--overwrite", action="store_true", help="replace the export that --out already holds")
    parser.set_defaults(func=func)
