"""French-to-English translation: the corpus, the encoder, the decoders, the model, training,
search (greedy and beam), the translator a user calls, evaluation and attention heatmaps.

Importing the package imports none of them (nor torch): `models` and `--help` read only
`pretrained`. The "translation" checkpoint task is registered when `model` is imported, which
`core.checkpoint` does on demand (`TASK_MODULES`).
"""
