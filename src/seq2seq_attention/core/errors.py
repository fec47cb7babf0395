"""The one error type for input a user can fix, as opposed to a bug."""

ECHO_LIMIT = 200
"""The most characters of a user's input that an error message repeats."""


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
