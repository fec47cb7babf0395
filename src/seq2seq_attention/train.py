"""Training any registered decoder on the Tatoeba pairs: teacher forcing, mixed training, checkpoints."""

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader
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
from .decoder import AttnDecoderRNN
from .errors import UserError
from .models import DECODERS, Seq2Seq, build_model
from .tokens import PAD_IDX, SOS_IDX

SCHEDULES = ("constant", "cosine")
"""Learning-rate schedules: ``constant``, or ``cosine`` (linear warm-up over the first 5% of the
steps, then a cosine decay to zero at the last step of `epochs`)."""


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
        label_smoothing: the weight moved from the true word to a uniform distribution
            over the vocabulary in the loss (0 is plain cross-entropy).
        schedule: the learning-rate schedule, one of `SCHEDULES`.
        weight_decay: Adam's decoupled weight decay (AdamW); 0 keeps plain Adam.
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
    label_smoothing: float = 0.0
    schedule: str = "constant"
    weight_decay: float = 0.0

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
        if not 0.0 <= self.label_smoothing < 1.0:
            raise UserError(f"label_smoothing must lie in [0, 1), got {self.label_smoothing}")
        if self.schedule not in SCHEDULES:
            raise UserError(f"schedule must be one of {', '.join(SCHEDULES)}, got {self.schedule!r}")
        if self.weight_decay < 0:
            raise UserError(f"weight_decay must be 0 or positive, got {self.weight_decay}")

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
    log_probs = training_log_probs(
        model,
        batch,  # batch.target (B, T): teacher forcing feeds these tokens (with this probability)
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


def training_log_probs(
    model: Seq2Seq,
    batch,
    teacher_forcing_ratio: float = 1.0,
    coin_per_step: bool = False,
) -> torch.Tensor:
    """The training forward pass: ``model(source, lengths, target, ...)``'s log-probabilities.

    With pure teacher forcing and the Bahdanau decoder this calls `fused_bahdanau_log_probs`,
    which computes the same numbers with fewer, larger operations; otherwise it calls the model.

    Shapes:
        batch.source: (B, S); batch.target: (B, T); returns (B, T, V) log-probabilities.
    """
    if teacher_forcing_ratio == 1.0 and type(model.decoder) is AttnDecoderRNN:
        return fused_bahdanau_log_probs(model, batch.source, batch.lengths, batch.target)
    log_probs, _ = model(
        batch.source,
        batch.lengths,
        batch.target,
        teacher_forcing_ratio=teacher_forcing_ratio,
        coin_per_step=coin_per_step,
    )  # (B, T, V)
    return log_probs


# --8<-- [start:fused]
def fused_bahdanau_log_probs(
    model: Seq2Seq, source: torch.Tensor, lengths: torch.Tensor, target: torch.Tensor
) -> torch.Tensor:
    """Teacher-forced log-probabilities of a Bahdanau `Seq2Seq`, computed step-free where possible.

    The same function as ``model(source, lengths, target)[0]`` (same parameters, same math),
    rearranged for speed: everything that does not depend on the decoder state is taken out
    of the step loop and done once for all T steps as one large matrix product (the embedded
    inputs' share of the GRU input gates, the output layer, the log-softmax), the keys are
    projected once, the two products of the previous state (the query `Wa s` and the GRU's
    hidden gates `W_hh s`) are one matrix product, and the encoder skips packing when every
    source in the batch has the same length (as in length-bucketed batches).

    Shapes:
        source: (B, S) long; lengths: (B,) long; target: (B, T) long, padded with `PAD_IDX`.
        returns: (B, T, V) log-probabilities.
    """
    encoder, decoder = model.encoder, model.decoder
    attention, gru = decoder.attention, decoder.gru
    H = decoder.hidden_size
    if bool((lengths == source.size(1)).all()):  # no padding: the GRU needs no packing
        keys, hidden = encoder.gru(encoder.dropout(encoder.embedding(source)))  # (B, S, H), (1, B, H)
        source_mask = None
    else:
        keys, hidden = encoder(source, lengths)  # (B, S, H), (1, B, H)
        positions = torch.arange(source.size(1), device=source.device)  # (S,)
        source_mask = positions.unsqueeze(0) < lengths.to(source.device).unsqueeze(1)  # (B, S)
    sos = torch.full_like(target[:, :1], SOS_IDX)  # (B, 1)
    inputs = torch.cat((sos, target[:, :-1]), dim=1)  # (B, T): teacher forcing, shifted right
    embedded = decoder.dropout(decoder.embedding(inputs))  # (B, T, H)
    w_embedded, w_context = gru.weight_ih_l0.split(H, dim=1)  # (3H, H) each: GRU input = [embedded; context]
    gates_embedded = F.linear(embedded, w_embedded, gru.bias_ih_l0)  # (B, T, 3H), all steps at once
    proj_keys = attention.project_keys(keys)  # (B, S, H), once
    w_state = torch.cat((attention.Wa.weight, gru.weight_hh_l0))  # (4H, H): query and hidden gates
    b_state = torch.cat((attention.Wa.bias, gru.bias_hh_l0))  # (4H,)
    state = hidden[0]  # (B, H)
    states = []
    for t in range(target.size(1)):
        query, gates_hidden = F.linear(state, w_state, b_state).split((H, 3 * H), dim=1)  # (B, H), (B, 3H)
        scores = attention.Va(torch.tanh(query.unsqueeze(1) + proj_keys)).squeeze(2)  # (B, S)
        if source_mask is not None:
            scores = scores.masked_fill(~source_mask, torch.finfo(scores.dtype).min)  # (B, S)
        weights = torch.softmax(scores, dim=1)  # (B, S)
        context = torch.bmm(weights.unsqueeze(1), keys).squeeze(1)  # (B, H)
        gates_input = gates_embedded[:, t] + F.linear(context, w_context)  # (B, 3H)
        i_r, i_z, i_n = gates_input.chunk(3, dim=1)  # (B, H) each
        h_r, h_z, h_n = gates_hidden.chunk(3, dim=1)  # (B, H) each
        reset = torch.sigmoid(i_r + h_r)  # (B, H)
        update = torch.sigmoid(i_z + h_z)  # (B, H)
        candidate = torch.tanh(i_n + reset * h_n)  # (B, H)
        state = candidate + update * (state - candidate)  # (B, H): (1 - z) n + z s
        states.append(state)
    logits = decoder.out(torch.stack(states, dim=1))  # (B, T, V), one product for all steps
    return F.log_softmax(logits, dim=-1)  # (B, T, V)


# --8<-- [end:fused]


def learning_rate_at(config: TrainConfig, step: int, total_steps: int) -> float:
    """The learning rate of optimisation step `step` (0-based) of `total_steps`, per `config.schedule`."""
    if config.schedule == "constant":
        return config.learning_rate
    warmup = max(1, round(0.05 * total_steps))
    if step < warmup:
        return config.learning_rate * (step + 1) / warmup
    progress = (step - warmup) / max(1, total_steps - warmup)
    return config.learning_rate * 0.5 * (1.0 + math.cos(math.pi * min(progress, 1.0)))


def make_optimizer(model: nn.Module, config: TrainConfig) -> torch.optim.Optimizer:
    """Adam with `config.learning_rate`; AdamW when `config.weight_decay` is positive."""
    fused = {"fused": True} if _fused_adam_available(model) else {}  # one kernel for all parameters: ~10x faster
    if config.weight_decay > 0:
        return torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay, **fused)
    return torch.optim.Adam(model.parameters(), lr=config.learning_rate, **fused)


def _fused_adam_available(model: nn.Module) -> bool:
    """Fused Adam needs float parameters on a device that has the kernel (CPU and CUDA do)."""
    return all(p.is_floating_point() and p.device.type in ("cpu", "cuda") for p in model.parameters())


def make_criterion(config: TrainConfig) -> nn.Module:
    """The loss on (N, V) log-probabilities: NLL, or cross-entropy with label smoothing.

    `CrossEntropyLoss` applies log-softmax again, which leaves log-probabilities unchanged, so
    both read the model's output as it is. Padded targets are ignored.
    """
    if config.label_smoothing > 0:
        return nn.CrossEntropyLoss(ignore_index=PAD_IDX, label_smoothing=config.label_smoothing)
    return nn.NLLLoss(ignore_index=PAD_IDX)


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


def train_epoch(
    model: Seq2Seq,
    loader: DataLoader,
    optimizer: torch.optim.Optimizer,
    criterion: nn.Module,
    config: TrainConfig,
    epoch: int,
    device: torch.device | str = "cpu",
    progress: bool = False,
) -> float:
    """One pass over `loader` as epoch `epoch` (1-based), with per-step learning rates; the mean loss per token."""
    model.train()
    loader.batch_sampler.set_epoch(epoch)
    steps_per_epoch = len(loader)
    total_steps = steps_per_epoch * config.epochs
    total, tokens = 0.0, 0
    bar = tqdm(loader, desc=f"epoch {epoch}/{config.epochs}", leave=False, disable=not progress, unit="batch")
    for index, batch in enumerate(bar):
        batch = batch.to(device)
        for group in optimizer.param_groups:
            group["lr"] = learning_rate_at(config, (epoch - 1) * steps_per_epoch + index, total_steps)
        loss = train_step(
            model, batch, optimizer, criterion, config.teacher_forcing_ratio, config.coin_per_step, config.clip
        )
        n = int(batch.target_lengths.sum())
        total, tokens = total + loss * n, tokens + n
        bar.set_postfix(loss=f"{total / tokens:.4f}", refresh=False)
    return total / tokens


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
    optimizer = make_optimizer(model, config)
    if resumed is not None:
        restore_training_state(resumed, optimizer)
    criterion = make_criterion(config)

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
        epoch_loss = train_epoch(model, loader, optimizer, criterion, config, epoch, device, progress)
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
        f"{f.name}: saved {saved.get(f.name, f.default)!r}, now {current[f.name]!r}"
        for f in fields(TrainConfig)
        if f.name not in TrainConfig.RESUMABLE_CHANGES and saved.get(f.name, f.default) != current[f.name]
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
