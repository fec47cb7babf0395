"""Attention's input contracts: the attention modules, `masked_softmax` and the score functions.

A wrong rank, size, dtype or device raises one `ValueError` that names the argument, what was expected and what
came, before any torch operation can fail with its own message. Mixing devices is checked on the `meta` device (no
CUDA needed: a check that comes too late lets torch raise a `RuntimeError`/`NotImplementedError` instead) and with
real CUDA tensors where CUDA is present. Non-finite values at padded positions never reach the context. The
formulas themselves are checked in `test_scores.py` and `test_properties.py`.
"""

import math
from collections.abc import Callable

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from support import clear_error, mixed_device_tests, module_on, raises_exactly, refused

from seq2seq_attention import BahdanauAttention, GeneralAttention, masked_softmax, scaled_dot_score

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
        r"query must be \(B, T, Hq\) with Hq=8, got \(2, 8\)",
    ),
    (
        "attention-query-size",
        lambda: _attention()(torch.randn(B, 1, H + 1), torch.randn(B, S, H)),
        r"query must be \(B, T, Hq\) with Hq=8, got \(2, 1, 9\)",
    ),
    (
        "attention-keys-batch",
        lambda: _attention()(torch.randn(B, 1, H), torch.randn(B + 1, S, H)),
        r"keys must be \(B, S, Hk\) with B=2, Hk=8, got \(3, 5, 8\)",
    ),
    (
        "attention-query-dtype",
        lambda: _attention()(torch.ones(B, 1, H, dtype=torch.long), torch.randn(B, S, H)),
        r"query must be a floating-point tensor, got torch\.int64",
    ),
    (
        "attention-mask-dtype",
        lambda: _attention()(torch.randn(B, 1, H), torch.randn(B, S, H), _mask().long()),
        r"mask must be a torch\.bool mask \(True = real token\), got torch\.int64",
    ),
    (
        "attention-mask-size",
        lambda: _attention()(torch.randn(B, 1, H), torch.randn(B, S, H), torch.ones(B, S + 1, dtype=torch.bool)),
        r"mask must be \(B, S\) with B=2, S=5, got \(2, 6\)",
    ),
    (
        "attention-proj-keys-size",
        lambda: _attention()(torch.randn(B, 1, H), torch.randn(B, S, H), None, torch.randn(B, S, H + 1)),
        r"proj_keys must be \(B, S, H\) with B=2, S=5, H=8, got \(2, 5, 9\)",
    ),
    (
        "masked-softmax-rank",
        lambda: masked_softmax(torch.randn(B, S), _mask()),
        r"scores must be \(B, T, S\), got \(2, 5\)",
    ),
    (
        "masked-softmax-mask-size",
        lambda: masked_softmax(torch.randn(B, 1, S), torch.ones(B, S - 1, dtype=torch.bool)),
        r"mask must be \(B, S\) with B=2, S=5, got \(2, 4\)",
    ),
    (
        "masked-softmax-mask-dtype",
        lambda: masked_softmax(torch.randn(B, 1, S), _mask().float()),
        r"mask must be a torch\.bool mask \(True = real token\), got torch\.float32",
    ),
    (
        "masked-softmax-scores-dtype",
        lambda: masked_softmax(torch.ones(B, 1, S, dtype=torch.long), _mask()),
        r"scores must be a floating-point tensor, got torch\.int64",
    ),
]


@pytest.mark.parametrize(("call", "message"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_bad_input_raises_one_clear_value_error(call: Callable[[], object], message: str):
    raises_exactly(call, message)


# Mixed devices: each call puts exactly one thing (an input, or the module) on `other`.
def _device_cases(other: str) -> list[tuple[str, Callable[[], object], str]]:
    return [
        (
            "attention-keys",
            lambda: _attention()(torch.randn(B, 1, H), torch.randn(B, S, H, device=other)),
            rf"all inputs must be on one device, got query on cpu, keys on {other}\S*",
        ),
        (
            "attention-mask",
            lambda: _attention()(torch.randn(B, 1, H), torch.randn(B, S, H), _mask(other)),
            rf"all inputs must be on one device, got query on cpu, keys on cpu, mask on {other}\S*",
        ),
        (
            "attention-module",
            lambda: module_on(_attention, other)(torch.randn(B, 1, H), torch.randn(B, S, H)),
            rf"query and keys are on cpu but BahdanauAttention's parameters are on {other}\S*; .*",
        ),
        (
            "masked-softmax-mask",
            lambda: masked_softmax(torch.randn(B, 1, S), _mask(other)),
            rf"all inputs must be on one device, got scores on cpu, mask on {other}\S*",
        ),
    ]


test_mixed_devices_are_caught_before_torch, test_mixing_cpu_and_cuda_is_caught_before_torch = mixed_device_tests(
    _device_cases
)


# The score functions and every attention module: each wrong input raises one ValueError that names the
# argument and says what came ("got ...").
def _scores():
    from seq2seq_attention import (
        BahdanauAttention,
        DotAttention,
        GeneralAttention,
        ScaledDotAttention,
        dot_score,
        scaled_dot_score,
    )

    return {
        "dot_score": dot_score,
        "scaled_dot_score": scaled_dot_score,
        "DotAttention": DotAttention(H),
        "ScaledDotAttention": ScaledDotAttention(H),
        "GeneralAttention": GeneralAttention(H),
        "BahdanauAttention": BahdanauAttention(H),
    }


SCORE_CASES: list[tuple[str, Callable[[], object], str]] = []
for _name in (
    "dot_score",
    "scaled_dot_score",
    "DotAttention",
    "ScaledDotAttention",
    "GeneralAttention",
    "BahdanauAttention",
):
    SCORE_CASES += [
        (f"{_name}-query-rank", lambda n=_name: _scores()[n](torch.randn(B, H), torch.randn(B, S, H)), "query"),
        (
            f"{_name}-keys-size",
            lambda n=_name: _scores()[n](torch.randn(B, 1, H), torch.randn(B, S, H + 1)),
            "keys|query and keys|one size",
        ),
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
        (
            f"{_name}-keys-device",
            lambda n=_name: _scores()[n](torch.randn(B, 1, H), torch.randn(B, S, H, device="meta")),
            "device",
        ),
    ]


@pytest.mark.parametrize(("call", "names"), [c[1:] for c in SCORE_CASES], ids=[c[0] for c in SCORE_CASES])
def test_every_score_raises_one_clear_value_error(call: Callable[[], object], names: str):
    clear_error(call, names)


def test_autocast_inputs_pass_the_dtype_check():
    attention = BahdanauAttention(H)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        context, weights = attention(torch.randn(B, 1, H).bfloat16(), torch.randn(B, S, H).bfloat16())
    assert context.shape == (B, 1, H) and weights.shape == (B, 1, S)


def test_float64_inputs_to_float32_modules_are_named():
    query, keys = torch.randn(2, 1, 8, dtype=torch.float64), torch.randn(2, 5, 8, dtype=torch.float64)
    for attention in (GeneralAttention(8), BahdanauAttention(8)):
        refused(lambda attention=attention: attention(query, keys), "query", "float64", "float32")
    attention = BahdanauAttention(8)
    q32, k32 = query.float(), keys.float()
    refused(lambda: attention(q32, k32, proj_keys=attention.project_keys(k32).double()), "proj_keys", "float64")


def test_scaled_dot_score_without_features_is_refused():
    refused(lambda: scaled_dot_score(torch.randn(2, 1, 0), torch.randn(2, 3, 0)), "H=0")


@settings(max_examples=30, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 6), min_size=1, max_size=4),
    poison=st.sampled_from([math.nan, math.inf, -math.inf, 1e38]),
    score=st.sampled_from(["additive", "dot", "scaled_dot", "general"]),
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
