"""The `seq2seq-attention` command line: argument parsing only.

Every command calls the library; nothing outside this package imports it. An `InputError`
(bad input the user can fix) is printed as one line on stderr with exit code 2; anything else
is a bug and keeps its traceback.
"""

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

from .. import __version__
from ..core.errors import InputError
from . import attention, sentiment, translation
from .options import state_ranges

COMMANDS = (translation, attention, sentiment)
"""The modules whose `register(subparsers)` adds their commands, in the order `--help` lists them."""


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr (exit code 2), like every other error here."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="seq2seq-attention",
        description="Train and use the seq2seq translators and attention models of the seq2seq-attention walkthrough.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS:
        module.register(subparsers)
    state_ranges(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except InputError as error:
        print(f"seq2seq-attention {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"seq2seq-attention {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
