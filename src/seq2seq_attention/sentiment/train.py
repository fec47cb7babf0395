"""Training and using the sentiment classifiers, with the shared training loop and checkpoint format."""

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch import nn

from ..core.batching import Batch
from ..core.checkpoint import Checkpoint, load_checkpoint, save_checkpoint
from ..core.config import check_config, setting
from ..core.errors import InputError, echo
from ..core.files import check_destination
from ..core.training import BestWeights, make_optimizer, optimizer_step, run_epoch
from ..core.vocabulary import Vocabularies
from .classifier import CLASSIFIER_KINDS, build_classifier
from .data import SOURCES, SentimentData, iterate_batches, prepare_data


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
    model: nn.Module, sequences: Sequence[Sequence[int]], batch_size: int = 256
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


def accuracy(model: nn.Module, sequences: Sequence[Sequence[int]], labels: Sequence[int]) -> float:
    """The share of sentences whose predicted label (probability >= 0.5) equals the true one."""
    if not sequences:
        raise InputError("cannot measure accuracy on an empty set")
    probs, _ = predict(model, sequences)
    return sum(int(p >= 0.5) == y for p, y in zip(probs, labels, strict=True)) / len(labels)


def train_classifier(
    model: nn.Module,
    data: SentimentData,
    config: SentimentConfig,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
) -> list[dict[str, float]]:
    """Adam on binary cross-entropy with logits; keeps the weights of the best validation epoch.

    The test split is never looked at here. After training the model holds the parameters of
    the epoch with the highest validation accuracy (the last epoch when there is no
    validation split).

    Returns:
        one record per epoch: ``epoch``, mean training ``loss``, ``valid_accuracy`` (or None).
    """
    device = next(model.parameters()).device
    generator = torch.Generator().manual_seed(config.seed)
    optimizer = make_optimizer(model, config.learning_rate)
    loss_fn = nn.BCEWithLogitsLoss()
    history: list[dict[str, float]] = []
    best = BestWeights()
    steps = -(-len(data.train) // config.batch_size)

    # --8<-- [start:train_step]
    def step(index: int, batch: Batch) -> tuple[float, int]:
        batch = batch.to(device)
        logits, _ = model(batch.source, batch.lengths)  # (B,)
        loss = loss_fn(logits, batch.target)  # BCEWithLogitsLoss: sigmoid and log in one stable step
        optimizer_step(model, optimizer, loss, config.clip)
        return loss.item(), len(batch.target)

    # --8<-- [end:train_step]

    for epoch in range(1, config.epochs + 1):
        model.train()
        batches = iterate_batches(data.train.ids, data.train.labels, config.batch_size, generator)
        loss = run_epoch(batches, step, total=steps, desc=f"epoch {epoch}/{config.epochs}", progress=progress)
        valid = accuracy(model, data.valid.ids, data.valid.labels) if len(data.valid) else None
        record = {"epoch": epoch, "loss": loss, "valid_accuracy": valid}
        history.append(record)
        if log is not None:
            shown = "-" if valid is None else f"{valid:.3f}"
            log(f"epoch {epoch}: loss {record['loss']:.4f}, valid accuracy {shown}")
        best.update(model, float(epoch) if valid is None else valid, epoch)
    best.restore(model)
    model.eval()
    return history


def run_training(
    config: SentimentConfig,
    device: torch.device | None = None,
    checkpoint: Path | None = None,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
    overwrite: bool = False,
) -> dict[str, object]:
    """Train one classifier with a fixed seed and return its sizes, history and test accuracy.

    The seed fixes the initial weights, the batch order and the dropout masks; the split does
    not depend on it (`split_examples`). With `checkpoint`, the model is saved there (the shared
    checkpoint format) with its config, vocabulary and the returned record; a checkpoint already
    there is replaced only with `overwrite`, and never one of another kind (checked before training).
    """
    if checkpoint is not None:
        check_destination(Path(checkpoint), "a sentiment checkpoint", overwrite=overwrite, what="checkpoint")
    data = prepare_data(config.sources)
    torch.manual_seed(config.seed)
    model = build_classifier(config.kind, len(data.vocab)).to(device or torch.device("cpu"))
    start = time.perf_counter()
    history = train_classifier(model, data, config, progress=progress, log=log)
    seconds = time.perf_counter() - start
    test_accuracy = accuracy(model, data.test.ids, data.test.labels)
    best = max(history, key=lambda r: -1.0 if r["valid_accuracy"] is None else r["valid_accuracy"])
    record = {
        "sources": list(data.sources),
        "kind": config.kind,
        "seed": config.seed,
        "sizes": {"train": len(data.train), "valid": len(data.valid), "test": len(data.test), "vocab": len(data.vocab)},
        "parameters": sum(p.numel() for p in model.parameters()),
        "history": history,
        "best_epoch": best["epoch"],
        "test_accuracy": test_accuracy,
        "train_seconds": round(seconds, 1),
    }
    if checkpoint is not None:
        training = {"config": asdict(config), "result": record}
        save_checkpoint(checkpoint, model, Vocabularies(data.vocab), training=training)
    return record


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
