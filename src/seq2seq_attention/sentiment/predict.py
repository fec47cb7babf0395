"""Using a trained sentiment classifier: loading it (with its settings, `SentimentConfig`), and predicting.

Nothing here trains; the read-only commands (`sentiment-predict`, `sentiment-attention-figure`)
import this module and never `train.py`.
"""

from collections.abc import Sequence
from pathlib import Path

import torch
from torch import nn

from ..core.batching import DECODE_BATCH_SIZE
from ..core.checkpoint import Checkpoint, load_checkpoint
from ..core.errors import InputError, echo
from .config import SentimentConfig
from .data import iterate_batches


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
