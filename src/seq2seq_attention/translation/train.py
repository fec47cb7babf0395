"""Training any registered decoder on the Tatoeba pairs: teacher forcing, mixed training, checkpoints."""

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import torch
from torch import nn
from torch.utils.data import DataLoader

from ..attention.scores import SCORES
from ..core.batching import Batch
from ..core.checkpoint import load_checkpoint, restore_training_state, save_checkpoint
from ..core.config import check_config, setting
from ..core.errors import InputError
from ..core.tokens import PAD_IDX
from ..core.training import SCHEDULES, learning_rate_at, make_optimizer, optimizer_step, run_epoch
from ..core.vocabulary import Vocabularies
from .corpus import (
    ENG_PREFIXES,
    EVAL_SPLITS,
    MAX_WORDS,
    SPLITS,
    Pair,
    TranslationDataset,
    build_vocabularies,
    load_pairs,
    make_loader,
    split_pairs,
)
from .decoders import DECODER_SCORES
from .evaluate import Evaluation, evaluate
from .model import DECODERS, MAX_SIZE, Seq2Seq, build_model

BUDGET_CLOCKS = {"wall": "perf_counter", "cpu": "process_time"}
"""What `time_budget` counts: wall-clock seconds, or this process's CPU seconds (steady on a shared machine)."""

TEACHER_FORCING_SCHEDULES = ("constant", "inverse_sigmoid")
"""How the teacher-forcing ratio changes over the epochs (`teacher_forcing_at`)."""


# --8<-- [start:teacher_forcing_at]
def teacher_forcing_at(schedule: str, ratio: float, k: float, epoch: int) -> float:
    """The teacher-forcing ratio of epoch `epoch` (1-based).

    ``constant`` keeps `ratio`; ``inverse_sigmoid`` is the decay of scheduled sampling (Bengio et
    al., 2015), counted in epochs from 0: ``ratio * k / (k + exp((epoch - 1) / k))``, which starts
    near `ratio` and falls towards 0, so that training moves from teacher forcing towards the
    conditions of decoding (the model's own predictions as inputs).
    """
    if schedule == "constant":
        return ratio
    return ratio * k / (k + math.exp((epoch - 1) / k))


# --8<-- [end:teacher_forcing_at]


def _decoder_names() -> tuple[str, ...]:
    return tuple(sorted(DECODERS))


@dataclass
class TrainConfig:
    """Everything that decides a training run (saved in the checkpoint).

    Every field's default, range and help text is written here once: the command line
    (`seq2seq-attention train --help`) is built from these fields, and `__post_init__`
    checks them, so a bad value is one `InputError` wherever it comes from.
    """

    decoder: str = setting("gru", "the decoder: gru (no attention), bahdanau or luong", choices=_decoder_names)
    score: str | None = setting(
        None, "the attention's score function (default: the decoder's own, see DECODER_SCORES)", choices=tuple(SCORES)
    )
    hidden_size: int = setting(256, "H, the size of embeddings and GRU states", low=1, high=MAX_SIZE)
    dropout: float = setting(0.1, "dropout on the embeddings", low=0.0, high=1.0, high_open=True)
    batch_size: int = setting(32, "sentence pairs per batch", low=1, high=1_000_000)
    learning_rate: float = setting(1e-3, "Adam's step size", low=0.0, high=10.0, low_open=True)
    epochs: int = setting(40, "passes over the training split", low=1, high=1_000_000)
    teacher_forcing_ratio: float = setting(
        1.0,
        "chance of feeding the true previous word (1: teacher forcing, 0.5: the tutorial's mixed training)",
        low=0.0,
        high=1.0,
    )
    teacher_forcing_schedule: str = setting(
        "constant",
        "constant: the ratio every epoch; inverse_sigmoid: ratio * k / (k + exp(epoch / k)) (scheduled sampling)",
        choices=TEACHER_FORCING_SCHEDULES,
    )
    teacher_forcing_k: float = setting(
        5.0, "k of the inverse sigmoid decay: larger keeps teacher forcing longer", low=1.0, high=1e6
    )
    coin_per_step: bool = setting(False, "toss the teacher-forcing coin at every step, not once per sentence")
    clip: float = setting(1.0, "largest gradient norm (0: no clipping)", low=0.0, high=1e6)
    seed: int = setting(0, "seeds the weights, dropout, the coins and the batch order", low=0, high=2**32 - 1)
    max_words: int = setting(MAX_WORDS, "the data filter's length limit (both sides)", low=1, high=1000)
    split: str = setting(
        "by_english", "the held-out rule: by_english (no target on both sides) or by_french", choices=tuple(SPLITS)
    )
    time_budget: float | None = setting(
        None,
        "seconds; after the first epoch no epoch starts that would overrun it",
        low=0.0,
        high=1e9,
        low_open=True,
    )
    budget_clock: str = setting(
        "wall",
        "what the time budget counts: wall-clock seconds, or this process's CPU seconds",
        choices=tuple(BUDGET_CLOCKS),
    )
    eval_split: str = setting(
        "test",
        "where the held-out loss and BLEU are measured: test, or dev (carved from the training split, which then "
        "trains without it; the test split is not read)",
        choices=EVAL_SPLITS,
    )
    label_smoothing: float = setting(
        0.0, "weight moved from the true word to all words in the loss", low=0.0, high=1.0, high_open=True
    )
    schedule: str = setting("constant", "learning-rate schedule (cosine: warm-up, then decay)", choices=SCHEDULES)
    weight_decay: float = setting(0.0, "AdamW's decoupled weight decay (0: plain Adam)", low=0.0, high=10.0)

    def __post_init__(self) -> None:
        check_config(self)
        allowed = DECODER_SCORES[self.decoder]
        if self.score is not None and self.score not in allowed:
            choices = f"one of {', '.join(allowed)}" if allowed else "none (it has no attention)"
            raise InputError(f"score {self.score!r} does not fit the {self.decoder} decoder; expected {choices}")

    RESUMABLE_CHANGES = ("epochs", "time_budget", "budget_clock")
    LEGACY_DEFAULTS = {"split": "by_french", "teacher_forcing_schedule": "constant", "teacher_forcing_k": 5.0}
    """Values of fields a checkpoint saved before the field existed (the first round split by French)."""
    """Fields that may differ between a run and the run it resumes."""


@dataclass
class TrainResult:
    """What `train` returns.

    Attributes:
        model: the trained model (in eval mode).
        vocabs: its vocabularies (from the training split).
        history: one dict per finished epoch: ``epoch``, ``loss`` (training, per target
            token), ``test_loss`` (held-out: the pairs of `eval_split`, teacher forced), ``seconds``.
        stopped_by_budget: True when the time budget ended the run early.
        evaluation: the held-out BLEU and exact match (`evaluation_record`), when measured.
    """

    model: Seq2Seq
    vocabs: Vocabularies
    history: list[dict] = field(default_factory=list)
    stopped_by_budget: bool = False
    evaluation: dict | None = None


# --8<-- [start:train_step]
def train_step(
    model: Seq2Seq,
    batch: Batch,
    optimizer: torch.optim.Optimizer,
    criterion: nn.Module,
    teacher_forcing_ratio: float = 1.0,
    coin_per_step: bool = False,
    clip: float = 1.0,
) -> float:
    """One optimisation step on one batch; returns the mean loss per real target token."""
    log_probs = model.training_log_probs(
        batch.source,
        batch.lengths,
        batch.target,  # (B, T): teacher forcing feeds these tokens (with this probability)
        batch.source_mask,  # (B, S): the mask the batch was built with
        teacher_forcing_ratio=teacher_forcing_ratio,
        coin_per_step=coin_per_step,
    )  # (B, T, V)
    loss = criterion(log_probs.flatten(0, 1), batch.target.flatten())  # (B*T, V) vs (B*T,): PAD ignored
    optimizer_step(model, optimizer, loss, clip)
    return loss.item()


# --8<-- [end:train_step]


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

    ratio = teacher_forcing_at(
        config.teacher_forcing_schedule, config.teacher_forcing_ratio, config.teacher_forcing_k, epoch
    )

    def step(index: int, batch: Batch) -> tuple[float, int]:
        batch = batch.to(device)
        rate = learning_rate_at(
            config.schedule, config.learning_rate, (epoch - 1) * steps_per_epoch + index, total_steps
        )
        for group in optimizer.param_groups:
            group["lr"] = rate
        loss = train_step(model, batch, optimizer, criterion, ratio, config.coin_per_step, config.clip)
        return loss, int(batch.target_lengths.sum())

    return run_epoch(loader, step, total=steps_per_epoch, desc=f"epoch {epoch}/{config.epochs}", progress=progress)


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
    measure_bleu: bool = True,
    keep_training_state: bool = True,
) -> TrainResult:
    """Train a `Seq2Seq` with `config` and return it.

    The data are the tutorial's filtered pairs (`load_pairs` with `config.max_words`) unless
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
        log: receives one line per epoch (the tutorial's format plus the held-out loss).
        measure_bleu: translate the held-out split at the end and record its BLEU.
        keep_training_state: keep the optimizer and RNG states in the final checkpoint, to
            train on later with more epochs; False keeps the weights only (a smaller file).

    Raises:
        InputError: a bad config, empty data, a checkpoint that does not fit the config, a
            directory that already holds a checkpoint (without `resume` or `overwrite`), or
            a directory to resume from that has files but no `checkpoint.json`.
    """
    device = torch.device(device or "cpu")
    if checkpoint is not None:
        _check_checkpoint_directory(Path(checkpoint), resume, overwrite)
    pairs = list(pairs) if pairs is not None else load_pairs(config.max_words, ENG_PREFIXES)
    train_pairs, test_pairs = split_pairs(pairs, config.split, config.eval_split)  # test_pairs: dev with "dev"
    if not train_pairs:
        raise InputError("no training pairs: the filter or the split left nothing to train on")

    history: list[dict] = []
    start_epoch = 0
    resumed = None
    if resume and checkpoint is not None and (Path(checkpoint) / "checkpoint.json").exists():
        resumed = load_checkpoint(checkpoint, device)
        _check_resumable(config, resumed.training.get("config"), checkpoint)
        model, vocabs = resumed.model, resumed.vocabs
        history = list(resumed.training.get("history", []))
        start_epoch = int(resumed.training.get("epoch", 0))
    else:
        torch.manual_seed(config.seed)
        vocabs = build_vocabularies(train_pairs)
        model = build_model(
            config.decoder, len(vocabs.source), len(vocabs.target), config.hidden_size, config.dropout, config.score
        )
        model.to(device)

    train_set = TranslationDataset(train_pairs, vocabs)
    test_set = TranslationDataset(test_pairs, vocabs) if test_pairs else None
    loader = make_loader(train_set, config.batch_size, shuffle=True, seed=config.seed)
    optimizer = make_optimizer(model, config.learning_rate, config.weight_decay)
    if resumed is not None:
        restore_training_state(resumed, optimizer)
    criterion = make_criterion(config)

    clock = getattr(time, BUDGET_CLOCKS[config.budget_clock])
    started = clock()
    last_epoch_cost = 0.0  # in the budget's clock
    stopped_by_budget = False
    for epoch in range(start_epoch + 1, config.epochs + 1):
        elapsed = clock() - started
        over_budget = config.time_budget is not None and elapsed + last_epoch_cost > config.time_budget
        if over_budget and epoch > start_epoch + 1:  # every run trains at least one epoch
            stopped_by_budget = True
            log(f"time budget of {config.time_budget:.0f} s reached after {elapsed:.0f} s: no epoch {epoch}")
            break
        tic, cost_tic = time.perf_counter(), clock()
        epoch_loss = train_epoch(model, loader, optimizer, criterion, config, epoch, device, progress)
        if not math.isfinite(epoch_loss):
            raise InputError(f"the loss became {epoch_loss} in epoch {epoch}; lower the learning rate")
        test_loss = mean_loss(model, test_set, device) if test_set is not None else float("nan")
        last_epoch_seconds = time.perf_counter() - tic
        last_epoch_cost = clock() - cost_tic
        ratio = teacher_forcing_at(
            config.teacher_forcing_schedule, config.teacher_forcing_ratio, config.teacher_forcing_k, epoch
        )
        history.append(
            {
                "epoch": epoch,
                "loss": epoch_loss,
                "test_loss": test_loss,
                "seconds": last_epoch_seconds,
                "teacher_forcing_ratio": ratio,
            }
        )
        log(_log_line(epoch, last_epoch_seconds, epoch_loss, test_loss))
        if checkpoint is not None:
            training = {"config": asdict(config), "epoch": epoch, "history": history}
            save_checkpoint(checkpoint, model, vocabs, training=training, optimizer=optimizer, save_rng=True)
    model.eval()
    split_name = config.split if config.eval_split == "test" else f"{config.split}:{config.eval_split}"
    scores = evaluate(model, vocabs, test_pairs, split=split_name) if measure_bleu and test_pairs else None
    evaluation = evaluation_record(scores) if scores is not None else None
    if checkpoint is not None:
        final = {"config": asdict(config), "epoch": history[-1]["epoch"] if history else start_epoch}
        final.update(history=history, evaluation=evaluation)
        keep = {"optimizer": optimizer, "save_rng": True} if keep_training_state else {}
        save_checkpoint(checkpoint, model, vocabs, training=final, **keep)
    return TrainResult(model, vocabs, history, stopped_by_budget, evaluation)


def evaluation_record(scores: Evaluation) -> dict:
    """What a checkpoint keeps of an evaluation on the held-out split."""
    return {
        "split": scores.split,
        "pairs": len(scores),
        "bleu": scores.bleu,
        "bleu_interval": [scores.bleu_low, scores.bleu_high],
        "exact_match": scores.exact_match,
        "signature": scores.signature,
    }


def _check_resumable(config: TrainConfig, saved: object, checkpoint: str | Path) -> None:
    if not isinstance(saved, dict):
        raise InputError(f"cannot resume from {checkpoint}: it holds no training config")
    current = asdict(config)

    def saved_value(f):
        return saved.get(f.name, TrainConfig.LEGACY_DEFAULTS.get(f.name, f.default))

    changed = [
        f"{f.name}: saved {saved_value(f)!r}, now {current[f.name]!r}"
        for f in fields(TrainConfig)
        if f.name not in TrainConfig.RESUMABLE_CHANGES and saved_value(f) != current[f.name]
    ]
    if changed:
        raise InputError(f"cannot resume from {checkpoint}: the config changed ({'; '.join(changed)})")


def _check_checkpoint_directory(directory: Path, resume: bool, overwrite: bool) -> None:
    """Refuse, before anything is written, to lose an existing checkpoint."""
    has_json = (directory / "checkpoint.json").is_file()
    has_files = directory.is_dir() and any(directory.iterdir())
    if resume and has_files and not has_json:
        raise InputError(
            f"cannot resume from {directory}: checkpoint.json is missing but the directory holds other files; "
            "nothing was changed"
        )
    if not resume and has_json and not overwrite:
        raise InputError(f"{directory} already holds a checkpoint; resume it (--resume) or replace it (--overwrite)")
