"""seq2seq-attention: sequence-to-sequence translation and attention in PyTorch, annotated."""

from .attention import BahdanauAttention, masked_softmax
from .classifier import MeanEmbeddingClassifier, SentimentClassifier
from .data import Vocabulary, load_pairs, normalize_string, split_pairs
from .decode import greedy_decode, translate
from .decoder import MAX_LENGTH, AttnDecoderRNN, DecoderRNN, LuongAttnDecoderRNN, StepDecoder
from .device import pick_device
from .encoder import EncoderRNN
from .models import DECODERS, Seq2Seq, build_model
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
    "DECODERS",
    "Seq2Seq",
    "Vocabulary",
    "build_model",
    "greedy_decode",
    "load_pairs",
    "normalize_string",
    "split_pairs",
    "translate",
]

__version__ = "0.1.0"
