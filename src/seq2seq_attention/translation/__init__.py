"""French-to-English translation around the model (`seq2seq_attention.model`): the corpus, training, the
translator a user calls, evaluation, export and attention heatmaps.

Importing the package imports none of them (nor torch): `models` and `--help` read only `pretrained`.
"""
