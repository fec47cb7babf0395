"""seq2seq-attention: sequence-to-sequence translation and attention in PyTorch, annotated.

The package is laid out by concern:

* `core`: what both tasks share (tokens, the input-error type, checks, devices, the
  vocabulary, batching and the padding mask, the checkpoint format, the training loop);
* `attention`: Bahdanau's and Luong's attention modules, sharing one masked softmax;
* `translation`: the Tatoeba corpus, encoder, decoders, model, search, the translator a user
  calls (`translate`, `load_translator`), training, evaluation;
* `sentiment`: the labelled sentences and the BiLSTM + attention classifier;
* `cli`: the command line (argument parsing only; nothing imports it).

The names below are the ones the pages import; they stay here when modules move.
"""

__version__ = "0.2.0"

from .attention import (
    SCORES,
    Attention,
    BahdanauAttention,
    DotAttention,
    GeneralAttention,
    ScaledDotAttention,
    attend,
    build_attention,
    dot_score,
    masked_softmax,
    scaled_dot_score,
)
from .core.batching import Batch, collate, lengths_to_mask
from .core.checkpoint import load_checkpoint, save_checkpoint
from .core.device import pick_device
from .core.errors import InputError
from .core.tokens import EOS_IDX, PAD_IDX, SOS_IDX, UNK_IDX
from .core.vocabulary import Vocabularies, Vocabulary
from .sentiment.classifier import MeanEmbeddingClassifier, SentimentClassifier, build_classifier
from .translation.corpus import load_pairs, normalize_string, split_pairs
from .translation.decoders import (
    DECODERS,
    MAX_LENGTH,
    AttnDecoderRNN,
    DecoderRNN,
    DecoderState,
    LuongAttnDecoderRNN,
    StepDecoder,
)
from .translation.encoder import EncoderRNN
from .translation.model import Seq2Seq, build_model
from .translation.search import beam_search_decode, greedy_decode
from .translation.translator import Translator, load_translator, translate

__all__ = [
    "DECODERS",
    "EOS_IDX",
    "MAX_LENGTH",
    "PAD_IDX",
    "SCORES",
    "SOS_IDX",
    "UNK_IDX",
    "Attention",
    "AttnDecoderRNN",
    "BahdanauAttention",
    "Batch",
    "DecoderRNN",
    "DecoderState",
    "DotAttention",
    "EncoderRNN",
    "GeneralAttention",
    "InputError",
    "LuongAttnDecoderRNN",
    "MeanEmbeddingClassifier",
    "ScaledDotAttention",
    "SentimentClassifier",
    "Seq2Seq",
    "StepDecoder",
    "Translator",
    "Vocabularies",
    "Vocabulary",
    "attend",
    "beam_search_decode",
    "build_attention",
    "build_classifier",
    "build_model",
    "collate",
    "dot_score",
    "greedy_decode",
    "lengths_to_mask",
    "load_checkpoint",
    "load_pairs",
    "load_translator",
    "masked_softmax",
    "normalize_string",
    "pick_device",
    "save_checkpoint",
    "scaled_dot_score",
    "split_pairs",
    "translate",
]
