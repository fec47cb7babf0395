"""Using a trained sentiment classifier: its settings (`SentimentConfig`), loading it, and predicting.

Nothing here trains; the read-only commands (`sentiment-predict`, `sentiment-attention-figure`)
import this module and never `train.py`.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from ..core.batching import DECODE_BATCH_SIZE
from ..core.checkpoint import Checkpoint, load_checkpoint
from ..core.config import check_config, setting
from ..core.errors import InputError, echo
from ..model.classifier import CLASSIFIER_KINDS
from .data import SOURCES, iterate_batches


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


@torch.no_grad()
def predict(
    model: nn.Module, sequences: Sequence[Sequence[int]], batch_size: int = DECODE_BATCH_SIZE
) -> tuple[list[float], list[list[float]] | None]:
    """Probabilities of "positive" and, for the attention model, each sentence's attention weights.

    Runs in eval mode (no dropout) on the model's device and restores the previous mode.
    """
    _check_sequences(sequences)
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    probs: list[float] = []
    weights: list[list[float]] = []
    for batch in iterate_batches(sequences, [0] * len(sequences), batch_size):
        batch = batch.to(device)
        logits, attn = model(batch.source, batch.lengths)  # (B,), (B, S) or None
        probs.extend(torch.sigmoid(logits).tolist())
        if attn is not None:
            weights.extend(row[:n].tolist() for row, n in zip(attn.cpu(), batch.lengths.tolist(), strict=True))
    model.train(was_training)
    return probs, (weights if weights else None)


def _check_sequences(sequences: object) -> None:
    """A non-empty list of non-empty lists of token indices (ints)."""
    if isinstance(sequences, str | bytes | dict) or not isinstance(sequences, Sequence):
        raise InputError(f"sequences must be a list of token-index lists, got {type(sequences).__name__}")
    if len(sequences) == 0:
        raise InputError("no sentences to classify")
    for number, sequence in enumerate(sequences, start=1):
        if (
            isinstance(sequence, str | bytes | dict)
            or not isinstance(sequence, Sequence)
            or not sequence
            or not all(isinstance(i, int) and not isinstance(i, bool) for i in sequence)
        ):
            raise InputError(
                f"sentence {number} must be a non-empty list of token indices (ints), got {echo(sequence, 80)}"
            )


def load_classifier(path: str | Path, device: torch.device | str = "cpu") -> Checkpoint:
    """Load a sentiment checkpoint; its `training["config"]` names the sources it was trained on.

    Raises:
        InputError: see `load_checkpoint`, or a checkpoint of another task.
    """
    return load_checkpoint(path, device, task="sentiment")


def checkpoint_sources(checkpoint: Checkpoint) -> tuple[str, ...]:
    """The review sources a sentiment checkpoint was trained on (its saved `SentimentConfig`)."""
    saved = checkpoint.training.get("config")
    if not isinstance(saved, dict):
        raise InputError(f"checkpoint {checkpoint.path} does not say which sources it was trained on")
    return SentimentConfig(**{k: v for k, v in saved.items() if k in ("kind", "sources")}).sources
