"""The names of the model's choices, readable without torch (the command line's help and settings).

The registries themselves are `scores.SCORES` and `decoders.DECODERS`; these are the names their modules register
when imported (a test checks that the two agree). A score registered at run time by other code (`register_score`)
is in `SCORES` only.
"""

SCORE_NAMES = ("dot", "scaled_dot", "general", "additive")
"""The registered scores, in `SCORES`' order."""

DECODER_NAMES = ("gru", "bahdanau", "luong")
"""The decoders of `DECODERS`, in its order; ``gru`` has no attention."""

ATTENTION_DECODERS = ("bahdanau", "luong")
"""The decoders that attend (every registered score fits them)."""

DEFAULT_SCORES = {"bahdanau": "additive", "luong": "dot"}
"""The score each attending decoder takes when none is named (its class's own default)."""

CLASSIFIER_KINDS = ("attention", "bilstm", "mean")
"""The sentiment classifiers of `CLASSIFIERS`: `attention`, the course notes' model; `bilstm`, the same without
attention; `mean`, averaged embeddings."""
