"""seq2seq-attention: sequence-to-sequence translation and attention in PyTorch, annotated.

The package is laid out in layers (import-linter's contracts in pyproject.toml):

* `model`: what the course teaches, on torch alone: the scores and the attention module, the
  encoder, the decoders, `Seq2Seq` and its builder, the search loops, the sentiment classifier;
* `core`: what both tasks share around it (the vocabulary, batching, the checkpoint format,
  files, settings, the training loop);
* `translation` and `sentiment`: each task's data, training, evaluation, export and figures;
* `cli`: the command line (argument parsing only; nothing imports it).

The names below are the ones the pages import; they stay here when modules move. They are loaded on
first use (PEP 562), all together: `import seq2seq_attention` alone, and the command line's `--help`,
`--version` and `models`, import neither torch nor matplotlib.
"""

import importlib

__version__ = "0.2.0"

_EXPORTS: dict[str, tuple[str, ...]] = {
    "model.attention": ("Attention", "BahdanauAttention", "attend", "masked_softmax"),
    "model.scores": (
        "SCORES",
        "DotAttention",
        "GeneralAttention",
        "ScaledDotAttention",
        "build_attention",
        "dot_score",
        "register_score",
        "scaled_dot_score",
    ),
    "model.tensors": ("lengths_to_mask",),
    "model.tokens": ("EOS_IDX", "PAD_IDX", "SOS_IDX", "UNK_IDX"),
    "model.rules": ("InputError",),
    "model.classifier": ("MeanEmbeddingClassifier", "SentimentClassifier", "build_classifier"),
    "model.decoders": (
        "DECODERS",
        "AttnDecoderRNN",
        "DecoderRNN",
        "DecoderState",
        "LuongAttnDecoderRNN",
        "StepDecoder",
    ),
    "model.encoder": ("EncoderRNN",),
    "model.seq2seq": ("Seq2Seq", "build_model"),
    "model.search": ("MAX_LENGTH", "beam_search_decode", "greedy_decode"),
    "core.batching": ("Batch", "collate"),
    "core.checkpoint": ("load_checkpoint", "save_checkpoint"),
    "core.device": ("pick_device",),
    "core.vocabulary": ("Vocabularies", "Vocabulary"),
    "translation.corpus": ("load_pairs", "normalize_string", "split_pairs"),
    "translation.translator": ("Translator", "load_translator", "translate"),
}
"""The names the package exports, by the module that defines them (relative to the package)."""

__all__ = sorted(name for names in _EXPORTS.values() for name in names)


def _load() -> None:
    """Import every module of `_EXPORTS` and bind its names here."""
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
