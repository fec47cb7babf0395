"""Attention score functions: how much a query matches each key, before the softmax.

The attention variants of the course notes differ in one place only, the score. Every score
here maps a query (B, T, Hq) and keys (B, S, Hk) to scores (B, T, S): one number per query step
and source position. The mask, the softmax and the weighted sum are the same for all of them
(`Attention`), so a score is all a decoder has to choose.

| name         | score(q, k)                          | parameters                  |
|--------------|--------------------------------------|-----------------------------|
| `dot`        | q . k                                | none (needs Hq = Hk)        |
| `scaled_dot` | q . k / sqrt(Hk)                     | none (needs Hq = Hk)        |
| `general`    | q^T W k (bilinear)                   | W: (Hq, Hk)                 |
| `additive`   | v_a^T tanh(W_a q + U_a k) (Bahdanau) | W_a, U_a: to H; v_a: H -> 1 |

Each score module splits its work in two: `project_keys(keys)` is the part that does not
depend on the query (the identity, `W k` or `U_a k`), done once per source sentence, and
`compare(query, proj_keys)` is the part done at every decoder step.
"""

import math

import torch
from torch import nn

from ..core.checks import check_module_device, check_module_dtype, check_same_device, check_tensor
from ..core.errors import InputError, echo


def _check_pair(query: object, keys: object, query_size: int | None, key_size: int | None) -> dict[str, int]:
    known = {} if query_size is None else {"Hq": query_size}
    sizes = check_tensor("query", query, ("B", "T", "Hq"), known, dtype="float")
    if key_size is not None:
        sizes["Hk"] = key_size
    sizes = check_tensor("keys", keys, ("B", "S", "Hk"), sizes, dtype="float")
    check_same_device(query=query, keys=keys)
    if query.dtype != keys.dtype:
        raise InputError(f"query and keys must share a dtype, got {query.dtype} and {keys.dtype}")
    return sizes


def _check_dot(query: object, keys: object) -> None:
    sizes = _check_pair(query, keys, None, None)
    if sizes["Hq"] != sizes["Hk"]:
        raise InputError(f"dot_score needs query and keys of one size H, got {query.size(-1)} and {keys.size(-1)}")


class _Score(nn.Module):
    """What every score module has: sizes, `project_keys`, `compare`, and a checked `forward`.

    `forward(query, keys)` is ``compare(query, project_keys(keys))`` behind the input checks, for
    a caller that scores once; `Attention` calls the two halves itself, keys projected once.
    """

    query_size: int
    key_size: int
    projected_size: int

    def project_keys(self, keys: torch.Tensor) -> torch.Tensor:
        """The part of the score that does not depend on the query: (B, S, Hk) -> (B, S, Hp)."""
        return keys  # (B, S, Hk)

    def compare(self, query: torch.Tensor, proj_keys: torch.Tensor) -> torch.Tensor:
        """Score every (query step, key) pair: (B, T, Hq) and (B, S, Hp) -> (B, T, S)."""
        raise NotImplementedError

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        _check_pair(query, keys, self.query_size, self.key_size)
        check_module_device(self, query.device, "query and keys")
        check_module_dtype(self, query, "query")
        return self.compare(query, self.project_keys(keys))  # (B, T, S)


# --8<-- [start:dot]
class DotScore(_Score):
    """Luong's dot score: the inner product of the query with every key (no parameters).

    Shapes:
        query: (B, T, H); keys: (B, S, H), the same H; returns (B, T, S).
    """

    def __init__(self, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = self.query_size = self.key_size = self.projected_size = hidden_size

    def compare(self, query: torch.Tensor, proj_keys: torch.Tensor) -> torch.Tensor:
        return torch.bmm(query, proj_keys.transpose(1, 2))  # (B, T, H) @ (B, H, S) -> (B, T, S)


# --8<-- [end:dot]


# --8<-- [start:scaled_dot]
class ScaledDotScore(DotScore):
    """The dot score divided by sqrt(H), the Transformer's scaling.

    With unit-variance entries a dot product of H terms has variance H; dividing by sqrt(H)
    brings it back to 1, so the softmax does not saturate as H grows.
    """

    def compare(self, query: torch.Tensor, proj_keys: torch.Tensor) -> torch.Tensor:
        return super().compare(query, proj_keys) / math.sqrt(self.hidden_size)  # (B, T, S)


# --8<-- [end:scaled_dot]


class GeneralScore(DotScore):
    """Luong's general (bilinear) score: q^T W k.

    The keys are mapped into the query's space once (`W k`, `project_keys`), then compared
    with the dot score, so the query and keys may have different sizes.

    Args:
        query_size: Hq.
        key_size: Hk; defaults to Hq.

    Shapes:
        query: (B, T, Hq).
        keys: (B, S, Hk).
        returns: (B, T, S).
    """

    def __init__(self, query_size: int, key_size: int | None = None) -> None:
        super().__init__(query_size)
        self.key_size = key_size or query_size
        self.W = nn.Linear(self.key_size, query_size, bias=False)  # W: (Hq, Hk)

    # --8<-- [start:general]
    def project_keys(self, keys: torch.Tensor) -> torch.Tensor:
        return self.W(keys)  # (B, S, Hk) -> (B, S, Hq): W k for every key, once; `compare` is the dot score's

    # --8<-- [end:general]


def dot_score(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """`DotScore` as a function, with its input checks: (B, T, H) and (B, S, H) -> (B, T, S).

    Raises:
        InputError: a query and keys of different sizes, devices or dtypes.
    """
    _check_dot(query, keys)
    return DotScore(keys.size(-1)).compare(query, keys)  # (B, T, S)


def scaled_dot_score(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """`ScaledDotScore` as a function, with its input checks: (B, T, H) and (B, S, H) -> (B, T, S).

    Raises:
        InputError: as `dot_score`, or H = 0 (there is nothing to scale by).
    """
    if isinstance(keys, torch.Tensor) and keys.dim() == 3 and keys.size(-1) == 0:
        raise InputError("scaled_dot_score needs H >= 1, got keys with H=0")
    _check_dot(query, keys)
    return ScaledDotScore(keys.size(-1)).compare(query, keys)  # (B, T, S)


class AdditiveScore(_Score):
    """Bahdanau's additive (concat) score: v_a^T tanh(W_a q + U_a k).

    The one additive score of the package: `BahdanauAttention` and the sentiment classifier
    use it through `Attention`.

    Args:
        hidden_size: H, the size of the tanh layer.
        query_size: Hq; defaults to H.
        key_size: Hk; defaults to H.

    Shapes:
        query: (B, T, Hq).
        keys: (B, S, Hk).
        returns: (B, T, S).
    """

    # --8<-- [start:additive_init]
    def __init__(self, hidden_size: int, query_size: int | None = None, key_size: int | None = None) -> None:
        super().__init__()
        self.hidden_size = self.projected_size = hidden_size
        self.query_size = query_size or hidden_size
        self.key_size = key_size or hidden_size
        self.Wa = nn.Linear(self.query_size, hidden_size)  # W_a: projects the query (decoder state)
        self.Ua = nn.Linear(self.key_size, hidden_size)  # U_a: projects the keys (encoder states)
        self.Va = nn.Linear(hidden_size, 1)  # v_a: reduces each (step, position) to one score

    # --8<-- [end:additive_init]

    # --8<-- [start:additive]
    def project_keys(self, keys: torch.Tensor) -> torch.Tensor:
        return self.Ua(keys)  # (B, S, H): U_a k does not depend on the step, so once per sentence

    def compare(self, query: torch.Tensor, proj_keys: torch.Tensor) -> torch.Tensor:
        q = self.Wa(query).unsqueeze(2)  # (B, T, 1, H)
        k = proj_keys.unsqueeze(1)  # (B, 1, S, H)
        return self.Va(torch.tanh(q + k)).squeeze(-1)  # (B, T, S, H) -> (B, T, S, 1) -> (B, T, S)

    # --8<-- [end:additive]


# --8<-- [start:registry]
SCORES: dict[str, type[_Score]] = {
    "dot": DotScore,
    "scaled_dot": ScaledDotScore,
    "general": GeneralScore,
    "additive": AdditiveScore,
}
"""Every score function, by the name used in the pages, the CLI and the model config."""
# --8<-- [end:registry]


def build_score(name: str, hidden_size: int) -> _Score:
    """Build the score module called `name` for queries and keys of size H.

    Args:
        name: a key of `SCORES`.
        hidden_size: H, the size of the decoder state and the encoder outputs.

    Raises:
        InputError: an unknown name, listing the known ones.
    """
    if not isinstance(name, str) or name not in SCORES:
        raise InputError(f"unknown score {echo(name)}; expected one of {', '.join(SCORES)}")
    return SCORES[name](hidden_size)
