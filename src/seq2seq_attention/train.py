"""Training any registered decoder on the Tatoeba pairs: teacher forcing, mixed training, checkpoints."""

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import torch
from torch import nn
from tqdm.auto import tqdm

from .checkpoint import load_checkpoint, restore_training_state, save_checkpoint
from .data import (
    ENG_PREFIXES,
    MAX_WORDS,
    Pair,
    TranslationDataset,
    Vocabularies,
    build_vocabularies,
    load_pairs,
    make_loader,
    split_pairs,
)
from .errors import UserError
from .models import DECODERS, Seq2Seq, build_model
from .tokens import PAD_IDX


@dataclass
class TrainConfig:
    """Everything that decides a training run (saved in the checkpoint).

    Attributes:
        decoder: a key of `models.DECODERS`.
        hidden_size: H.
        dropout: dropout on the embeddings.
        batch_size: sentence pairs per batch.
        learning_rate: Adam's step size.
        epochs: passes over the training split.
        teacher_forcing_ratio: the chance that a sequence (or a step) is fed the true
            previous token; 1.0 is pure teacher forcing, 0.5 the seed's mixed training.
        coin_per_step: toss the teacher-forcing coin at every step instead of once per sequence.
        clip: the largest gradient norm (`clip_grad_norm_`); 0 turns clipping off.
        seed: seeds the weights, dropout, the coins and the batch order.
        max_words: the data filter's length limit (both sides).
        time_budget: seconds; after the first epoch, no new epoch starts when one more
            epoch as long as the last would overrun it.
    """

    decoder: str = "gru"
    hidden_size: int = 256
    dropout: float = 0.1
    batch_size: int = 32
    learning_rate: float = 1e-3
    epochs: int = 40
    teacher_forcing_ratio: float = 1.0
    coin_per_step: bool = False
    clip: float = 1.0
    seed: int = 0
    max_words: int = MAX_WORDS
    time_budget: float | None = None

    def __post_init__(self) -> None:
        if self.decoder not in DECODERS:
            raise UserError(f"unknown decoder {self.decoder!r}; choose one of {', '.join(sorted(DECODERS))}")
        for name in ("hidden_size", "batch_size", "epochs", "max_words"):
            if getattr(self, name) < 1:
                raise UserError(f"{name} must be at least 1, got {getattr(self, name)}")
        if not 0.0 <= self.teacher_forcing_ratio <= 1.0:
            raise UserError(f"teacher_forcing_ratio must lie in [0, 1], got {self.teacher_forcing_ratio}")
        if not self.learning_rate > 0:
            raise UserError(f"learning_rate must be positive, got {self.learning_rate}")
        if self.clip < 0:
            raise UserError(f"clip must be 0 (off) or positive, got {self.clip}")
        if self.time_budget is not None and self.time_budget <= 0:
            raise UserError(f"time_budget must be positive seconds, got {self.time_budget}")

    RESUMABLE_CHANGES = ("epochs", "time_budget")
    """Fields that may differ between a run and the run it resumes."""


@dataclass
class TrainResult:
    """What `train` returns.

    Attributes:
        model: the trained model (in eval mode).
        vocabs: its vocabularies (from the training split).
        history: one dict per finished epoch: ``epoch``, ``loss`` (training, per target
            token), ``test_loss`` (held-out, teacher forced), ``seconds``.
        stopped_by_budget: True when the time budget ended the run early.
    """

    model: Seq2Seq
    vocabs: Vocabularies
    history: list[dict] = field(default_factory=list)
    stopped_by_budget: bool = False


# --8<-- [start:train_step]
def train_step(
    model: Seq2Seq,
    batch,
    optimizer: torch.optim.Optimizer,
    criterion: nn.Module,
    teacher_forcing_ratio: float = 1.0,
    coin_per_step: bool = False,
    clip: float = 1.0,
) -> float:
    """One optimisation step on one batch; returns the mean loss per real target token."""
    optimizer.zero_grad()
    log_probs, _ = model(
        batch.source,
        batch.lengths,
        batch.target,  # (B, T): teacher forcing feeds these tokens (with this probability)
        teacher_forcing_ratio=teacher_forcing_ratio,
        coin_per_step=coin_per_step,
    )  # (B, T, V)
    loss = criterion(log_probs.flatten(0, 1), batch.target.flatten())  # (B*T, V) vs (B*T,): PAD ignored
    loss.backward()
    if clip > 0:
        nn.utils.clip_grad_norm_(model.parameters(), clip)
    optimizer.step()
    return loss.item()


# --8<-- [end:train_step]


@torch.no_grad()
def mean_loss(model: Seq2Seq, dataset: TranslationDataset, device: torch.device, batch_size: int = 256) -> float:
    """Teacher-forced loss per target token over a dataset, without touching the training RNG."""
    criterion = nn.NLLLoss(ignore_index=PAD_IDX, reduction="sum")
    was_training = model.training
    model.eval()
    total, tokens = 0.0, 0
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        for batch in make_loader(dataset, batch_size, shuffle=False):
            batch = batch.to(device)
            log_probs, _ = model(batch.source, batch.lengths, batch.target)  # (B, T, V)
            total += criterion(log_probs.flatten(0, 1), batch.target.flatten()).item()
            tokens += int(batch.target_lengths.sum())
    model.train(was_training)
    return total / max(tokens, 1)


def _log_line(epoch: int, seconds: float, loss: float, test_loss: float) -> str:
    return f"| epoch: {epoch:3d} | time: {seconds:5.1f} sec | loss: {loss:8.4f} | held-out loss: {test_loss:8.4f}"


def train(
    config: TrainConfig,
    *,
    pairs: Sequence[Pair] | None = None,
    checkpoint: str | Path | None = None,
    resume: bool = False,
    overwrite: bool = False,
    device: torch.device | str | None = None,
    progress: bool = True,
    log: Callable[[str], None] = print,
) -> TrainResult:
    """Train a `Seq2Seq` with `config` and return it.

    The data are the seed's filtered pairs (`load_pairs` with `config.max_words`) unless
    `pairs` is given; the model trains on the training split of `split_pairs` and reports
    the teacher-forced loss on the held-out split after every epoch. With `checkpoint`, the
    model, optimizer and RNG states are saved after every epoch; with `resume=True` training
    continues from there and produces the same losses as a run that was never interrupted
    (on CPU: bitwise).

    Args:
        config: the run's settings.
        pairs: normalised pairs to use instead of the bundled corpus.
        checkpoint: a directory to save to (and to resume from).
        resume: continue from `checkpoint` when it holds one (start afresh when it does not exist).
        overwrite: replace a checkpoint that `checkpoint` already holds (without it, and
            without `resume`, training refuses to touch an existing checkpoint).
        device: where to train; the CPU by default.
        progress: show a tqdm progress bar per epoch.
        log: receives one line per epoch (the seed's format plus the held-out loss).

    Raises:
        UserError: a bad config, empty data, a checkpoint that does not fit the config, a
            directory that already holds a checkpoint (without `resume` or `overwrite`), or
            a directory to resume from that has files but no `checkpoint.json`.
    """
    device = torch.device(device or "cpu")
    if checkpoint is not None:
        _check_checkpoint_directory(Path(checkpoint), resume, overwrite)
    pairs = list(pairs) if pairs is not None else load_pairs(config.max_words, ENG_PREFIXES)
    train_pairs, test_pairs = split_pairs(pairs)
    if not train_pairs:
        raise UserError("no training pairs: the filter or the split left nothing to train on")

    history: list[dict] = []
    start_epoch = 0
    resumed = None
    if resume and checkpoint is not None and (Path(checkpoint) / "checkpoint.json").exists():
        resumed = load_checkpoint(checkpoint, device)
        _check_resumable(config, resumed.training.get("config", {}), checkpoint)
        model, vocabs = resumed.model, resumed.vocabs
        history = list(resumed.training.get("history", []))
        start_epoch = int(resumed.training.get("epoch", 0))
    else:
        torch.manual_seed(config.seed)
        vocabs = build_vocabularies(train_pairs)
        model = build_model(config.decoder, len(vocabs.source), len(vocabs.target), config.hidden_size, config.dropout)
        model.to(device)

    train_set = TranslationDataset(train_pairs, vocabs)
    test_set = TranslationDataset(test_pairs, vocabs) if test_pairs else None
    loader = make_loader(train_set, config.batch_size, shuffle=True, seed=config.seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.learning_rate)
    if resumed is not None:
        restore_training_state(resumed, optimizer)
    criterion = nn.NLLLoss(ignore_index=PAD_IDX)

    started = time.perf_counter()
    last_epoch_seconds = 0.0
    stopped_by_budget = False
    for epoch in range(start_epoch + 1, config.epochs + 1):
        elapsed = time.perf_counter() - started
        over_budget = config.time_budget is not None and elapsed + last_epoch_seconds > config.time_budget
        if over_budget and epoch > start_epoch + 1:  # every run trains at least one epoch
            stopped_by_budget = True
            log(f"time budget of {config.time_budget:.0f} s reached after {elapsed:.0f} s: no epoch {epoch}")
            break
        tic = time.perf_counter()
        model.train()
        loader.batch_sampler.set_epoch(epoch)
        total, tokens = 0.0, 0
        bar = tqdm(loader, desc=f"epoch {epoch}/{config.epochs}", leave=False, disable=not progress, unit="batch")
        for batch in bar:
            batch = batch.to(device)
            loss = train_step(
                model, batch, optimizer, criterion, config.teacher_forcing_ratio, config.coin_per_step, config.clip
            )
            n = int(batch.target_lengths.sum())
            total, tokens = total + loss * n, tokens + n
            bar.set_postfix(loss=f"{total / tokens:.4f}")
        epoch_loss = total / tokens
        if not math.isfinite(epoch_loss):
            raise UserError(f"the loss became {epoch_loss} in epoch {epoch}; lower the learning rate")
        test_loss = mean_loss(model, test_set, device) if test_set is not None else float("nan")
        last_epoch_seconds = time.perf_counter() - tic
        history.append({"epoch": epoch, "loss": epoch_loss, "test_loss": test_loss, "seconds": last_epoch_seconds})
        log(_log_line(epoch, last_epoch_seconds, epoch_loss, test_loss))
        if checkpoint is not None:
            training = {"config": asdict(config), "epoch": epoch, "history": history}
            save_checkpoint(checkpoint, model, vocabs, training=training, optimizer=optimizer, save_rng=True)
    model.eval()
    return TrainResult(model, vocabs, history, stopped_by_budget)


def _check_resumable(config: TrainConfig, saved: dict, checkpoint: str | Path) -> None:
    current = asdict(config)
    changed = [
        f"{f.name}: saved {saved.get(f.name)!r}, now {current[f.name]!r}"
        for f in fields(TrainConfig)
        if f.name not in TrainConfig.RESUMABLE_CHANGES and saved.get(f.name) != current[f.name]
    ]
    if changed:
        raise UserError(f"cannot resume from {checkpoint}: the config changed ({'; '.join(changed)})")


def _check_checkpoint_directory(directory: Path, resume: bool, overwrite: bool) -> None:
    """Refuse, before anything is written, to lose an existing checkpoint."""
    has_json = (directory / "checkpoint.json").is_file()
    has_files = directory.is_dir() and any(directory.iterdir())
    if resume and has_files and not has_json:
        raise UserError(
            f"cannot resume from {directory}: checkpoint.json is missing but the directory holds other files; "
            "nothing was changed"
        )
    if not resume and has_json and not overwrite:
        raise UserError(f"{directory} already holds a checkpoint; resume it (--resume) or replace it (--overwrite)")
