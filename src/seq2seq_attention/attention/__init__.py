"""Attention: `BahdanauAttention` and Luong's dot, scaled dot and general attentions, sharing one masked softmax."""

from .attention import Attention, BahdanauAttention, attend, hide_padding, masked_softmax
from .scores import (
    SCORES,
    DotAttention,
    GeneralAttention,
    ScaledDotAttention,
    build_attention,
    dot_score,
    scaled_dot_score,
)

__all__ = [
    "SCORES",
    "Attention",
    "BahdanauAttention",
    "DotAttention",
    "GeneralAttention",
    "ScaledDotAttention",
    "attend",
    "build_attention",
    "dot_score",
    "hide_padding",
    "masked_softmax",
    "scaled_dot_score",
]
