"""Sentiment classification with attention: the labelled sentences, the BiLSTM + attention
classifier and its baselines, their training, and attention figures.

The "sentiment" checkpoint task is registered when `classifier` is imported, which
`core.checkpoint` does on demand (`TASK_MODULES`).
"""
