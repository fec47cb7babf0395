"""The input checks of the attention modules and score functions, run where a user calls them (`checked`)."""

import torch

from ..core.checks import Call, check_module_device, check_module_dtype, check_same_device, check_tensor
from ..core.errors import InputError


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


def _check_scaled_dot(call: Call) -> None:
    keys = call.keys
    if isinstance(keys, torch.Tensor) and keys.dim() == 3 and keys.size(-1) == 0:
        raise InputError("scaled_dot_score needs H >= 1, got keys with H=0")
    _check_dot(call)


def _check_masked_softmax(call: Call) -> None:
    scores, mask = call.scores, call.mask
    sizes = check_tensor("scores", scores, ("B", "T", "S"), dtype="float")
    if mask is not None:
        check_tensor("mask", mask, ("B", "S"), sizes, dtype="bool")
        check_same_device(scores=scores, mask=mask)
