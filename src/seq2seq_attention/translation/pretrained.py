"""The translators shipped inside the package (trained by `scripts/train_seq2seq.sh`)."""

from pathlib import Path

PRETRAINED_DIR = Path(__file__).resolve().parent.parent / "pretrained"
"""The folder of the packaged checkpoints: `bahdanau` (the walkthrough's translator), `bahdanau-bi` (the same
decoder after a bidirectional encoder: the best recipe found) and `gru` (no attention)."""

DEFAULT_PRETRAINED = "bahdanau"
"""The packaged checkpoint that `translate` and `plot-attention` load when none is named."""


def default_checkpoint() -> Path:
    """The packaged checkpoint that the command line loads when `--checkpoint` is not given."""
    return PRETRAINED_DIR / DEFAULT_PRETRAINED
