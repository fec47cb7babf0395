"""seq2seq-attention: sequence-to-sequence translation and attention in PyTorch, annotated.

The package is laid out by concern:

* `core`: what both tasks share (tokens, the input-error type, checks, devices, the
  vocabulary, batching and the padding mask, the checkpoint format, the training loop);
* `attention`: Bahdanau's and Luong's attention modules, sharing one masked softmax;
* `translation`: the Tatoeba corpus, encoder, decoders, model, search, the translator a user
  calls (`translate`, `load_translator`), training, evaluation;
* `sentiment`: the labelled sentences and the BiLSTM + attention classifier;
* `cli`: the command line (argument parsing only; nothing imports it).

The names below are the ones the pages import; they stay here when modules move. They are loaded on
first use (PEP 562), all together: `import seq2seq_attention` alone, and the command line's `--help`,
`--version` and `models`, import neither torch nor matplotlib.
"""

import importlib

__version__ = "0.2.0"

_EXPORTS: dict[str, tuple[str, ...]] = {
    "attention": (
        "SCORES",
        "Attention",
        "BahdanauAttention",
        "DotAttention",
        "GeneralAttention",
        "ScaledDotAttention",
        "attend",
        "build_attention",
        "dot_score",
        "masked_softmax",
        "scaled_dot_score",
    ),
    "core.batching": (
        "Batch",
        "collate",
        "lengths_to_mask",
    ),
    "core.checkpoint": (
        "load_checkpoint",
        "save_checkpoint",
    ),
    "core.device": ("pick_device",),
    "core.errors": ("InputError",),
    "core.tokens": (
        "EOS_IDX",
        "PAD_IDX",
        "SOS_IDX",
        "UNK_IDX",
    ),
    "core.vocabulary": (
        "Vocabularies",
        "Vocabulary",
    ),
    "sentiment.classifier": (
        "MeanEmbeddingClassifier",
        "SentimentClassifier",
        "build_classifier",
    ),
    "translation.corpus": (
        "load_pairs",
        "normalize_string",
        "split_pairs",
    ),
    "translation.decoders": (
        "DECODERS",
        "AttnDecoderRNN",
        "DecoderRNN",
        "DecoderState",
        "LuongAttnDecoderRNN",
        "StepDecoder",
    ),
    "translation.encoder": ("EncoderRNN",),
    "translation.model": (
        "Seq2Seq",
        "build_model",
    ),
    "translation.search": (
        "MAX_LENGTH",
        "beam_search_decode",
        "greedy_decode",
    ),
    "translation.translator": (
        "Translator",
        "load_translator",
        "translate",
    ),
}
"""The names the package exports, by the module that defines them (relative to the package)."""

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


def _load() -> None:
    """Import every module of `_EXPORTS` (both tasks register their checkpoints) and bind its names here."""
    for module, names in _EXPORTS.items():
        loaded = importlib.import_module(f".{module}", __name__)
        for name in names:
            globals()[name] = getattr(loaded, name)


def __getattr__(name: str) -> object:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    _load()
    return globals()[name]


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
