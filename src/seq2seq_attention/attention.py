"""Attention modules: additive (Bahdanau) attention over encoder states."""

import torch
import torch.nn.functional as F
from torch import nn

from .checks import check_module_device, check_module_dtype, check_same_device, check_tensor


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
    sizes = check_tensor("scores", scores, ("B", "T", "S"), dtype="float")
    if mask is None:
        return F.softmax(scores, dim=-1)
    check_tensor("mask", mask, ("B", "S"), sizes, dtype="bool")
    check_same_device(scores=scores, mask=mask)
    keep = mask.unsqueeze(1)  # (B, 1, S)
    scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)  # (B, 1, S)
    return F.softmax(scores, dim=-1).masked_fill(~keep, 0.0)  # (B, 1, S)


# --8<-- [end:masked_softmax]


class BahdanauAttention(nn.Module):
    """Additive attention: score(q, k_j) = Va^T tanh(Wa q + Ua k_j).

    Args:
        hidden_size: H, the size of the projected query and keys (the tanh layer).
        query_size: size of the query vectors; defaults to H.
        key_size: size of the key vectors; defaults to H. The sentiment classifier uses
            2H keys from a bidirectional LSTM.

    Shapes:
        query: (B, 1, Hq), the decoder's state.
        keys: (B, S, Hk), the encoder's outputs (also the values that are averaged).
        mask: (B, S) bool, True for real source positions; optional.
        proj_keys: (B, S, H), `project_keys(keys)` computed once per source batch; optional.
        context: (B, 1, Hk), the weighted sum of the keys.
        weights: (B, 1, S), the attention distribution over source positions.
    """

    # --8<-- [start:init]
    def __init__(self, hidden_size: int, query_size: int | None = None, key_size: int | None = None) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.query_size = query_size or hidden_size
        self.key_size = key_size or hidden_size
        self.Wa = nn.Linear(self.query_size, hidden_size)  # projects the decoder state (query)
        self.Ua = nn.Linear(self.key_size, hidden_size)  # projects the encoder states (keys)
        self.Va = nn.Linear(hidden_size, 1)  # reduces each position to one score

    # --8<-- [end:init]

    # --8<-- [start:project_keys]
    def project_keys(self, keys: torch.Tensor) -> torch.Tensor:
        """Ua(keys), which does not depend on the decoder step: compute it once per batch."""
        return self.Ua(keys)  # (B, S, H)

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
            proj_keys = self.project_keys(keys)  # (B, S, H)
        scores = self.Va(torch.tanh(self.Wa(query) + proj_keys))  # (B, S, 1)
        scores = scores.squeeze(2).unsqueeze(1)  # (B, 1, S)

        weights = masked_softmax(scores, mask)  # (B, 1, S)
        context = torch.bmm(weights, keys)  # (B, 1, Hk)

        return context, weights

    # --8<-- [end:forward]

    def _check(
        self,
        query: torch.Tensor,
        keys: torch.Tensor,
        mask: torch.Tensor | None,
        proj_keys: torch.Tensor | None,
    ) -> None:
        sizes = check_tensor("query", query, ("B", 1, "Hq"), {"Hq": self.query_size}, dtype="float")
        sizes = check_tensor("keys", keys, ("B", "S", "Hk"), {**sizes, "Hk": self.key_size}, dtype="float")
        if mask is not None:
            check_tensor("mask", mask, ("B", "S"), sizes, dtype="bool")
        if proj_keys is not None:
            check_tensor("proj_keys", proj_keys, ("B", "S", "H"), {**sizes, "H": self.hidden_size}, dtype="float")
        device = check_same_device(query=query, keys=keys, mask=mask, proj_keys=proj_keys)
        check_module_device(self, device, "query and keys")
        check_module_dtype(self, query, "query")
        check_module_dtype(self, keys, "keys")
