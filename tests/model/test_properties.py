"""Properties of the encoder, the attention and the decoders over random sizes and random padding.

hypothesis draws B, S, T, H, the vocabulary size V, the real lengths (so random padding) and
masks that may pad a whole row. For every draw: the shapes hold, the attention weights of a
row sum to 1 over its real positions and are exactly 0 on its padding, a row with no real
position stays finite (all-zero weights, a zero context), and log-probabilities are finite
and normalised. Sizes are tiny and examples few so that the file runs in a few seconds.
"""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from seq2seq_attention import (
    PAD_IDX,
    AttnDecoderRNN,
    BahdanauAttention,
    DecoderRNN,
    EncoderRNN,
    LuongAttnDecoderRNN,
    masked_softmax,
)
from seq2seq_attention.model.search import greedy_search

pytestmark = pytest.mark.usefixtures("one_thread")
FAST = settings(max_examples=30, deadline=None, database=None)
SPECIALS = 4  # <pad>, <sos>, <eos>, <unk>


@st.composite
def padded_batches(draw, max_b: int = 4, max_s: int = 6):
    """(B, S, lengths, mask): lengths in [1, S], mask True on the first `length` positions."""
    b = draw(st.integers(1, max_b))
    s = draw(st.integers(1, max_s))
    lengths = torch.tensor(draw(st.lists(st.integers(1, s), min_size=b, max_size=b)))
    mask = torch.arange(s).unsqueeze(0) < lengths.unsqueeze(1)  # (B, S)
    return b, s, lengths, mask


@st.composite
def masks(draw, max_b: int = 4, max_s: int = 6):
    """(B, S) bool masks of any pattern, whole rows of padding included."""
    b = draw(st.integers(1, max_b))
    s = draw(st.integers(1, max_s))
    cells = draw(st.lists(st.booleans(), min_size=b * s, max_size=b * s))
    return torch.tensor(cells).view(b, s)


def assert_attention_rows(weights: torch.Tensor, mask: torch.Tensor) -> None:
    """weights (B, T, S): rows sum to 1 over real positions, exactly 0 on padding, 0 where all is padding."""
    assert torch.isfinite(weights).all()
    keep = mask.unsqueeze(1).expand_as(weights)  # (B, T, S)
    assert (weights[~keep] == 0).all(), "padding got weight"
    sums = weights.sum(dim=-1)  # (B, T)
    has_real = mask.any(dim=1)  # (B,)
    torch.testing.assert_close(sums[has_real], torch.ones_like(sums[has_real]), atol=1e-5, rtol=0)
    assert (sums[~has_real] == 0).all(), "a fully padded row must have all-zero weights"
    assert (weights >= 0).all()


@FAST
@given(
    mask=masks(),
    t=st.integers(1, 4),
    scale=st.sampled_from([1e-3, 1.0, 1e3, 1e30]),
    dtype=st.sampled_from([torch.float32, torch.float64]),
    seed=st.integers(0, 2**16),
)
def test_masked_softmax(mask: torch.Tensor, t: int, scale: float, dtype: torch.dtype, seed: int):
    b, s = mask.shape
    scores = torch.randn(b, t, s, generator=torch.Generator().manual_seed(seed), dtype=dtype) * scale  # (B, T, S)
    weights = masked_softmax(scores, mask)  # (B, T, S)
    assert weights.shape == (b, t, s) and weights.dtype == dtype
    assert_attention_rows(weights, mask)
    torch.testing.assert_close(masked_softmax(scores, None), torch.softmax(scores, dim=-1))


@FAST
@given(
    mask=masks(),
    h=st.integers(1, 8),
    hq=st.integers(1, 8),
    hk=st.integers(1, 8),
    project_once=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_bahdanau_attention(mask: torch.Tensor, h: int, hq: int, hk: int, project_once: bool, seed: int):
    torch.manual_seed(seed)
    b, s = mask.shape
    attention = BahdanauAttention(h, query_size=hq, key_size=hk)
    query = torch.randn(b, 1, hq)  # (B, 1, Hq)
    keys = torch.randn(b, s, hk)  # (B, S, Hk)
    proj_keys = attention.project_keys(keys) if project_once else None  # (B, S, H)
    context, weights = attention(query, keys, mask, proj_keys)
    assert context.shape == (b, 1, hk) and weights.shape == (b, 1, s)
    assert_attention_rows(weights, mask)
    torch.testing.assert_close(context, torch.bmm(weights, keys))
    assert (context[~mask.any(dim=1)] == 0).all(), "a fully padded row must give a zero context"


@FAST
@given(batch=padded_batches(), h=st.integers(1, 8), v=st.integers(SPECIALS + 1, 12), seed=st.integers(0, 2**16))
def test_encoder(batch, h: int, v: int, seed: int):
    b, s, lengths, mask = batch
    torch.manual_seed(seed)
    encoder = EncoderRNN(v, h).eval()
    tokens = torch.randint(SPECIALS, v, (b, s)).masked_fill(~mask, PAD_IDX)  # (B, S)
    outputs, hidden = encoder(tokens, lengths)
    assert outputs.shape == (b, s, h) and hidden.shape == (1, b, h)
    assert torch.isfinite(outputs).all() and torch.isfinite(hidden).all()
    assert (outputs[~mask] == 0).all(), "the GRU must not run over padding"
    last = outputs[torch.arange(b), lengths - 1]  # (B, H): the state after each last real token
    torch.testing.assert_close(hidden[0], last)
    unpacked_outputs, unpacked_hidden = encoder(tokens)
    assert unpacked_outputs.shape == (b, s, h) and unpacked_hidden.shape == (1, b, h)


DECODERS = {
    "bahdanau": lambda h, v: AttnDecoderRNN(h, v),
    "luong-dot": lambda h, v: LuongAttnDecoderRNN(h, v),
    "luong-general": lambda h, v: LuongAttnDecoderRNN(h, v, score="general"),
    "no-attention": lambda h, v: DecoderRNN(h, v),
}


@pytest.mark.parametrize("kind", DECODERS)
@FAST
@given(
    mask=masks(),
    t=st.integers(1, 5),
    h=st.integers(1, 8),
    v=st.integers(SPECIALS + 1, 12),
    teacher_forcing=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_decoder(kind: str, mask: torch.Tensor, t: int, h: int, v: int, teacher_forcing: bool, seed: int):
    torch.manual_seed(seed)
    b, s = mask.shape
    decoder = DECODERS[kind](h, v).eval()
    encoder_outputs = torch.randn(b, s, h).masked_fill(~mask.unsqueeze(2), 0.0)  # (B, S, H)
    encoder_hidden = torch.randn(1, b, h)  # (1, B, H)
    if teacher_forcing:
        target = torch.randint(0, v, (b, t))  # (B, T), PAD_IDX included
        log_probs, hidden, attentions = decoder(encoder_outputs, encoder_hidden, target, mask)
    else:  # decoding without a target: the search loop drives the decoder's step
        state = decoder.init_state(encoder_outputs, encoder_hidden, mask)
        _, logits, attentions, state = greedy_search(decoder.forward_step, state, t)  # (B, T', V), (B, T', S)
        log_probs, hidden = torch.log_softmax(logits, dim=-1), state.hidden
    steps = t if teacher_forcing else log_probs.size(1)  # greedy decoding stops once every row has said <eos>
    assert 1 <= steps <= t
    t = steps
    assert log_probs.shape == (b, t, v) and hidden.shape == (1, b, h)
    assert torch.isfinite(log_probs).all() and torch.isfinite(hidden).all()
    torch.testing.assert_close(log_probs.exp().sum(-1), torch.ones(b, t), atol=1e-5, rtol=0)
    if kind == "no-attention":
        assert attentions is None
    else:
        assert attentions.shape == (b, t, s)
        assert_attention_rows(attentions, mask)
