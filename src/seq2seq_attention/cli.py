"""The `seq2seq-attention` command line.

Each command lives in the module that owns its idea and registers itself through a
`register(subparsers)` function listed in `COMMAND_MODULES`. A user error (`UserError`, or a
`ValueError` from an input check) is printed as one line on stderr with exit code 2;
anything else is a bug and keeps its traceback.
"""

import argparse
import importlib
import sys
from collections.abc import Sequence

from . import __version__
from .errors import UserError

COMMAND_MODULES: tuple[str, ...] = (
    "seq2seq_attention.sentiment_cli",
    "seq2seq_attention.translator_cli",
    "seq2seq_attention.attention_cli",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="seq2seq-attention",
        description="Train and use the seq2seq translators and attention models of the seq2seq-attention walkthrough.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except (UserError, ValueError) as error:
        print(f"seq2seq-attention {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"seq2seq-attention {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
