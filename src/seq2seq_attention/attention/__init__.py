"""Attention: score functions and the one attention module (mask, softmax, weighted sum)."""

from .attention import Attention, BahdanauAttention, build_attention, masked_softmax
from .scores import (
    SCORES,
    AdditiveScore,
    DotScore,
    GeneralScore,
    ScaledDotScore,
    build_score,
    dot_score,
    scaled_dot_score,
)

__all__ = [
    "SCORES",
    "AdditiveScore",
    "Attention",
    "BahdanauAttention",
    "DotScore",
    "GeneralScore",
    "ScaledDotScore",
    "build_attention",
    "build_score",
    "dot_score",
    "masked_softmax",
    "scaled_dot_score",
]
