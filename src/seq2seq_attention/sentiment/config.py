"""The settings of a sentiment training run (`SentimentConfig`) and the names they choose from, without torch.

The command line builds `sentiment-train`'s options from these fields, so its `--help` and its
argument errors answer before torch is loaded.
"""

from dataclasses import dataclass

from ..core.config import check_config, setting
from ..model.names import CLASSIFIER_KINDS

SOURCES: dict[str, str] = {
    "imdb": "imdb_labelled.txt",
    "amazon": "amazon_cells_labelled.txt",
    "yelp": "yelp_labelled.txt",
}
"""The review sources by name, and their files in `corpora/sentiment/`."""


@dataclass
class SentimentConfig:
    """Everything that decides a sentiment training run (saved in the checkpoint).

    Each field's default, range and help text is written here once; `sentiment-train --help`
    is built from these fields.
    """

    kind: str = setting(
        "attention", "the model: attention (BiLSTM + attention), bilstm or mean", choices=CLASSIFIER_KINDS
    )
    sources: tuple[str, ...] = setting(("imdb",), "the review sources to train and test on", choices=tuple(SOURCES))
    epochs: int = setting(12, "passes over the training split", low=1, high=100_000)
    batch_size: int = setting(32, "sentences per batch", low=1, high=1_000_000)
    learning_rate: float = setting(1e-3, "Adam's step size", low=0.0, high=10.0, low_open=True)
    clip: float = setting(5.0, "largest gradient norm (0: no clipping)", low=0.0, high=1e6)
    seed: int = setting(0, "seeds the weights, dropout and the batch order", low=0, high=2**32 - 1)

    def __post_init__(self) -> None:
        check_config(self)
        self.sources = tuple(dict.fromkeys(self.sources))
