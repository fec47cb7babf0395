"""Luong's attentions (dot, scaled dot, general), and `SCORES`, the one table of attentions by score.

The attentions of the course notes differ in one place only, the score: how much a query
(B, T, Hq) matches each key (B, S, Hk), one number per query step and source position (B, T, S).
The mask, the softmax and the weighted sum are the same for all of them (`attend`).

| name         | score(q, k)                          | parameters                  | module               |
|--------------|--------------------------------------|-----------------------------|----------------------|
| `dot`        | q . k                                | none (needs Hq = Hk)        | `DotAttention`       |
| `scaled_dot` | q . k / sqrt(Hk)                     | none (needs Hq = Hk)        | `ScaledDotAttention` |
| `general`    | q^T W k (bilinear)                   | W: (Hq, Hk)                 | `GeneralAttention`   |
| `additive`   | v_a^T tanh(W_a q + U_a k) (Bahdanau) | W_a, U_a: to H; v_a: H -> 1 | `BahdanauAttention`  |

`project_keys(keys)` is the part of a score that does not depend on the query (the identity,
`W k` or `U_a k`), done once per source sentence; the rest is done at every decoder step.
"""

import math

import torch
from torch import nn

from ..core.checks import Call, check_same_device, check_tensor, checked
from ..core.errors import InputError, echo
from .attention import Attention, BahdanauAttention


def _check_dot(call: Call) -> None:
    """Two float tensors (B, T, H) and (B, S, H) of one size H, on one device, of one dtype."""
    query, keys = call.query, call.keys
    sizes = check_tensor("query", query, ("B", "T", "Hq"), dtype="float")
    sizes = check_tensor("keys", keys, ("B", "S", "Hk"), sizes, dtype="float")
    check_same_device(query=query, keys=keys)
    if query.dtype != keys.dtype:
        raise InputError(f"query and keys must share a dtype, got {query.dtype} and {keys.dtype}")
    if sizes["Hq"] != sizes["Hk"]:
        raise InputError(f"dot_score needs query and keys of one size H, got {query.size(-1)} and {keys.size(-1)}")


@checked(_check_dot)
# --8<-- [start:dot]
def dot_score(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """Luong's dot score, the inner product of the query with every key: (B, T, H) and (B, S, H) -> (B, T, S)."""
    return torch.bmm(query, keys.transpose(1, 2))  # (B, T, H) @ (B, H, S) -> (B, T, S)


class DotAttention(Attention):
    """Dot-product attention: no parameters; the query and the keys share one size H."""

    def __init__(self, hidden_size: int) -> None:
        super().__init__(hidden_size, hidden_size, hidden_size)

    def score(self, query: torch.Tensor, proj_keys: torch.Tensor) -> torch.Tensor:
        return dot_score(query, proj_keys)  # (B, T, S)


# --8<-- [end:dot]


def _check_scaled_dot(call: Call) -> None:
    keys = call.keys
    if isinstance(keys, torch.Tensor) and keys.dim() == 3 and keys.size(-1) == 0:
        raise InputError("scaled_dot_score needs H >= 1, got keys with H=0")
    _check_dot(call)


@checked(_check_scaled_dot)
# --8<-- [start:scaled_dot]
def scaled_dot_score(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """The dot score divided by sqrt(H), the Transformer's scaling.

    With unit-variance entries a dot product of H terms has variance H; dividing by sqrt(H)
    brings it back to 1, so the softmax does not saturate as H grows.
    """
    return dot_score(query, keys) / math.sqrt(keys.size(-1))  # (B, T, S)


class ScaledDotAttention(DotAttention):
    """`DotAttention` with the scaled dot score."""

    def score(self, query: torch.Tensor, proj_keys: torch.Tensor) -> torch.Tensor:
        return scaled_dot_score(query, proj_keys)  # (B, T, S)


# --8<-- [end:scaled_dot]


class GeneralAttention(DotAttention):
    """Luong's general (bilinear) score q^T W k, as an attention.

    The keys are mapped into the query's space once (`W k`, `project_keys`), then compared
    with the dot score, so the query and keys may have different sizes.

    Args:
        query_size: Hq.
        key_size: Hk; defaults to Hq.

    Shapes:
        query: (B, T, Hq); keys: (B, S, Hk); proj_keys: (B, S, Hq).
    """

    def __init__(self, query_size: int, key_size: int | None = None) -> None:
        Attention.__init__(self, query_size, key_size or query_size, query_size)
        self.W = nn.Linear(self.key_size, query_size, bias=False)  # W: (Hq, Hk)

    # --8<-- [start:general]
    def project_keys(self, keys: torch.Tensor) -> torch.Tensor:
        return self.W(keys)  # (B, S, Hk) -> (B, S, Hq): W k for every key, once; the score is the dot score's

    # --8<-- [end:general]


# --8<-- [start:registry]
SCORES: dict[str, type[Attention]] = {
    "dot": DotAttention,
    "scaled_dot": ScaledDotAttention,
    "general": GeneralAttention,
    "additive": BahdanauAttention,
}
"""Every attention, by the name of its score used in the pages, the CLI and the model config."""
# --8<-- [end:registry]


def check_score_name(name: object) -> None:
    """A key of `SCORES` (the one message for an unknown score, wherever a score is named)."""
    if not isinstance(name, str) or name not in SCORES:
        raise InputError(f"unknown score {echo(name)}; expected one of {', '.join(SCORES)}")


@checked(lambda call: check_score_name(call.name))
def build_attention(name: str, hidden_size: int) -> Attention:
    """The attention that scores with `name` (a key of `SCORES`), for queries and keys of size H.

    Raises:
        InputError: an unknown name, listing the known ones.
    """
    return SCORES[name](hidden_size)
