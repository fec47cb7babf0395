"""Command-line options built from the settings dataclasses, and checks of paths before any work."""

import argparse
import dataclasses
import math
import os
import tempfile
from pathlib import Path
from typing import Any

from ..core.config import base_type, check_value, describe_range, field_choices
from ..core.errors import InputError, echo
from ..core.files import check_path_fits
from ..translation.pretrained import packaged_checkpoint, packaged_names


def _parser_for(kind: type, name: str, field: dataclasses.Field | None = None):
    def parse(text: str) -> object:
        try:
            value = kind(text)
        except ValueError:
            what = {int: "an integer", float: "a number"}.get(kind, kind.__name__)
            raise argparse.ArgumentTypeError(f"expected {what}, got {echo(text)}") from None
        if kind is float and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"expected a finite number, got {echo(text)}")
        if field is not None and field_choices(field) is None:  # argparse itself reports a wrong choice
            try:
                check_value(name, field, value, item=True)
            except InputError as error:
                raise argparse.ArgumentTypeError(str(error).removeprefix(f"{name} ")) from None
        return value

    parse.__name__ = name
    parse.range = describe_range(field) if field is not None else ""  # stated in --help (`state_ranges`)
    return parse


def add_config_options(parser: argparse.ArgumentParser, cls: type, skip: tuple[str, ...] = ()) -> None:
    """One ``--field-name`` option per field of the settings dataclass `cls`, with its help, default and range.

    An option that is not given is absent from the parsed namespace (`argparse.SUPPRESS`), so that
    `given_settings` can tell what the user asked for; `config_from_args` fills in the field's default.
    """
    for field in dataclasses.fields(cls):
        if field.name in skip or not field.metadata.get("cli", True):
            continue
        flag = "--" + field.name.replace("_", "-")
        kind, _, many = base_type(field.type)
        default = field.default if field.default is not dataclasses.MISSING else field.default_factory()
        shown = " ".join(map(str, default)) if many else default
        extra = describe_range(field)
        help_text = f"{field.metadata['help']}" + (f"; in {extra}" if extra else "")
        help_text += "" if default is None else f" (default: {shown})"
        choices = field_choices(field)
        if kind is bool:
            parser.add_argument(flag, action="store_true", default=argparse.SUPPRESS, help=field.metadata["help"])
            continue
        options: dict[str, Any] = {
            "type": _parser_for(kind, field.name, field),
            "default": argparse.SUPPRESS,
            "help": help_text,
        }
        if choices is not None:
            options["choices"] = choices
        if many:
            options["nargs"] = "+"
        parser.add_argument(flag, dest=field.name, **options)


def given_settings(cls: type, args: argparse.Namespace) -> dict[str, Any]:
    """The fields of the settings dataclass `cls` that the command line named, with their values."""
    return {field.name: getattr(args, field.name) for field in dataclasses.fields(cls) if hasattr(args, field.name)}


def config_from_args(cls: type, args: argparse.Namespace, **overrides: object) -> Any:
    """The settings dataclass from the parsed options and the fields' defaults (`__post_init__` checks ranges)."""
    values = given_settings(cls, args)
    values.update(overrides)
    return cls(**values)


DEFAULT_THREADS = 1
"""torch's CPU threads for training, both `train` and `sentiment-train` (`add_threads_option`)."""

THREADS_HELP = (
    "torch CPU threads (default: 1, for both trainers: measured on a 2-core machine shared with busy processes, "
    "an epoch of 640 pairs took 19-35 s on 1 thread and 176 s to over 240 s on 2; raise it only on idle cores; "
    "CONTRIBUTING.md, 'Measurements behind the defaults')"
)


def add_threads_option(parser: argparse.ArgumentParser) -> None:
    """`--threads`, with the one default thread policy of both trainers."""
    parser.add_argument("--threads", type=positive_int(1024), default=DEFAULT_THREADS, help=THREADS_HELP)


def add_model_options(parser: argparse.ArgumentParser, default: str, *, attention: bool = False) -> None:
    """`--model NAME` (a packaged checkpoint, found from any directory) or `--checkpoint PATH`, not both;
    with `attention`, `--model` offers only the packaged models with an attention (`plot-attention`, `export-onnx`)."""
    group = parser.add_mutually_exclusive_group()
    names = packaged_names(attention=attention)
    group.add_argument(
        "--model",
        choices=names,
        default=None,
        help=f"a packaged model{' with attention' if attention else ''}: {', '.join(names)} (default: {default}; "
        "`seq2seq-attention models` describes them)",
    )
    group.add_argument("--checkpoint", type=Path, default=None, help="a checkpoint directory (one `train` wrote)")


def chosen_checkpoint(args: argparse.Namespace, default: str) -> Path:
    """The checkpoint directory that `--model` or `--checkpoint` names, else the packaged `default`."""
    if args.checkpoint is not None:
        return args.checkpoint
    return packaged_checkpoint(args.model or default)


def positive_int(limit: int):
    """An argparse type: an integer in [1, limit]."""
    field = dataclasses.field(metadata={"low": 1, "high": limit})
    field.type = int  # a bare Field, checked like a dataclass field of type int
    return _parser_for(int, "value", field)


def bounded_float(low: float, high: float):
    """An argparse type: a finite number in [low, high] (stated in --help by `cli.state_ranges`)."""
    field = dataclasses.field(metadata={"low": low, "high": high})
    field.type = float
    return _parser_for(float, "value", field)


def check_output_directory(path: Path, what: str) -> None:
    """Check, before any work, that `path` is (or can become) a directory we may write in.

    Every command follows one rule for missing folders: the write creates them (with their missing
    parents), and a failed write removes those it created.

    Raises:
        InputError: the path is a file, lies under a file, is too long, or cannot be written.
    """
    check_path_fits(path, what)
    for parent in [path, *path.parents]:
        if parent.exists():
            if not parent.is_dir():
                raise InputError(f"{what} {str(path)!r}: {str(parent)!r} is a file, expected a directory")
            break
    _check_writable(parent if not path.exists() else path, what, path)


def check_output_file(path: Path, what: str, suffixes: tuple[str, ...]) -> None:
    """Check, before any work, that `path` names a file with one of `suffixes` that we may write.

    Its folder may be missing: the write creates it, like every command's (`check_output_directory`).

    Raises:
        InputError: a wrong suffix, a directory at `path`, a file among its parents, a path too long, or no write
            permission.
    """
    if path.suffix.lower() not in suffixes:
        raise InputError(f"{what} must end in {', '.join(suffixes)}, got {echo(str(path))}")
    check_path_fits(path, what, file=True)
    if path.is_dir():
        raise InputError(f"{what} {str(path)!r} is a directory, expected a file name")
    check_output_directory(path.parent, what)


def _check_writable(directory: Path, what: str, path: Path) -> None:
    try:
        handle, name = tempfile.mkstemp(dir=directory, prefix=".write-test-")
    except OSError as error:
        raise InputError(f"{what} {str(path)!r} cannot be written: {error.strerror}") from None
    os.close(handle)
    os.unlink(name)
