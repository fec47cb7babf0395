"""Search: greedy and beam search refuse a bad source (their annotations), the translator a bad length, size or
length penalty, each with one clear message.

How the search decodes (scores, ties, length normalisation, batching) is checked in `test_performance.py` and
`test_train.py`; the command line's side of the same options in `test_cli.py`.
"""

import math
from collections.abc import Callable

import pytest
import torch
from support import clear_error, random_tokens, refused, tiny_translator, tiny_vocabs

from seq2seq_attention import translate
from seq2seq_attention.model.search import beam_search_decode, greedy_decode

pytestmark = pytest.mark.usefixtures("one_thread")
B, S, H, V = 2, 5, 8, 11
VOCABS = tiny_vocabs()


def _greedy(source, lengths):
    return greedy_decode(tiny_translator("bahdanau", (V, V)), source, lengths)


LENGTHS = torch.tensor([S, 2])
GREEDY_CASES: list[tuple[str, Callable[[], object], str]] = [
    ("greedy_decode-source-rank", lambda: _greedy(random_tokens(S), LENGTHS), "source"),
    ("greedy_decode-source-dtype", lambda: _greedy(torch.ones(B, S), LENGTHS), "source"),
    ("greedy_decode-lengths-size", lambda: _greedy(random_tokens(B, S), torch.tensor([S, 2, 1])), "lengths"),
]


@pytest.mark.parametrize(("call", "names"), [c[1:] for c in GREEDY_CASES], ids=[c[0] for c in GREEDY_CASES])
def test_greedy_decode_raises_one_clear_value_error(call: Callable[[], object], names: str):
    clear_error(call, names)


@pytest.mark.parametrize("penalty", [math.nan, math.inf, -math.inf, 1e300, "1", True])
def test_length_penalty_must_be_a_finite_number(penalty):
    refused(
        lambda: translate(tiny_translator(), VOCABS, ["je suis la ."], beam_size=2, length_penalty=penalty),
        "length_penalty",
    )
    refused(lambda: translate(tiny_translator(), VOCABS, ["je suis la ."], length_penalty=penalty), "length_penalty")


@pytest.mark.parametrize(
    ("name", "value"), [("max_length", 10**12), ("max_length", 2.0), ("beam_size", 2.0), ("beam_size", 0)]
)
def test_search_sizes_are_ints_in_range(name, value):
    """The translator checks the search's numbers where a user hands them over; the search loops trust them, except
    for their types, which their annotations state."""
    options = {"max_length": 5, "beam_size": 2, name: value}
    refused(lambda: translate(tiny_translator(), VOCABS, ["je suis la ."], **options), name)
    if isinstance(value, float):
        source, lengths = torch.tensor([[4, 2]]), torch.tensor([2])
        refused(lambda: beam_search_decode(tiny_translator(), source, lengths, **options), name, "int", "got 2.0")
