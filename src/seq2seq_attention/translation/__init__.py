"""French-to-English translation: the corpus, the encoder, the decoders, the model, training,
search (greedy and beam), evaluation and attention heatmaps."""

from . import model as _model  # noqa: F401  (registers the "translation" checkpoint task)
