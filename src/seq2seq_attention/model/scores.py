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
from collections.abc import Callable
from typing import TypeVar

import torch
from jaxtyping import Float
from torch import Tensor, nn

from .attention import Attention, BahdanauAttention
from .rules import echo, require
from .tensors import annotations_checked

A = TypeVar("A", bound=type[Attention])

# --8<-- [start:registry]
SCORES: dict[str, type[Attention]] = {}
"""Every attention, by the name of its score used in the pages, the CLI and the model config (`register_score`)."""


def register_score(name: str) -> Callable[[A], A]:
    """Register an attention class under the name of its score: every attentional decoder can then use it."""

    def register(attention: A) -> A:
        SCORES[name] = attention
        return attention

    return register


# --8<-- [end:registry]


@annotations_checked
# --8<-- [start:dot]
def dot_score(query: Float[Tensor, "B T H"], keys: Float[Tensor, "B S H"]) -> Float[Tensor, "B T S"]:
    """Luong's dot score, the inner product of the query with every key (one size H for both)."""
    return torch.bmm(query, keys.transpose(1, 2))  # (B, T, H) @ (B, H, S) -> (B, T, S)


@register_score("dot")
class DotAttention(Attention):
    """Dot-product attention: no parameters; the query and the keys share one size H."""

    def __init__(self, hidden_size: int) -> None:
        super().__init__(hidden_size, hidden_size, hidden_size)

    def score(self, query: Float[Tensor, "B T H"], proj_keys: Float[Tensor, "B S H"]) -> Float[Tensor, "B T S"]:
        return dot_score(query, proj_keys)  # (B, T, S)


# --8<-- [end:dot]


@annotations_checked
# --8<-- [start:scaled_dot]
def scaled_dot_score(query: Float[Tensor, "B T H"], keys: Float[Tensor, "B S H"]) -> Float[Tensor, "B T S"]:
    """The dot score divided by sqrt(H), the Transformer's scaling.

    With unit-variance entries a dot product of H terms has variance H; dividing by sqrt(H)
    brings it back to 1, so the softmax does not saturate as H grows.
    """
    return dot_score(query, keys) / math.sqrt(keys.size(-1))  # (B, T, S)


@register_score("scaled_dot")
class ScaledDotAttention(DotAttention):
    """`DotAttention` with the scaled dot score."""

    def score(self, query: Float[Tensor, "B T H"], proj_keys: Float[Tensor, "B S H"]) -> Float[Tensor, "B T S"]:
        return scaled_dot_score(query, proj_keys)  # (B, T, S)


# --8<-- [end:scaled_dot]


@register_score("general")
class GeneralAttention(DotAttention):
    """Luong's general (bilinear) score q^T W k, as an attention.

    The keys are mapped into the query's space once (`W k`, `project_keys`), then compared
    with the dot score, so the query and keys may have different sizes.

    Args:
        query_size: Hq.
        key_size: Hk; defaults to Hq.
    """

    def __init__(self, query_size: int, key_size: int | None = None) -> None:
        Attention.__init__(self, query_size, key_size or query_size, query_size)
        self.W = nn.Linear(self.key_size, query_size, bias=False)  # W: (Hq, Hk)

    # --8<-- [start:general]
    def project_keys(self, keys: Float[Tensor, "B S Hk"]) -> Float[Tensor, "B S Hq"]:
        return self.W(keys)  # (B, S, Hk) -> (B, S, Hq): W k for every key, once; the score is the dot score's

    # --8<-- [end:general]


register_score("additive")(BahdanauAttention)  # Bahdanau's, the first attention of the course


@annotations_checked
def build_attention(name: str, hidden_size: int) -> Attention:
    """The attention that scores with `name` (a key of `SCORES`), for queries and keys of size H."""
    require(name in SCORES, f"unknown score {echo(name)}; expected one of {', '.join(SCORES)}")
    return SCORES[name](hidden_size)
