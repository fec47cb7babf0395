"""Bahdanau's attention, and what every attention shares: `masked_softmax` and the weights-to-context step.

Every attention of the package runs one `forward` (`Attention.forward`): the keys projected once
unless given (`project_keys(keys)`, the part of the score that does not depend on the query, done once
per source sentence), every key scored against the query (`score`), then `attend`: the masked softmax
and the weighted sum of the keys (d2l's pattern). An attention defines its `score` (and `project_keys`
when its score projects the keys), nothing else. `BahdanauAttention` (additive) lives here; the dot,
scaled dot and general attentions are in `scores.py`, which also holds `SCORES`, the one table a
decoder picks its attention from.
"""

import torch
import torch.nn.functional as F
from jaxtyping import Bool, Float
from torch import Tensor, nn

from .tensors import annotations_checked


@annotations_checked
# --8<-- [start:masked_softmax]
def masked_softmax(scores: Float[Tensor, "B T S"], mask: Bool[Tensor, "B S"] | None) -> Float[Tensor, "B T S"]:
    """Softmax over the last dimension that gives masked-out positions exactly zero weight.

    Masked scores are replaced by the most negative finite float before the softmax, so
    that `exp` underflows to exactly 0 wherever a real position exists, and the weights are
    zeroed again afterwards so that a row with no real position is all zeros (finite,
    no NaN) instead of uniform. A mask of None means every position is real.
    """
    if mask is None:
        return F.softmax(scores, dim=-1)  # (B, T, S)
    keep = mask.unsqueeze(1)  # (B, 1, S)
    scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)  # (B, T, S)
    return F.softmax(scores, dim=-1).masked_fill(~keep, 0.0)  # (B, T, S)


# --8<-- [end:masked_softmax]


# --8<-- [start:hide_padding]
def hide_padding(keys: Float[Tensor, "B S Hk"], mask: Bool[Tensor, "B S"] | None) -> Float[Tensor, "B S Hk"]:
    """The keys with padded positions zeroed: whatever padding holds (even NaN) never leaks."""
    return keys if mask is None else keys.masked_fill(~mask.unsqueeze(2), 0.0)  # (B, S, Hk)


# --8<-- [end:hide_padding]


# --8<-- [start:attend]
def attend(
    scores: Float[Tensor, "B T S"], keys: Float[Tensor, "B S Hk"], mask: Bool[Tensor, "B S"] | None
) -> tuple[Float[Tensor, "B T Hk"], Float[Tensor, "B T S"]]:
    """The step every attention ends with: weights from the scores, then the weighted sum of the keys (the values)."""
    weights = masked_softmax(scores, mask)  # (B, T, S): exactly 0 on padding
    context = torch.bmm(weights, hide_padding(keys, mask))  # (B, T, S) @ (B, S, Hk) -> (B, T, Hk)
    return context, weights


# --8<-- [end:attend]


class Attention(nn.Module):
    """What every attention module has: its sizes, `project_keys` and `forward`, which ends in `attend`.

    A subclass defines its `score` (and `project_keys` when its score projects the keys) and
    inherits `forward`, the one forward of every attention.

    Args:
        query_size: Hq, the size of the query (the decoder's state; T = 1 for one decoder step).
        key_size: Hk, the size of the keys (the encoder's outputs, also the values that are averaged).
        hidden_size: Hp, the size of the keys as `project_keys` gives them (`proj_keys`, computed once per
            source sentence; optional). The mask is True on real source positions; the context is the weighted
            sum of the keys, the weights the attention distribution over source positions.
    """

    def __init__(self, query_size: int, key_size: int, hidden_size: int) -> None:
        super().__init__()
        self.query_size, self.key_size, self.hidden_size = query_size, key_size, hidden_size

    def project_keys(self, keys: Float[Tensor, "B S Hk"]) -> Float[Tensor, "B S Hp"]:
        """The part of the score that does not depend on the query."""
        return keys  # (B, S, Hk): the keys themselves, unless a score projects them

    def score(self, query: Float[Tensor, "B T Hq"], proj_keys: Float[Tensor, "B S Hp"]) -> Float[Tensor, "B T S"]:
        """Score every (query step, key) pair."""
        raise NotImplementedError

    @annotations_checked
    # --8<-- [start:forward]
    def forward(
        self,
        query: Float[Tensor, "B T Hq"],
        keys: Float[Tensor, "B S Hk"],
        mask: Bool[Tensor, "B S"] | None = None,
        proj_keys: Float[Tensor, "B S Hp"] | None = None,
    ) -> tuple[Float[Tensor, "B T Hk"], Float[Tensor, "B T S"]]:
        if proj_keys is None:
            proj_keys = self.project_keys(keys)  # (B, S, Hp): once per sentence, unless given
        scores = self.score(query, proj_keys)  # (B, T, S)
        return attend(scores, keys, mask)  # (B, T, Hk), (B, T, S)

    # --8<-- [end:forward]


class BahdanauAttention(Attention):
    """Additive attention (Bahdanau et al., 2015): score(q, k_j) = v_a^T tanh(W_a q + U_a k_j).

    Args:
        hidden_size: H, the size of the projected query and keys (the tanh layer).
        query_size: size of the query vectors; defaults to H.
        key_size: size of the key vectors; defaults to H. The sentiment classifier uses
            2H keys from a bidirectional LSTM.
    """

    # --8<-- [start:init]
    def __init__(self, hidden_size: int, query_size: int | None = None, key_size: int | None = None) -> None:
        super().__init__(query_size or hidden_size, key_size or hidden_size, hidden_size)
        self.Wa = nn.Linear(self.query_size, hidden_size)  # W_a: projects the query (decoder state)
        self.Ua = nn.Linear(self.key_size, hidden_size)  # U_a: projects the keys (encoder states)
        self.Va = nn.Linear(hidden_size, 1)  # v_a: reduces each (step, position) to one score

    # --8<-- [end:init]

    # --8<-- [start:project_keys]
    def project_keys(self, keys: Float[Tensor, "B S Hk"]) -> Float[Tensor, "B S H"]:
        """U_a k does not depend on the decoder's step: a decoder computes it once per sentence."""
        return self.Ua(keys)  # (B, S, H)

    # --8<-- [end:project_keys]

    # --8<-- [start:score]
    def score(self, query: Float[Tensor, "B T Hq"], proj_keys: Float[Tensor, "B S H"]) -> Float[Tensor, "B T S"]:
        """v_a^T tanh(W_a q + U_a k_j) for every query step and key."""
        q = self.Wa(query).unsqueeze(2)  # (B, T, 1, H)
        k = proj_keys.unsqueeze(1)  # (B, 1, S, H)
        return self.Va(torch.tanh(q + k)).squeeze(-1)  # (B, T, S, H) -> (B, T, S, 1) -> (B, T, S)

    # --8<-- [end:score]
