"""French-to-English translation: the corpus, the encoder, the decoders, the model, training,
search (greedy and beam), the translator a user calls, evaluation and attention heatmaps."""

from . import model as _model  # noqa: F401  (registers the "translation" checkpoint task)
