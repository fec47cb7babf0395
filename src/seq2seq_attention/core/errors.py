"""The one error type for input a user can fix, as opposed to a bug (defined with the model, whose builders raise it
too: `model.errors`)."""

from ..model.rules import ECHO_LIMIT as ECHO_LIMIT
from ..model.rules import InputError as InputError
from ..model.rules import echo as echo
