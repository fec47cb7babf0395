"""Settings as dataclasses whose fields carry their help text and their valid range.

Each default, range and help text is written once, in the field (`setting`); `check_config`
validates an instance against them (the dataclasses call it in `__post_init__`), and the
command line builds its options from the same fields, so no layer can disagree with another.
Nothing here imports torch: the command line's `--help` and argument errors answer without it.
"""

import dataclasses
import math
import types
import typing
from collections.abc import Callable, Sequence
from typing import Any

from .errors import InputError, echo

MAX_SIZE = 1 << 20
"""The largest layer or vocabulary size a model of this package may be built with (`checks.check_size`)."""


SCHEDULES = ("constant", "cosine")
"""Learning-rate schedules: ``constant``, or ``cosine`` (linear warm-up over the first 5% of the
steps, then a cosine decay to zero at the last step; `training.learning_rate_at`)."""


def is_int(value: object) -> bool:
    """True for an int that is not a bool (``True`` is an int to Python, not a count to a user)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> bool:
    """True for an int or a float that is not a bool."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def setting(
    default: Any,
    help: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    choices: Sequence[object] | Callable[[], Sequence[object]] | None = None,
    cli: bool = True,
) -> Any:
    """A dataclass field with its help text, range (`low`..`high`, each end closed unless `*_open`) and choices.

    `choices` may be a callable, for registries that fill up at import time; `cli=False` keeps
    the field off the command line.
    """
    metadata = {"help": help, "low": low, "high": high, "low_open": low_open, "high_open": high_open}
    metadata.update(choices=choices, cli=cli)
    if isinstance(default, list | dict | set):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def field_choices(field: dataclasses.Field) -> tuple[object, ...] | None:
    """The allowed values of a field, or None when any value of its type in range is allowed."""
    choices = field.metadata.get("choices")
    if choices is None:
        return None
    return tuple(choices() if callable(choices) else choices)


def describe_range(field: dataclasses.Field) -> str:
    """The field's range as interval notation, e.g. ``[0, 1)``; empty when it has none."""
    low, high = field.metadata.get("low"), field.metadata.get("high")
    if low is None and high is None:
        return ""
    left = "(" if field.metadata.get("low_open") or low is None else "["
    right = ")" if field.metadata.get("high_open") or high is None else "]"
    return f"{left}{'-inf' if low is None else _number(low)}, {'inf' if high is None else _number(high)}{right}"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else f"{value:g}"


def base_type(annotation: object) -> tuple[type, bool, bool]:
    """(the scalar type, whether None is allowed, whether it is a sequence of that type)."""
    optional = False
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        parts = [a for a in typing.get_args(annotation) if a is not type(None)]
        optional = len(parts) < len(typing.get_args(annotation))
        annotation = parts[0]
    if typing.get_origin(annotation) in (tuple, list):
        return typing.get_args(annotation)[0], optional, True
    return annotation, optional, False  # type: ignore[return-value]


def check_value(name: str, field: dataclasses.Field, value: object, *, item: bool = False) -> object:
    """Check one value against its field; returns it (ints given for float fields become floats).

    With `item`, `value` is one element of a sequence-valued field.

    Raises:
        InputError: naming the setting, what it takes and what came.
    """
    kind, optional, many = base_type(field.type)
    if value is None and optional:
        return None
    if many and not item:
        if isinstance(value, str) or not isinstance(value, Sequence) or not value:
            raise InputError(f"{name} must be a non-empty list of {kind.__name__}, got {echo(value)}")
        return tuple(check_value(name, field, element, item=True) for element in value)
    if kind is bool:
        if not isinstance(value, bool):
            raise InputError(f"{name} must be true or false, got {echo(value)}")
        return value
    if kind is int and not is_int(value):
        raise InputError(f"{name} must be an integer, got {echo(value)}")
    if kind is float:
        if not is_number(value):
            raise InputError(f"{name} must be a number, got {echo(value)}")
        value = float(value)
        if not math.isfinite(value):
            raise InputError(f"{name} must be a finite number, got {value}")
    if kind is str and not isinstance(value, str):
        raise InputError(f"{name} must be a string, got {echo(value)}")
    choices = field_choices(field)
    if choices is not None and value not in choices:
        raise InputError(f"{name} must be one of {', '.join(map(str, choices))}, got {echo(value)}")
    low, high = field.metadata.get("low"), field.metadata.get("high")
    too_low = low is not None and (value <= low if field.metadata.get("low_open") else value < low)
    too_high = high is not None and (value >= high if field.metadata.get("high_open") else value > high)
    if too_low or too_high:
        raise InputError(f"{name} must lie in {describe_range(field)}, got {echo(value)}")
    return value


def check_config(config: object) -> None:
    """Check every field of a settings dataclass against its `setting` (in place: floats normalised)."""
    for field in dataclasses.fields(config):
        value = check_value(field.name, field, getattr(config, field.name))
        object.__setattr__(config, field.name, value)


def saved_setting(cls: type, training: object, name: str, where: str) -> Any:
    """One setting that a checkpoint saved (``training["config"][name]``), checked with the command line's rules.

    The field's default when the checkpoint saved no config, or a config without this setting.

    Raises:
        InputError: the saved config is not an object, or the value breaks the field's rules
            (``max_words: "six"``), naming `where`.
    """
    field = {f.name: f for f in dataclasses.fields(cls)}[name]
    saved = training.get("config") if isinstance(training, dict) else None
    if saved is None or (isinstance(saved, dict) and name not in saved):
        return field.default
    if not isinstance(saved, dict):
        raise InputError(f"{where} has a malformed training config: it is not an object, got {echo(saved)}")
    try:
        return check_value(name, field, saved[name])
    except InputError as error:
        raise InputError(f"{where} has a malformed training config: {error}") from None
