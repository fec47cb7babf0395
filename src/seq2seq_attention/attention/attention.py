"""The attention module: a score, then the mask, the softmax and the weighted sum.

Every attention of the package is an `Attention` around one score function from `scores.py`:
the Bahdanau decoder's (additive), the Luong decoder's (dot, scaled dot or general) and the
sentiment classifier's (additive over a bidirectional LSTM's outputs).
"""

import torch
import torch.nn.functional as F
from torch import nn

from ..core.checks import check_module_device, check_module_dtype, check_same_device, check_tensor
from .scores import AdditiveScore, _Score, build_score


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
    _check_masked_softmax(scores, mask)
    return _masked_softmax(scores, mask)  # (B, T, S)


def _masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    if mask is None:
        return F.softmax(scores, dim=-1)  # (B, T, S)
    keep = mask.unsqueeze(1)  # (B, 1, S)
    scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)  # (B, T, S)
    return F.softmax(scores, dim=-1).masked_fill(~keep, 0.0)  # (B, T, S)


# --8<-- [end:masked_softmax]


# --8<-- [start:hide_padding]
def hide_padding(keys: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """The keys with padded positions zeroed, once per sentence: whatever padding holds (even NaN) never leaks."""
    return keys if mask is None else keys.masked_fill(~mask.unsqueeze(2), 0.0)  # (B, S, Hk)


# --8<-- [end:hide_padding]


def _check_masked_softmax(scores: object, mask: object) -> None:
    sizes = check_tensor("scores", scores, ("B", "T", "S"), dtype="float")
    if mask is not None:
        check_tensor("mask", mask, ("B", "S"), sizes, dtype="bool")
        check_same_device(scores=scores, mask=mask)


class Attention(nn.Module):
    """Score every key against the query, mask the padding, softmax, and average the keys.

    Padded positions get exactly zero weight, and their keys are zeroed before the weighted sum:
    whatever a padded position holds (even NaN) cannot reach the context. A row with no real
    position gives zero weights and a zero context.

    Args:
        score: a score module from `scores.py` (`build_score(name, H)`).

    Shapes:
        query: (B, T, Hq), the decoder's state (T = 1 for one decoder step).
        keys: (B, S, Hk), the encoder's outputs (also the values that are averaged).
        mask: (B, S) bool, True for real source positions; optional.
        proj_keys: (B, S, Hp), `project_keys(keys)` computed once per source sentence; optional.
        context: (B, T, Hk), the weighted sum of the keys.
        weights: (B, T, S), the attention distribution over source positions.
    """

    def __init__(self, score: _Score) -> None:
        super().__init__()
        self.score = score

    # --8<-- [start:project_keys]
    def project_keys(self, keys: torch.Tensor) -> torch.Tensor:
        """The score's query-independent work on the keys (`Ua(keys)` for Bahdanau): once per sentence."""
        return self.score.project_keys(keys)  # (B, S, Hp)

    # --8<-- [end:project_keys]

    # --8<-- [start:forward]
    def forward(
        self,
        query: torch.Tensor,
        keys: torch.Tensor,
        mask: torch.Tensor | None = None,
        proj_keys: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        self._check(query, keys, mask, proj_keys)
        if proj_keys is None:
            proj_keys = self.project_keys(keys)  # (B, S, Hp)
        return self.attend(query, hide_padding(keys, mask), mask, proj_keys)  # (B, T, Hk), (B, T, S)

    def attend(
        self, query: torch.Tensor, keys: torch.Tensor, mask: torch.Tensor | None, proj_keys: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """`forward` after its checks, for keys whose padding is already zero: what a decoder calls per step."""
        scores = self.score.compare(query, proj_keys)  # (B, T, S)
        weights = _masked_softmax(scores, mask)  # (B, T, S)
        context = torch.bmm(weights, keys)  # (B, T, Hk)
        return context, weights

    # --8<-- [end:forward]

    def _check(
        self,
        query: torch.Tensor,
        keys: torch.Tensor,
        mask: torch.Tensor | None,
        proj_keys: torch.Tensor | None,
    ) -> None:
        score = self.score
        sizes = check_tensor("query", query, ("B", "T", "Hq"), {"Hq": score.query_size}, dtype="float")
        sizes = check_tensor("keys", keys, ("B", "S", "Hk"), {**sizes, "Hk": score.key_size}, dtype="float")
        if mask is not None:
            check_tensor("mask", mask, ("B", "S"), sizes, dtype="bool")
        if proj_keys is not None:
            known = {**sizes, "H": score.projected_size}
            check_tensor("proj_keys", proj_keys, ("B", "S", "H"), known, dtype="float")
        device = check_same_device(query=query, keys=keys, mask=mask, proj_keys=proj_keys)
        check_module_device(self, device, "query and keys")
        check_module_dtype(self, query, "query")
        check_module_dtype(self, keys, "keys")
        if proj_keys is not None:
            check_module_dtype(self, proj_keys, "proj_keys")


class _ScoreLayer:
    """A layer of the score, declared on the attention under the formula's name: `attention.Wa` is `attention.score.Wa`.

    The layers live (and are saved) in the score module only; this is a second name, not a second layer.
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, attention: Attention | None, owner: type | None = None) -> "nn.Linear | _ScoreLayer":
        if attention is None:  # read on the class (help, documentation tools): the declaration itself
            return self
        return getattr(attention.score, self.name)


class BahdanauAttention(Attention):
    """Additive attention: score(q, k_j) = v_a^T tanh(W_a q + U_a k_j), as an `Attention`.

    The layers `Wa`, `Ua`, `Va` live in its `AdditiveScore` (`attention.score`); the properties of
    the same names reach them here, under the names of the formula and the tutorial.

    Args:
        hidden_size: H, the size of the projected query and keys (the tanh layer).
        query_size: size of the query vectors; defaults to H.
        key_size: size of the key vectors; defaults to H. The sentiment classifier uses
            2H keys from a bidirectional LSTM.

    Shapes:
        as `Attention`; query (B, 1, Hq), keys (B, S, Hk), proj_keys (B, S, H).
    """

    score: AdditiveScore

    def __init__(self, hidden_size: int, query_size: int | None = None, key_size: int | None = None) -> None:
        super().__init__(AdditiveScore(hidden_size, query_size, key_size))
        self.hidden_size, self.query_size, self.key_size = hidden_size, self.score.query_size, self.score.key_size

    Wa = _ScoreLayer()
    """W_a, the query's layer: `score.Wa`."""
    Ua = _ScoreLayer()
    """U_a, the keys' layer: `score.Ua`."""
    Va = _ScoreLayer()
    """v_a, the layer that reduces each (step, position) to one score: `score.Va`."""


def build_attention(score: str, hidden_size: int) -> Attention:
    """The attention of a decoder of size H that scores with `score` (a key of `SCORES`).

    The additive score gives a `BahdanauAttention`, whose layers read `Wa`, `Ua`, `Va`.

    Raises:
        InputError: an unknown score name.
    """
    if score == "additive":
        return BahdanauAttention(hidden_size)
    return Attention(build_score(score, hidden_size))
