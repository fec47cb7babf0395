"""The `seq2seq-attention` command line: argument parsing only.

Every command calls the library; nothing outside this package imports it. An `InputError`
(bad input the user can fix) is printed as one line on stderr with exit code 2; anything else
is a bug and keeps its traceback.

The commands' modules are imported only when their command is named: `--help`, `--version`,
`models` and a mistyped command import neither torch nor matplotlib and answer at once. The one
table of commands (`COMMANDS`) gives each its module and the line `--help` shows for it.
"""

import argparse
import difflib
import importlib
import os
import re
import sys
from collections.abc import Sequence
from typing import NoReturn

from .. import __version__
from ..core.errors import InputError

COMMANDS: dict[str, tuple[str, str]] = {
    "train": ("translation", "train a French-to-English translator on the bundled Tatoeba pairs"),
    "translate": ("translation", "translate short French sentences to English (`models` says which ones)"),
    "models": ("models", "list the packaged models, what each is, its BLEU and the sentences it takes"),
    "export-weights": (
        "translation",
        "export a translator's weights for the live page (weights.bin, its vocabularies and sentences)",
    ),
    "export-onnx": (
        "translation",
        "export a translator to ONNX graphs (encoder and decoder step, float16 weights)",
    ),
    "plot-attention": ("attention", "draw the attention heatmap of one translated sentence"),
    "sentiment-train": ("sentiment", "train a sentiment classifier on the bundled labelled sentences"),
    "sentiment-predict": ("sentiment", "classify sentences with a trained checkpoint"),
    "sentiment-attention-figure": (
        "sentiment",
        "draw the attention weights over the words of a few test sentences",
    ),
}
"""Every command: the module of this package that registers it (`register(subparsers)`), and its one-line help,
in the order `--help` lists them."""


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr (exit code 2), like every other error here."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}{self.suggestion(message)} (see {self.prog} --help)\n")

    def suggestion(self, message: str) -> str:
        """'; did you mean --model?' for a mistyped option or choice (difflib: argparse suggests only from 3.14)."""
        if message.startswith("unrecognized arguments: "):
            known = [option for parser in _parsers(self) for option in parser._option_string_actions]
            typed = [word.split("=", 1)[0] for word in message.split(": ", 1)[1].split() if word.startswith("-")]
        else:
            match = re.search(r"invalid choice: '(.*)' \(choose from (.*)\)$", message)
            if match is None:
                return ""
            known, typed = [f"'{name}'" for name in re.findall(r"'([^']*)'", match[2])], [f"'{match[1]}'"]
        guesses = [close[0] for word in typed if (close := difflib.get_close_matches(word, known, n=1, cutoff=0.6))]
        return f"; did you mean {' or '.join(dict.fromkeys(guesses))}?" if guesses else ""


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """`parser` and the parsers of its commands (a command whose module is not imported has no options yet)."""
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in action.choices.values():
                found += _parsers(command)
    return found


def named_command(argv: Sequence[str]) -> str | None:
    """The command `argv` names (its first word that is not an option), if it is one of `COMMANDS`."""
    first = next((word for word in argv if not word.startswith("-")), None)
    return first if first in COMMANDS else None


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of the command line, with the options of `command` (and of the commands its module registers);
    every other command is listed with its help line only, its module not imported."""
    parser = OneLineParser(
        prog="seq2seq-attention",
        description="Train and use the seq2seq translators and attention models of the seq2seq-attention walkthrough.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    module = None if command is None else importlib.import_module(f".{COMMANDS[command][0]}", __name__)
    for name, (where, help_line) in COMMANDS.items():
        if module is not None and where == COMMANDS[command][0]:
            if name == command:
                module.register(subparsers)  # all of the module's commands, in its order
            continue
        subparsers.add_parser(name, help=help_line, add_help=False)
    state_ranges(parser)
    return parser


def state_ranges(parser: argparse.ArgumentParser) -> None:
    """Write the range of every option whose type enforces one into its help, in every command.

    The settings' options say it already (`add_config_options`); the others (`positive_int`,
    `bounded_float`) get ``in [1, 1000]`` before their default.
    """
    for action in parser._actions:
        span = getattr(action.type, "range", "")
        if span and action.help and span not in action.help:
            head, default, tail = action.help.partition(" (default:")
            action.help = f"{head}; in {span}{default}{tail}"
        if isinstance(action, argparse._SubParsersAction):
            for command in action.choices.values():
                state_ranges(command)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = named_command(argv)
    parser = build_parser(command)
    args, extra = parser.parse_known_args(argv)
    if extra:  # said by the command's own parser, which knows its options (and names itself)
        commands = next(a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        commands.get(args.command, parser).error(f"unrecognized arguments: {' '.join(extra)}")
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except InputError as error:
        print(f"seq2seq-attention {args.command}: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader left (`| head`): what it did not read is not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python flushes
        return 0
    except KeyboardInterrupt:
        kept = getattr(args, "interrupted", None)
        said = f": {kept()}" if callable(kept) else ""
        print(f"seq2seq-attention {args.command}: interrupted{said}", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
