"""seq2seq-attention: sequence-to-sequence translation and attention in PyTorch, annotated."""

from .attention import BahdanauAttention, masked_softmax
from .classifier import MeanEmbeddingClassifier, SentimentClassifier
from .decoder import MAX_LENGTH, AttnDecoderRNN, DecoderRNN, LuongAttnDecoderRNN, StepDecoder
from .device import pick_device
from .encoder import EncoderRNN
from .scores import (
    DECODER_SCORES,
    SCORES,
    AdditiveScore,
    DotScore,
    GeneralScore,
    ScaledDotScore,
    build_score,
    dot_score,
    scaled_dot_score,
)
from .tokens import EOS_IDX, PAD_IDX, SOS_IDX, UNK_IDX

__all__ = [
    "MAX_LENGTH",
    "EOS_IDX",
    "PAD_IDX",
    "SOS_IDX",
    "UNK_IDX",
    "AttnDecoderRNN",
    "BahdanauAttention",
    "DecoderRNN",
    "LuongAttnDecoderRNN",
    "DECODER_SCORES",
    "SCORES",
    "AdditiveScore",
    "DotScore",
    "GeneralScore",
    "ScaledDotScore",
    "build_score",
    "dot_score",
    "scaled_dot_score",
    "EncoderRNN",
    "StepDecoder",
    "masked_softmax",
    "pick_device",
    "MeanEmbeddingClassifier",
    "SentimentClassifier",
]

__version__ = "0.1.0"
