"""The sizes a translator is built with when nobody says otherwise, and the names and limits its settings
choose from, written once and without torch.

`build_model`, the constructors of the encoder and the decoders, the search loops, the corpus
filter and `TrainConfig` take their defaults and limits from here. Nothing here imports torch, so
``seq2seq-attention train --help`` (built from `TrainConfig`) and every argument error answer
before torch is loaded.
"""

HIDDEN_SIZE = 256
"""H, the size of the embeddings and of the GRU states (the tutorial's `hidden_size`)."""

DROPOUT = 0.1
"""The dropout probability on the embeddings (the tutorial's `dropout_p`)."""

MAX_WORDS = 6
"""The tutorial's `MAX_LENGTH = 6`: both sides keep at most this many words (punctuation counts)."""

MAX_LENGTH = 10
"""Steps decoded without a target (the tutorial's `MAX_LENGTH`: 6 words, punctuation, `<eos>`, slack)."""

MAX_STEPS = 1000
"""The most steps a search takes (`max_length`); the training sentences have at most 7 tokens."""

MAX_BEAM = 1000
"""The most hypotheses a beam search keeps per sentence (`beam_size`)."""

MAX_LENGTH_PENALTY = 100.0
"""Beam search's alpha lies in [-MAX_LENGTH_PENALTY, MAX_LENGTH_PENALTY]."""

SPLITS: dict[str, str] = {
    "by_english": "target",  # the main split: all pairs that share an English sentence on one side
    "by_french": "source",  # an English target can sit on both sides
}
"""The held-out rules by name: a pair is held out when crc32 of this side is 0 mod 10."""

EVAL_SPLITS = ("test", "dev")
"""What a run is measured on: the test split, or the development split carved from training."""
