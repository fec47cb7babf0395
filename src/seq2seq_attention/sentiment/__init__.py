"""Sentiment classification with attention: the labelled sentences, the BiLSTM + attention
classifier and its baselines, their training, and attention figures."""

from . import classifier as _classifier  # noqa: F401  (registers the "sentiment" checkpoint task)
