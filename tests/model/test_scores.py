"""Attention modules and score functions: shapes, the formulas against float64 loops, SDPA equivalence, errors."""

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from seq2seq_attention import (
    DECODERS,
    SCORES,
    Attention,
    BahdanauAttention,
    DotAttention,
    GeneralAttention,
    build_attention,
    dot_score,
    masked_softmax,
    scaled_dot_score,
)

sizes = st.tuples(
    st.integers(1, 3),  # B
    st.integers(1, 4),  # T
    st.integers(1, 6),  # S
    st.integers(1, 7),  # H
)


@settings(max_examples=25, deadline=None)
@given(sizes=sizes, name=st.sampled_from(sorted(SCORES)))
def test_every_attention_maps_query_and_keys_to_a_context_and_weights(sizes, name):
    B, T, S, H = sizes
    torch.manual_seed(0)
    attention = build_attention(name, H)
    assert type(attention) is SCORES[name]
    query, keys = torch.randn(B, T, H), torch.randn(B, S, H)
    context, weights = attention(query, keys)
    assert context.shape == (B, T, H) and weights.shape == (B, T, S)
    assert torch.isfinite(context).all()
    torch.testing.assert_close(weights.sum(-1), torch.ones(B, T))
    torch.testing.assert_close(context, torch.bmm(weights, keys))


@settings(max_examples=20, deadline=None)
@given(sizes=sizes)
def test_dot_and_scaled_dot_match_a_float64_loop(sizes):
    B, T, S, H = sizes
    torch.manual_seed(1)
    query = torch.randn(B, T, H, dtype=torch.float64)
    keys = torch.randn(B, S, H, dtype=torch.float64)
    expected = torch.empty(B, T, S, dtype=torch.float64)
    for b in range(B):
        for t in range(T):
            for j in range(S):
                expected[b, t, j] = sum(float(query[b, t, h]) * float(keys[b, j, h]) for h in range(H))
    torch.testing.assert_close(dot_score(query, keys), expected, rtol=0, atol=1e-12)
    torch.testing.assert_close(scaled_dot_score(query, keys), expected / math.sqrt(H), rtol=0, atol=1e-12)


def test_general_with_the_identity_is_dot():
    torch.manual_seed(0)
    general = GeneralAttention(8)
    with torch.no_grad():
        general.W.weight.copy_(torch.eye(8))
    query, keys = torch.randn(2, 3, 8), torch.randn(2, 5, 8)
    torch.testing.assert_close(general.score(query, general.project_keys(keys)), dot_score(query, keys))
    for mine, dot in zip(general(query, keys), DotAttention(8)(query, keys), strict=True):
        torch.testing.assert_close(mine, dot)


def test_general_is_bilinear_with_different_sizes():
    torch.manual_seed(0)
    general = GeneralAttention(4, key_size=6).double()
    query, keys = torch.randn(2, 3, 4, dtype=torch.float64), torch.randn(2, 5, 6, dtype=torch.float64)
    W = general.W.weight  # (Hq, Hk)
    expected = torch.einsum("btq,qk,bsk->bts", query, W, keys)
    torch.testing.assert_close(general.score(query, general.project_keys(keys)), expected, rtol=0, atol=1e-12)
    context, weights = general(query, keys)
    torch.testing.assert_close(weights, expected.softmax(-1), rtol=0, atol=1e-12)
    assert context.shape == (2, 3, 6)


def test_additive_matches_the_formula_in_a_float64_loop():
    torch.manual_seed(0)
    additive = BahdanauAttention(5, query_size=4, key_size=6).double()
    query, keys = torch.randn(2, 3, 4, dtype=torch.float64), torch.randn(2, 7, 6, dtype=torch.float64)
    Wb, bb = additive.Wa.weight.detach(), additive.Wa.bias.detach()
    Wc, bc = additive.Ua.weight.detach(), additive.Ua.bias.detach()
    wa, ba = additive.Va.weight[0].detach(), additive.Va.bias[0].detach()
    with torch.no_grad():
        _, weights = additive(query, keys)
    expected = torch.empty(2, 3, 7, dtype=torch.float64)
    for b in range(2):
        for t in range(3):
            for j in range(7):
                hidden = torch.tanh(Wb @ query[b, t] + bb + Wc @ keys[b, j] + bc)
                expected[b, t, j] = float(wa @ hidden + ba)
    torch.testing.assert_close(weights, expected.softmax(-1), rtol=0, atol=1e-12)


def test_every_attention_runs_the_one_forward():
    """An attention defines its score (and project_keys); the forward, with its shape check, is Attention's."""
    for name, kind in SCORES.items():
        assert kind.forward is Attention.forward, name
        context, weights = build_attention(name, 4)(torch.randn(2, 1, 4), torch.randn(2, 3, 4))
        assert context.shape == (2, 1, 4) and weights.shape == (2, 1, 3)


def test_bahdanau_owns_its_layers_and_its_weights_are_the_masked_softmax_of_its_scores():
    torch.manual_seed(0)
    bahdanau = BahdanauAttention(8)
    assert [name for name, _ in bahdanau.named_children()] == ["Wa", "Ua", "Va"]
    query, keys = torch.randn(2, 1, 8), torch.randn(2, 5, 8)
    mask = torch.tensor([[True] * 5, [True, True, True, False, False]])
    context, weights = bahdanau(query, keys, mask)
    scores = bahdanau.Va(torch.tanh(bahdanau.Wa(query).unsqueeze(2) + bahdanau.Ua(keys).unsqueeze(1))).squeeze(-1)
    torch.testing.assert_close(bahdanau.score(query, bahdanau.project_keys(keys)), scores)  # (B, T, S)
    mine = masked_softmax(scores, mask)
    torch.testing.assert_close(mine, weights)
    torch.testing.assert_close(torch.bmm(mine, keys), context)


@pytest.mark.parametrize("scaled", [False, True])
def test_dot_attention_is_sdpa(scaled):
    torch.manual_seed(0)
    query, keys = torch.randn(2, 3, 8), torch.randn(2, 5, 8)
    mask = torch.tensor([[True] * 5, [True, True, False, False, False]])
    score = scaled_dot_score if scaled else dot_score
    ours = torch.bmm(masked_softmax(score(query, keys), mask), keys)
    kwargs = {} if scaled else {"scale": 1.0}
    theirs = F.scaled_dot_product_attention(query, keys, keys, attn_mask=mask.unsqueeze(1), **kwargs)
    torch.testing.assert_close(ours, theirs)


def test_every_decoder_scores_with_what_the_table_names():
    from seq2seq_attention import build_model

    for decoder, kind in DECODERS.items():
        allowed = kind.scores
        default = build_model(decoder, 11, 13, hidden_size=8)
        if not allowed:
            assert default.decoder.attention is None and default.config["score"] is None
            with pytest.raises(ValueError, match="has no attention"):
                build_model(decoder, 11, 13, hidden_size=8, score="dot")
            continue
        assert type(default.decoder.attention) is SCORES[allowed[0]]
        assert default.config["score"] == allowed[0]
        for name in allowed:
            model = build_model(decoder, 11, 13, hidden_size=8, score=name)
            assert type(model.decoder.attention) is SCORES[name] and model.config["score"] == name


def test_errors_are_clear():
    with pytest.raises(ValueError, match=r"dot_score: keys must be Float\[Tensor, 'B S H'\] with B=2, T=1, H=8, S=5"):
        dot_score(torch.randn(2, 1, 8), torch.randn(2, 5, 6))
    with pytest.raises(ValueError, match=r"dot_score: query must be Float\[Tensor, 'B T H'\], got f32\[2,8\]"):
        dot_score(torch.randn(2, 8), torch.randn(2, 5, 8))
    with pytest.raises(ValueError, match=r"keys must be Float\[Tensor, 'B S H'\] with B=2, .*got f32\[3,5,8\]"):
        dot_score(torch.randn(2, 1, 8), torch.randn(3, 5, 8))
    with pytest.raises(RuntimeError, match="same dtype|expected .* Double"):
        dot_score(torch.randn(2, 1, 8), torch.randn(2, 5, 8, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"query must be Float\[Tensor, 'B T H'\], got i64\[2,1,8\]"):
        dot_score(torch.ones(2, 1, 8, dtype=torch.long), torch.randn(2, 5, 8))
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        build_attention("additive", 8)(torch.randn(2, 1, 4), torch.randn(2, 5, 8))
    with pytest.raises(ValueError, match="unknown score 'cosine'; expected one of dot, scaled_dot, general, additive"):
        build_attention("cosine", 8)


COSINE = '''
import torch
import torch.nn.functional as F

from seq2seq_attention.model.attention import Attention
from seq2seq_attention.model.scores import register_score


@register_score("cosine")
class CosineAttention(Attention):
    """The cosine of the query and each key, sharpened by a learned scale."""

    def __init__(self, hidden_size: int) -> None:
        super().__init__(hidden_size, hidden_size, hidden_size)
        self.scale = torch.nn.Parameter(torch.tensor(5.0))

    def score(self, query, proj_keys):
        return self.scale * F.normalize(query, dim=-1) @ F.normalize(proj_keys, dim=-1).transpose(1, 2)
'''


@pytest.fixture
def cosine_score(tmp_path, monkeypatch):
    """A module of its own, outside the package, that registers a cosine score; the registry is restored after."""
    import sys

    (tmp_path / "cosine_score.py").write_text(COSINE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    before = dict(SCORES)
    try:
        import cosine_score

        yield cosine_score.CosineAttention
    finally:
        SCORES.clear()
        SCORES.update(before)
        sys.modules.pop("cosine_score", None)


def test_a_score_registered_elsewhere_trains_and_decodes_with_every_attention_decoder(cosine_score):
    import torch.nn.functional as F

    from seq2seq_attention import PAD_IDX, beam_search_decode, build_model, greedy_decode

    torch.manual_seed(0)
    source, lengths = torch.tensor([[4, 5, 6, 2], [7, 8, 2, 0]]), torch.tensor([4, 3])
    target = torch.tensor([[5, 6, 2], [9, 2, 0]])
    attending = [name for name, kind in DECODERS.items() if kind.default_score is not None]
    assert attending == ["bahdanau", "luong"]
    for decoder in attending:
        assert "cosine" in DECODERS[decoder].scores
        model = build_model(decoder, 11, 13, hidden_size=8, score="cosine")
        assert type(model.decoder.attention) is cosine_score and model.config["score"] == "cosine"
        log_probs, attentions = model(source, lengths, target)  # (B, T, V), (B, T, S)
        loss = F.nll_loss(log_probs.flatten(0, 1), target.flatten(), ignore_index=PAD_IDX)
        loss.backward()
        torch.optim.Adam(model.parameters()).step()
        assert model.decoder.attention.scale.grad is not None and attentions.shape == (2, 3, 4)
        model.eval()
        tokens, weights = greedy_decode(model, source, lengths, max_length=5)
        beams, _ = beam_search_decode(model, source, lengths, beam_size=2, max_length=5)
        assert tokens.size(0) == beams.size(0) == 2 and torch.allclose(weights.sum(-1), torch.ones(()))


def test_the_torch_free_names_are_the_registries():
    from seq2seq_attention.model.names import ATTENTION_DECODERS, DECODER_NAMES, SCORE_NAMES

    assert tuple(SCORES) == SCORE_NAMES and tuple(DECODERS) == DECODER_NAMES
    assert ATTENTION_DECODERS == tuple(name for name, kind in DECODERS.items() if kind.scores)
