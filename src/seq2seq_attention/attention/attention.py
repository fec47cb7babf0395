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
from torch import nn

from ..core.checks import Call, check_module_device, check_module_dtype, check_same_device, check_tensor, checked


def _check_masked_softmax(call: Call) -> None:
    scores, mask = call.scores, call.mask
    sizes = check_tensor("scores", scores, ("B", "T", "S"), dtype="float")
    if mask is not None:
        check_tensor("mask", mask, ("B", "S"), sizes, dtype="bool")
        check_same_device(scores=scores, mask=mask)


@checked(_check_masked_softmax)
# --8<-- [start:masked_softmax]
def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """Softmax over the last dimension that gives masked-out positions exactly zero weight.

    Masked scores are replaced by the most negative finite float before the softmax, so
    that `exp` underflows to exactly 0 wherever a real position exists, and the weights are
    zeroed again afterwards so that a row with no real position is all zeros (finite,
    no NaN) instead of uniform.

    Shapes:
        scores: (B, 1, S) or (B, T, S).
        mask: (B, S), True for real positions; None means every position is real.
        returns: same shape as `scores`.
    """
    if mask is None:
        return F.softmax(scores, dim=-1)  # (B, T, S)
    keep = mask.unsqueeze(1)  # (B, 1, S)
    scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)  # (B, T, S)
    return F.softmax(scores, dim=-1).masked_fill(~keep, 0.0)  # (B, T, S)


# --8<-- [end:masked_softmax]


# --8<-- [start:hide_padding]
def hide_padding(keys: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """The keys with padded positions zeroed: whatever padding holds (even NaN) never leaks."""
    return keys if mask is None else keys.masked_fill(~mask.unsqueeze(2), 0.0)  # (B, S, Hk)


# --8<-- [end:hide_padding]


# --8<-- [start:attend]
def attend(scores: torch.Tensor, keys: torch.Tensor, mask: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    """The step every attention ends with: weights from the scores, then the weighted sum of the keys.

    Shapes:
        scores: (B, T, S); keys: (B, S, Hk), also the values; mask: (B, S) bool or None.
        returns: the context (B, T, Hk) and the weights (B, T, S).
    """
    weights = masked_softmax(scores, mask)  # (B, T, S): exactly 0 on padding
    context = torch.bmm(weights, hide_padding(keys, mask))  # (B, T, S) @ (B, S, Hk) -> (B, T, Hk)
    return context, weights


# --8<-- [end:attend]


def _check_attention(call: Call) -> None:
    """`forward`'s arguments: query (B, T, Hq), keys (B, S, Hk), mask (B, S) bool, proj_keys (B, S, H)."""
    attention, query, keys, mask, proj_keys = call.self, call.query, call.keys, call.mask, call.proj_keys
    sizes = check_tensor("query", query, ("B", "T", "Hq"), {"Hq": attention.query_size}, dtype="float")
    sizes = check_tensor("keys", keys, ("B", "S", "Hk"), {**sizes, "Hk": attention.key_size}, dtype="float")
    if mask is not None:
        check_tensor("mask", mask, ("B", "S"), sizes, dtype="bool")
    if proj_keys is not None:
        known = {**sizes, "H": attention.hidden_size}
        check_tensor("proj_keys", proj_keys, ("B", "S", "H"), known, dtype="float")
    device = check_same_device(query=query, keys=keys, mask=mask, proj_keys=proj_keys)
    check_module_device(attention, device, "query and keys")
    check_module_dtype(attention, query, "query")
    check_module_dtype(attention, keys, "keys")
    if proj_keys is not None:
        check_module_dtype(attention, proj_keys, "proj_keys")


class Attention(nn.Module):
    """What every attention module has: its sizes, `project_keys` and `forward`, which ends in `attend`.

    A subclass defines its `score` (and `project_keys` when its score projects the keys) and
    inherits `forward`, the one forward of every attention.

    Args:
        query_size: Hq, the size of the query (the decoder's state).
        key_size: Hk, the size of the keys (the encoder's outputs, also the values).
        hidden_size: Hp, the size of the keys as `project_keys` gives them.

    Shapes:
        query: (B, T, Hq), the decoder's state (T = 1 for one decoder step).
        keys: (B, S, Hk), the encoder's outputs (also the values that are averaged).
        mask: (B, S) bool, True for real source positions; optional.
        proj_keys: (B, S, Hp), `project_keys(keys)` computed once per source sentence; optional.
        context: (B, T, Hk), the weighted sum of the keys.
        weights: (B, T, S), the attention distribution over source positions.
    """

    def __init__(self, query_size: int, key_size: int, hidden_size: int) -> None:
        super().__init__()
        self.query_size, self.key_size, self.hidden_size = query_size, key_size, hidden_size

    def project_keys(self, keys: torch.Tensor) -> torch.Tensor:
        """The part of the score that does not depend on the query: (B, S, Hk) -> (B, S, Hp)."""
        return keys  # (B, S, Hk): the keys themselves, unless a score projects them

    def score(self, query: torch.Tensor, proj_keys: torch.Tensor) -> torch.Tensor:
        """Score every (query step, key) pair: (B, T, Hq) and (B, S, Hp) -> (B, T, S)."""
        raise NotImplementedError

    @checked(_check_attention)
    # --8<-- [start:forward]
    def forward(
        self,
        query: torch.Tensor,
        keys: torch.Tensor,
        mask: torch.Tensor | None = None,
        proj_keys: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
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

    Shapes:
        as `Attention`; query (B, T, Hq), keys (B, S, Hk), proj_keys (B, S, H).
    """

    # --8<-- [start:init]
    def __init__(self, hidden_size: int, query_size: int | None = None, key_size: int | None = None) -> None:
        super().__init__(query_size or hidden_size, key_size or hidden_size, hidden_size)
        self.Wa = nn.Linear(self.query_size, hidden_size)  # W_a: projects the query (decoder state)
        self.Ua = nn.Linear(self.key_size, hidden_size)  # U_a: projects the keys (encoder states)
        self.Va = nn.Linear(hidden_size, 1)  # v_a: reduces each (step, position) to one score

    # --8<-- [end:init]

    # --8<-- [start:project_keys]
    def project_keys(self, keys: torch.Tensor) -> torch.Tensor:
        """U_a k does not depend on the decoder's step: a decoder computes it once per sentence."""
        return self.Ua(keys)  # (B, S, H)

    # --8<-- [end:project_keys]

    # --8<-- [start:score]
    def score(self, query: torch.Tensor, proj_keys: torch.Tensor) -> torch.Tensor:
        """v_a^T tanh(W_a q + U_a k_j) for every query step and key: (B, T, Hq) and (B, S, H) -> (B, T, S)."""
        q = self.Wa(query).unsqueeze(2)  # (B, T, 1, H)
        k = proj_keys.unsqueeze(1)  # (B, 1, S, H)
        return self.Va(torch.tanh(q + k)).squeeze(-1)  # (B, T, S, H) -> (B, T, S, 1) -> (B, T, S)

    # --8<-- [end:score]
