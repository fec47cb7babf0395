"""Errors a user can fix (bad input, a missing or broken file), as opposed to bugs."""


class UserError(Exception):
    """A problem with what the user gave us; the CLI prints it as one line and exits with 2."""
