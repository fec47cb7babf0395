"""Attention: `BahdanauAttention` and Luong's dot, scaled dot and general attentions, sharing one masked softmax.

The names below are this package's public interface (each imported `as` itself, the explicit re-export form).
"""

from .attention import Attention as Attention
from .attention import BahdanauAttention as BahdanauAttention
from .attention import attend as attend
from .attention import hide_padding as hide_padding
from .attention import masked_softmax as masked_softmax
from .scores import SCORES as SCORES
from .scores import DotAttention as DotAttention
from .scores import GeneralAttention as GeneralAttention
from .scores import ScaledDotAttention as ScaledDotAttention
from .scores import build_attention as build_attention
from .scores import dot_score as dot_score
from .scores import scaled_dot_score as scaled_dot_score
