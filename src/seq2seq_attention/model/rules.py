"""The one error type for input a user can fix, as opposed to a bug, and the value rules a model's builder checks
once, where the model is built (sizes, dropout, the parameter budget).

The type lives with the model because the builders raise it; the workbench raises the same type (`core.errors`
names it there too).
"""

ECHO_LIMIT = 200
"""The most characters of a user's input that an error message repeats."""

MAX_SIZE = 1 << 20
"""The largest layer or vocabulary size a model of this package may be built with."""

MAX_PARAMETERS = 1 << 28
"""The most parameters a model may have here (about 1 GiB of float32): a checkpoint or a setting
that asks for more is refused before anything is allocated."""


class InputError(ValueError):
    """Bad input: a wrong shape, dtype, device, word, number, path or checkpoint.

    The message names the argument, what was expected and what came. It is a `ValueError`, so
    code that catches `ValueError` keeps working; the command line catches this type only (one
    line on stderr, exit code 2), so a real bug keeps its traceback.
    """


def echo(value: object, limit: int = ECHO_LIMIT) -> str:
    """`repr(value)`, cut to `limit` characters, for repeating a user's input in a message."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 1]}…"


def require(condition: bool, message: str) -> None:
    """Raise `InputError(message)` unless `condition` holds: one line per value rule."""
    if not condition:
        raise InputError(message)


def check_parameter_budget(what: str, estimate: int) -> None:
    """Refuse a model whose estimated parameter count exceeds `MAX_PARAMETERS`, before anything is allocated."""
    limit = MAX_PARAMETERS
    require(estimate <= limit, f"{what} would have about {estimate:,} parameters; the limit is {limit:,}")
