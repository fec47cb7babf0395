"""Attention's input contracts: the attention modules, `masked_softmax` and the score functions.

A wrong rank, size or dtype, against the annotations of the signature (jaxtyping, checked by beartype), raises one
`ArgumentError` (an `InputError`, so a `ValueError`) of one line that names the function, the argument, the annotation
with the sizes already bound and what came. What only the module's weights know (a query of another size, a float64
query for float32 weights, another device) is torch's own one-line `RuntimeError`: the model trusts its tensors and
does not check them twice. Non-finite values at padded positions never reach the context. The formulas themselves
are checked in `test_scores.py` and `test_properties.py`.
"""

import math
from collections.abc import Callable

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from support import clear_error, raises_exactly

from seq2seq_attention import SCORES, BahdanauAttention, masked_softmax
from seq2seq_attention.model.tensors import ArgumentError

pytestmark = pytest.mark.usefixtures("one_thread")
B, S, H = 2, 5, 8


def _mask(device: str = "cpu") -> torch.Tensor:
    return torch.tensor([[True] * S, [True, True, False, False, False]], device=device)  # (B, S)


def _attention() -> BahdanauAttention:
    return BahdanauAttention(H)


# (id, call, a regular expression the whole message must match)
CASES: list[tuple[str, Callable[[], object], str]] = [
    (
        "attention-query-rank",
        lambda: _attention()(torch.randn(B, H), torch.randn(B, S, H)),
        r"Attention\.forward: query must be Float\[Tensor, 'B T Hq'\], got f32\[2,8\]",
    ),
    (
        "attention-keys-batch",
        lambda: _attention()(torch.randn(B, 1, H), torch.randn(B + 1, S, H)),
        r"Attention\.forward: keys must be Float\[Tensor, 'B S Hk'\] with B=2, T=1, Hq=8, got f32\[3,5,8\]",
    ),
    (
        "attention-query-dtype",
        lambda: _attention()(torch.ones(B, 1, H, dtype=torch.long), torch.randn(B, S, H)),
        r"Attention\.forward: query must be Float\[Tensor, 'B T Hq'\], got i64\[2,1,8\]",
    ),
    (
        "attention-mask-dtype",
        lambda: _attention()(torch.randn(B, 1, H), torch.randn(B, S, H), _mask().long()),
        r"Attention\.forward: mask must be Bool\[Tensor, 'B S'\] \| None with .*, got i64\[2,5\]",
    ),
    (
        "attention-mask-size",
        lambda: _attention()(torch.randn(B, 1, H), torch.randn(B, S, H), torch.ones(B, S + 1, dtype=torch.bool)),
        r"Attention\.forward: mask must be Bool\[Tensor, 'B S'\] \| None with B=2, T=1, Hq=8, S=5, Hk=8, "
        r"got bool\[2,6\]",
    ),
    (
        "attention-proj-keys-size",
        lambda: _attention()(torch.randn(B, 1, H), torch.randn(B, S, H), None, torch.randn(B, S - 1, H)),
        r"Attention\.forward: proj_keys must be Float\[Tensor, 'B S Hp'\] \| None with .*S=5.*, got f32\[2,4,8\]",
    ),
    (
        "masked-softmax-rank",
        lambda: masked_softmax(torch.randn(B, S), _mask()),
        r"masked_softmax: scores must be Float\[Tensor, 'B T S'\], got f32\[2,5\]",
    ),
    (
        "masked-softmax-mask-size",
        lambda: masked_softmax(torch.randn(B, 1, S), torch.ones(B, S - 1, dtype=torch.bool)),
        r"masked_softmax: mask must be Bool\[Tensor, 'B S'\] \| None with B=2, T=1, S=5, got bool\[2,4\]",
    ),
    (
        "masked-softmax-mask-dtype",
        lambda: masked_softmax(torch.randn(B, 1, S), _mask().float()),
        r"masked_softmax: mask must be Bool\[Tensor, 'B S'\] \| None with B=2, T=1, S=5, got f32\[2,5\]",
    ),
    (
        "masked-softmax-scores-dtype",
        lambda: masked_softmax(torch.ones(B, 1, S, dtype=torch.long), _mask()),
        r"masked_softmax: scores must be Float\[Tensor, 'B T S'\], got i64\[2,1,5\]",
    ),
]


@pytest.mark.parametrize(("call", "message"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_bad_input_raises_one_clear_shape_error(call: Callable[[], object], message: str):
    raises_exactly(call, message, ArgumentError)


# What the annotations cannot say (the module's own sizes, dtype and device): torch's one-line RuntimeError.
TORCH_CASES: list[tuple[str, Callable[[], object], str]] = [
    ("query-size", lambda: _attention()(torch.randn(B, 1, H + 1), torch.randn(B, S, H)), "cannot be multiplied"),
    ("keys-device", lambda: _attention()(torch.randn(B, 1, H), torch.randn(B, S, H, device="meta")), "device"),
    ("module-device", lambda: _attention().to("meta")(torch.randn(B, 1, H), torch.randn(B, S, H)), "device"),
    (
        "mask-device",
        lambda: masked_softmax(torch.randn(B, 1, S), torch.ones(B, S, dtype=torch.bool, device="meta")),
        "device",
    ),
    (
        "query-float64",
        lambda: _attention()(torch.randn(B, 1, H, dtype=torch.float64), torch.randn(B, S, H, dtype=torch.float64)),
        "dtype",
    ),
]


@pytest.mark.parametrize(("call", "words"), [c[1:] for c in TORCH_CASES], ids=[c[0] for c in TORCH_CASES])
def test_what_only_the_weights_know_is_torchs_one_line_error(call: Callable[[], object], words: str):
    with pytest.raises(RuntimeError, match=words) as caught:
        call()
    assert "\n" not in str(caught.value).strip()


# The score functions and every attention module: each wrong input raises one ValueError that names the
# argument and says what came ("got ...").
def _scores():
    """Every registered attention (`SCORES`), and the two score functions."""
    from seq2seq_attention import SCORES, dot_score, scaled_dot_score

    return {"dot_score": dot_score, "scaled_dot_score": scaled_dot_score} | {
        attention.__name__: attention(H) for attention in SCORES.values()
    }


SCORE_CASES: list[tuple[str, Callable[[], object], str]] = []
for _name in _scores():
    SCORE_CASES += [
        (f"{_name}-query-rank", lambda n=_name: _scores()[n](torch.randn(B, H), torch.randn(B, S, H)), "query"),
        (
            f"{_name}-keys-batch",
            lambda n=_name: _scores()[n](torch.randn(B, 1, H), torch.randn(B + 1, S, H)),
            "keys",
        ),
        (
            f"{_name}-query-dtype",
            lambda n=_name: _scores()[n](torch.ones(B, 1, H, dtype=torch.long), torch.randn(B, S, H)),
            "query",
        ),
    ]


@pytest.mark.parametrize(("call", "names"), [c[1:] for c in SCORE_CASES], ids=[c[0] for c in SCORE_CASES])
def test_every_score_raises_one_clear_shape_error(call: Callable[[], object], names: str):
    clear_error(call, names)


def test_autocast_inputs_pass_the_dtype_check():
    attention = BahdanauAttention(H)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        context, weights = attention(torch.randn(B, 1, H).bfloat16(), torch.randn(B, S, H).bfloat16())
    assert context.shape == (B, 1, H) and weights.shape == (B, 1, S)


@settings(max_examples=30, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 6), min_size=1, max_size=4),
    poison=st.sampled_from([math.nan, math.inf, -math.inf, 1e38]),
    score=st.sampled_from(list(SCORES)),
)
def test_padding_never_leaks_into_the_context(lengths, poison, score):
    from seq2seq_attention import build_attention, lengths_to_mask

    torch.manual_seed(0)
    attention = build_attention(score, 8)
    S = max(lengths + [1])
    keys = torch.randn(len(lengths), S, 8)
    mask = lengths_to_mask(torch.tensor(lengths), S)  # (B, S)
    keys = keys.masked_fill(~mask.unsqueeze(2), poison)  # padded positions hold garbage
    query = torch.randn(len(lengths), 1, 8)
    with torch.no_grad():
        context, weights = attention(query, keys, mask)
    assert torch.isfinite(context).all() and torch.isfinite(weights).all()
    assert torch.equal(weights[~mask.unsqueeze(1)], torch.zeros_like(weights[~mask.unsqueeze(1)]))
    clean = keys.masked_fill(~mask.unsqueeze(2), 0.0)
    with torch.no_grad():
        expected, _ = attention(query, clean, mask)
    torch.testing.assert_close(context, expected)
    for b, n in enumerate(lengths):
        if n == 0:  # a fully padded row: zero weights, zero context
            assert torch.equal(context[b], torch.zeros_like(context[b]))
