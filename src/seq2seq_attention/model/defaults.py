"""The sizes a translator is built with when nobody says otherwise, written once.

`build_model`, the constructors of the encoder and the decoders, and `TrainConfig` (and so
``seq2seq-attention train --help``) all take their defaults from here.
"""

HIDDEN_SIZE = 256
"""H, the size of the embeddings and of the GRU states (the tutorial's `hidden_size`)."""

DROPOUT = 0.1
"""The dropout probability on the embeddings (the tutorial's `dropout_p`)."""
