"""Attention score functions: how much a query matches each key, before the softmax.

Seed 004's table of attention variants differs in one place only, the score. Every score here
maps a query (B, T, Hq) and keys (B, S, Hk) to scores (B, T, S): one number per query step and
source position. The softmax, the mask and the weighted sum are shared (`masked_softmax`,
`torch.bmm`), so a score is all a decoder has to choose.

| name         | score(q, k)                          | parameters                |
|--------------|--------------------------------------|---------------------------|
| `dot`        | q . k                                | none (needs Hq = Hk)      |
| `scaled_dot` | q . k / sqrt(Hk)                     | none (needs Hq = Hk)      |
| `general`    | q^T W k (bilinear)                   | W: (Hq, Hk)               |
| `additive`   | w_a^T tanh(W_b q + W_c k) (Bahdanau) | W_b, W_c: to H; w_a: H->1 |

`DECODER_SCORES` is the one place that says which decoder uses which score.
"""

import math

import torch
from torch import nn

from .checks import check_module_device, check_same_device, check_tensor


def _check_pair(query: object, keys: object, query_size: int | None, key_size: int | None) -> dict[str, int]:
    known = {} if query_size is None else {"Hq": query_size}
    sizes = check_tensor("query", query, ("B", "T", "Hq"), known, dtype="float")
    if key_size is not None:
        sizes["Hk"] = key_size
    sizes = check_tensor("keys", keys, ("B", "S", "Hk"), sizes, dtype="float")
    check_same_device(query=query, keys=keys)
    if query.dtype != keys.dtype:
        raise ValueError(f"query and keys must share a dtype, got {query.dtype} and {keys.dtype}")
    return sizes


# --8<-- [start:dot]
def dot_score(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """Luong's dot score: the inner product of the query with every key.

    Shapes:
        query: (B, T, H).
        keys: (B, S, H), the same H as the query.
        returns: (B, T, S).

    Raises:
        ValueError: a query and keys of different sizes, devices or dtypes.
    """
    sizes = _check_pair(query, keys, None, None)
    if sizes["Hq"] != sizes["Hk"]:
        raise ValueError(f"dot_score needs query and keys of one size H, got {query.size(-1)} and {keys.size(-1)}")
    return torch.bmm(query, keys.transpose(1, 2))  # (B, T, H) @ (B, H, S) -> (B, T, S)


# --8<-- [end:dot]


# --8<-- [start:scaled_dot]
def scaled_dot_score(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """The dot score divided by sqrt(H), the Transformer's scaling.

    With unit-variance entries a dot product of H terms has variance H; dividing by sqrt(H)
    brings it back to 1, so the softmax does not saturate as H grows.

    Shapes:
        query: (B, T, H).
        keys: (B, S, H).
        returns: (B, T, S).
    """
    return dot_score(query, keys) / math.sqrt(keys.size(-1))  # (B, T, S)


# --8<-- [end:scaled_dot]


class DotScore(nn.Module):
    """`dot_score` as a module without parameters, so that every score can be built by name.

    Args:
        hidden_size: H, the size of both the query and the keys.

    Shapes:
        query: (B, T, H).
        keys: (B, S, H).
        returns: (B, T, S).
    """

    def __init__(self, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        _check_pair(query, keys, self.hidden_size, self.hidden_size)
        return dot_score(query, keys)  # (B, T, S)


class ScaledDotScore(DotScore):
    """`scaled_dot_score` as a module without parameters.

    Shapes:
        query: (B, T, H).
        keys: (B, S, H).
        returns: (B, T, S).
    """

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        _check_pair(query, keys, self.hidden_size, self.hidden_size)
        return scaled_dot_score(query, keys)  # (B, T, S)


class GeneralScore(nn.Module):
    """Luong's general (bilinear) score: q^T W k.

    The keys are mapped into the query's space once (`W k`), then compared with a dot
    product, so the query and keys may have different sizes.

    Args:
        query_size: Hq.
        key_size: Hk; defaults to Hq.

    Shapes:
        query: (B, T, Hq).
        keys: (B, S, Hk).
        returns: (B, T, S).
    """

    def __init__(self, query_size: int, key_size: int | None = None) -> None:
        super().__init__()
        self.query_size = query_size
        self.key_size = key_size or query_size
        self.W = nn.Linear(self.key_size, query_size, bias=False)  # W: (Hq, Hk)

    # --8<-- [start:general]
    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        _check_pair(query, keys, self.query_size, self.key_size)
        check_module_device(self, query.device, "query and keys")
        projected = self.W(keys)  # (B, S, Hk) -> (B, S, Hq): W k for every key
        return torch.bmm(query, projected.transpose(1, 2))  # (B, T, S)

    # --8<-- [end:general]


class AdditiveScore(nn.Module):
    """Bahdanau's additive (concat) score: w_a^T tanh(W_b q + W_c k).

    The layer names are those of `BahdanauAttention` (`Wa` for the query, `Ua` for the
    keys, `Va` for the reduction), so that module's weights load into this one and give the
    same scores. In the formula's letters: `Wa` is W_b, `Ua` is W_c and `Va` is w_a.

    Args:
        hidden_size: H, the size of the tanh layer.
        query_size: Hq; defaults to H.
        key_size: Hk; defaults to H.

    Shapes:
        query: (B, T, Hq).
        keys: (B, S, Hk).
        returns: (B, T, S).
    """

    def __init__(self, hidden_size: int, query_size: int | None = None, key_size: int | None = None) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.query_size = query_size or hidden_size
        self.key_size = key_size or hidden_size
        self.Wa = nn.Linear(self.query_size, hidden_size)  # W_b: the query
        self.Ua = nn.Linear(self.key_size, hidden_size)  # W_c: the keys
        self.Va = nn.Linear(hidden_size, 1)  # w_a: one score per (step, position)

    # --8<-- [start:additive]
    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        _check_pair(query, keys, self.query_size, self.key_size)
        check_module_device(self, query.device, "query and keys")
        q = self.Wa(query).unsqueeze(2)  # (B, T, 1, H)
        k = self.Ua(keys).unsqueeze(1)  # (B, 1, S, H)
        return self.Va(torch.tanh(q + k)).squeeze(-1)  # (B, T, S, H) -> (B, T, S, 1) -> (B, T, S)

    # --8<-- [end:additive]


# --8<-- [start:registry]
SCORES: dict[str, type[nn.Module]] = {
    "dot": DotScore,
    "scaled_dot": ScaledDotScore,
    "general": GeneralScore,
    "additive": AdditiveScore,
}
"""Every score function, by the name used in the pages, the CLI and `DECODER_SCORES`."""

DECODER_SCORES: dict[str, str | None] = {
    "gru": None,  # DecoderRNN: no attention, only the fixed-size context vector
    "bahdanau": "additive",  # AttnDecoderRNN: query s_{t-1}, before the GRU step
    "luong": "dot",  # LuongAttnDecoderRNN: query s_t, after the GRU step
}
"""The one place that decides which decoder scores with which function."""
# --8<-- [end:registry]


def build_score(name: str, hidden_size: int) -> nn.Module:
    """Build the score module called `name` for queries and keys of size H.

    Args:
        name: a key of `SCORES`.
        hidden_size: H, the size of the decoder state and the encoder outputs.

    Raises:
        ValueError: an unknown name, listing the known ones.
    """
    if name not in SCORES:
        raise ValueError(f"unknown score {name!r}; expected one of {', '.join(SCORES)}")
    return SCORES[name](hidden_size)
