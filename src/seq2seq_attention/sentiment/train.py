"""Training the sentiment classifiers, with the shared training loop and checkpoint format.

Using a trained one (`SentimentConfig`, `predict`, `load_classifier`) is `predict.py`'s job, so
that the read-only commands never import this module.
"""

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path

import torch
from torch import nn

from ..core.batching import Batch
from ..core.checkpoint import save_checkpoint
from ..core.errors import InputError
from ..core.files import check_destination
from ..core.training import BestWeights, make_optimizer, optimizer_step, run_epoch
from ..core.vocabulary import Vocabularies
from ..model.classifier import build_classifier
from .data import SentimentData, iterate_batches, prepare_data
from .predict import SentimentConfig, checkpoint_sources, load_classifier, predict

__all__ = ["SentimentConfig", "checkpoint_sources", "load_classifier", "predict", "run_training", "train_classifier"]


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
