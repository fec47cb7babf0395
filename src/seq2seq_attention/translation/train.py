"""Training any registered decoder on the Tatoeba pairs: teacher forcing, mixed training, checkpoints.

The run's settings (`TrainConfig`) live in `config.py`, the loader of a trained translator in `translator.py`.
"""

import contextlib
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

import torch
from torch import nn
from torch.optim.lr_scheduler import LambdaLR, LRScheduler
from torch.utils.data import DataLoader

from ..core.batching import DECODE_BATCH_SIZE, Batch
from ..core.checkpoint import restore_training_state, save_checkpoint
from ..core.checks import Call, checked
from ..core.errors import InputError
from ..core.files import LOCK_NAME, folder_lock
from ..core.training import learning_rate_at, make_optimizer, make_scheduler, optimizer_step, run_epoch
from ..core.vocabulary import Vocabularies
from ..model.seq2seq import Seq2Seq, build_model
from ..model.tokens import PAD_IDX
from .config import (
    BUDGET_CLOCKS,
    INITIALIZATIONS,
    TEACHER_FORCING_SCHEDULES,
    TrainConfig,
    not_resumable_when_averaged,
)
from .corpus import (
    ENG_PREFIXES,
    Pair,
    TranslationDataset,
    build_vocabularies,
    load_pairs,
    make_loader,
    split_pairs,
)
from .evaluate import Evaluation, evaluate
from .translator import load_translator

__all__ = ["BUDGET_CLOCKS", "INITIALIZATIONS", "TEACHER_FORCING_SCHEDULES", "TrainConfig", "train"]


# --8<-- [start:teacher_forcing_at]
def teacher_forcing_at(schedule: str, ratio: float, k: float, epoch: int) -> float:
    """The teacher-forcing ratio of epoch `epoch` (1-based).

    ``constant`` keeps `ratio`; ``inverse_sigmoid`` is the decay of scheduled sampling (Bengio et
    al., 2015), counted in epochs from 0: ``ratio * k / (k + exp((epoch - 1) / k))``, which starts
    near `ratio` and falls towards 0, so that training moves from teacher forcing towards the
    conditions of decoding (the model's own predictions as inputs). It is computed as the
    equal ``ratio * sigmoid(log(k) - (epoch - 1) / k)``, which never overflows.
    """
    if schedule == "constant":
        return ratio
    return ratio * _sigmoid(math.log(k) - (epoch - 1) / k)


# --8<-- [end:teacher_forcing_at]


def _sigmoid(x: float) -> float:
    """1 / (1 + exp(-x)), written so that `exp` only ever sees a negative number."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    return math.exp(x) / (1.0 + math.exp(x))


@dataclass
class TrainResult:
    """What `train` returns.

    Attributes:
        model: the trained model (in eval mode).
        vocabs: its vocabularies (from the training split).
        history: one dict per finished epoch: ``epoch``, ``loss`` (training, per target
            token), ``test_loss`` (held-out: the pairs of `eval_split`, teacher forced; None when there are
            none, so the history stays strict JSON), ``seconds``.
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
    log_probs, _ = model(
        batch.source,
        batch.lengths,
        batch.target,  # (B, T): teacher forcing feeds these tokens (with this probability)
        source_mask=batch.source_mask,  # (B, S): the mask the batch was built with
        teacher_forcing_ratio=teacher_forcing_ratio,
        coin_per_step=coin_per_step,
    )  # (B, T, V)
    loss = criterion(log_probs.flatten(0, 1), batch.target.flatten())  # (): mean over (B*T, V) vs (B*T,), PAD ignored
    optimizer_step(model, optimizer, loss, clip)
    return loss.item()


# --8<-- [end:train_step]


def _check_initialize(call: Call) -> None:
    """`initialize`'s arguments: a module, and an initialisation it knows (a wrong name must not pass as PyTorch's)."""
    if not isinstance(call.model, nn.Module):
        raise InputError(f"initialize needs a torch.nn.Module, got {type(call.model).__name__}")
    if not isinstance(call.init, str) or call.init not in INITIALIZATIONS:
        raise InputError(f"init must be one of {', '.join(INITIALIZATIONS)}, got {call.init!r}")


@checked(_check_initialize)
# --8<-- [start:initialize]
@torch.no_grad()
def initialize(model: nn.Module, init: str) -> None:
    """Redraw the weights of a new model: ``xavier`` or, for ``pytorch``, nothing (each layer's own default).

    ``xavier`` (Glorot and Bengio, 2010) draws every weight matrix from U(-a, a) with
    a = sqrt(6 / (fan_in + fan_out)), each of a GRU's three stacked gates as a matrix of its own,
    and sets every bias to zero; embeddings keep their N(0, 1) draw and their zero padding row.
    """
    if init == "pytorch":
        return
    for name, parameter in model.named_parameters():
        if "embedding" in name:
            continue
        if parameter.dim() == 1:
            nn.init.zeros_(parameter)  # biases, (n,)
        elif ".gru.weight_" in name:
            for gate in parameter.chunk(3, dim=0):  # reset, update, new: (H, H_in) each
                nn.init.xavier_uniform_(gate)
        else:
            nn.init.xavier_uniform_(parameter)


# --8<-- [end:initialize]


def make_criterion(config: TrainConfig) -> nn.Module:
    """The loss on (N, V) log-probabilities: NLL, or cross-entropy with label smoothing.

    `CrossEntropyLoss` applies log-softmax again, which leaves log-probabilities unchanged, so
    both read the model's output as it is. Padded targets are ignored.
    """
    if config.label_smoothing > 0:
        return nn.CrossEntropyLoss(ignore_index=PAD_IDX, label_smoothing=config.label_smoothing)
    return nn.NLLLoss(ignore_index=PAD_IDX)


@torch.no_grad()
def mean_loss(
    model: Seq2Seq, dataset: TranslationDataset, device: torch.device, batch_size: int = DECODE_BATCH_SIZE
) -> float:
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
    scheduler: LRScheduler | None = None,
) -> tuple[float, float]:
    """One pass over `loader` as epoch `epoch` (1-based).

    The teacher-forcing ratio is computed once for the epoch; `scheduler` sets the learning
    rate of every step (without one, the schedule starts at this epoch's first step).

    Returns:
        The mean loss per target token, and the teacher-forcing ratio the epoch trained with.
    """
    model.train()
    loader.batch_sampler.set_epoch(epoch)
    steps_per_epoch = len(loader)
    if scheduler is None:
        first_step = (epoch - 1) * steps_per_epoch
        scheduler = make_scheduler(optimizer, config.schedule, steps_per_epoch * config.epochs, first_step)
    ratio = teacher_forcing_at(
        config.teacher_forcing_schedule, config.teacher_forcing_ratio, config.teacher_forcing_k, epoch
    )

    def step(index: int, batch: Batch) -> tuple[float, int]:
        batch = batch.to(device)
        loss = train_step(model, batch, optimizer, criterion, ratio, config.coin_per_step, config.clip)
        scheduler.step()
        return loss, int(batch.target_lengths.sum())

    desc = f"epoch {epoch}/{config.epochs}"
    return run_epoch(loader, step, total=steps_per_epoch, desc=desc, progress=progress), ratio


@dataclass
class _Run:
    """What a training run carries from epoch to epoch."""

    model: Seq2Seq
    vocabs: Vocabularies
    optimizer: torch.optim.Optimizer
    scheduler: LRScheduler
    loader: DataLoader
    test_set: TranslationDataset | None
    history: list[dict]
    start_epoch: int
    started_from: dict | None = None  # the checkpoint a new run took its weights from (`init_from`)


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
    init_from: str | Path | None = None,
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
        resume: continue from `checkpoint` when it holds one (start afresh when it does not exist); a run with
            ``average_last`` above 1 cannot be resumed (`not_resumable_when_averaged` says why).
        overwrite: replace a checkpoint that `checkpoint` already holds (without it, and
            without `resume`, training refuses to touch an existing checkpoint).
        device: where to train; the CPU by default.
        progress: show a tqdm progress bar per epoch.
        log: receives a line with the data's sizes, then one line per epoch (the tutorial's
            format plus the held-out loss).
        measure_bleu: translate the held-out split at the end and record its BLEU.
        keep_training_state: keep the optimizer and RNG states in the final checkpoint, to
            train on later with more epochs; False keeps the weights only (a smaller file).
        init_from: a checkpoint whose weights and vocabularies start a new run (its epochs count
            from 1, with a fresh optimizer): how a weights-only checkpoint trains on. Its saved
            config must agree with `config` but for `TrainConfig.RESUMABLE_CHANGES`.

    Raises:
        InputError: a bad config (checked here again, so a field changed after the config was built is checked
            too), empty data, a checkpoint that does not fit the config, a
            directory that already holds a checkpoint (without `resume` or `overwrite`), a
            directory to resume from that has files but no `checkpoint.json`, or one that another
            live process is writing (`core.files.folder_lock`, naming that process).
    """
    config = _checked(config)
    device = torch.device(device or "cpu")
    directory = Path(checkpoint) if checkpoint is not None else None
    if directory is not None:
        _check_checkpoint_directory(directory, resume, overwrite)
    writing = folder_lock(directory, "checkpoint", wait=False) if directory is not None else contextlib.nullcontext()
    with writing:  # one run writes a checkpoint folder at a time: a second one is refused, naming the first
        start = directory if resume else None
        options = (device, progress, log, measure_bleu, keep_training_state)
        return _train(config, pairs, directory, start, init_from, *options)


def _checked(config: object) -> TrainConfig:
    """`config` checked again as it is now (a field may have changed since it was built): a checked copy."""
    if not isinstance(config, TrainConfig):
        raise InputError(f"config must be a TrainConfig, got {type(config).__name__}")
    return replace(config)  # runs `TrainConfig.__post_init__` on the current values


def _train(
    config: TrainConfig,
    pairs: Sequence[Pair] | None,
    directory: Path | None,
    resume_from: Path | None,
    init_from: str | Path | None,
    device: torch.device,
    progress: bool,
    log: Callable[[str], None],
    measure_bleu: bool,
    keep_training_state: bool,
) -> TrainResult:
    train_pairs, test_pairs, counts = _split_data(config, pairs)
    run = _start_run(config, train_pairs, test_pairs, resume_from, device, init_from)
    score = run.model.config["score"]  # as `build_model` resolved it (the decoder's default when not given)
    log(f"{counts}; decoder={config.decoder} score={score or 'none'} H={config.hidden_size} device={device}")
    stopped_by_budget = _train_epochs(config, run, directory, device, progress, log)
    run.model.eval()
    split_name = config.split if config.eval_split == "test" else f"{config.split}:{config.eval_split}"
    scores = evaluate(run.model, run.vocabs, test_pairs, split=split_name) if measure_bleu and test_pairs else None
    evaluation = evaluation_record(scores) if scores is not None else None
    if directory is not None:
        _save(directory, config, run, final={"evaluation": evaluation}, keep_training_state=keep_training_state)
    return TrainResult(run.model, run.vocabs, run.history, stopped_by_budget, evaluation)


def _split_data(config: TrainConfig, pairs: Sequence[Pair] | None) -> tuple[list[Pair], list[Pair], str]:
    """The (training, held-out) pairs of `pairs`, or of the bundled corpus filtered by `config.max_words`, and
    their counts in words for the log.

    The held-out pairs are those of `config.eval_split` (the development pairs with ``"dev"``).
    """
    pairs = list(pairs) if pairs is not None else load_pairs(config.max_words, ENG_PREFIXES)
    train_pairs, test_pairs = split_pairs(pairs, config.split, config.eval_split)  # test_pairs: dev with "dev"
    if not train_pairs:
        raise InputError("no training pairs: the filter or the split left nothing to train on")
    held_out = "held out" if config.eval_split == "test" else config.eval_split
    return train_pairs, test_pairs, f"{len(pairs)} pairs ({len(train_pairs)} train, {len(test_pairs)} {held_out})"


def _start_run(
    config: TrainConfig,
    train_pairs: list[Pair],
    test_pairs: list[Pair],
    resume_from: Path | None,
    device: torch.device,
    init_from: str | Path | None = None,
) -> _Run:
    """A new model, or the one saved in `resume_from` (when it holds a checkpoint) with its optimizer and RNG, or
    a new run from the weights and vocabularies saved in `init_from`."""
    resumed = None
    if init_from is not None:
        started = load_translator(init_from, device)
        _check_resumable(config, started.training.get("config"), init_from, verb="start from")
        torch.manual_seed(config.seed)
        model, vocabs = started.model, started.vocabs
    elif resume_from is not None and (resume_from / "checkpoint.json").exists():
        resumed = load_translator(resume_from, device)
        _check_resumable(config, resumed.training.get("config"), resume_from)
        if config.average_last > 1:
            raise InputError(
                f"cannot resume from {resume_from}: {not_resumable_when_averaged(config.average_last)}; train it "
                "again with more epochs, or start a new run from its weights (init_from)"
            )
        model, vocabs = resumed.model, resumed.vocabs
    else:
        torch.manual_seed(config.seed)
        vocabs = build_vocabularies(train_pairs)
        model = build_model(
            config.decoder,
            len(vocabs.source),
            len(vocabs.target),
            config.hidden_size,
            config.dropout,
            config.score,
            bidirectional=config.bidirectional,
            tie_embeddings=config.tie_embeddings,
            input_feeding=config.input_feeding,
        )
        initialize(model, config.init)
        model.to(device)
    loader = make_loader(TranslationDataset(train_pairs, vocabs), config.batch_size, shuffle=True, seed=config.seed)
    test_set = TranslationDataset(test_pairs, vocabs) if test_pairs else None
    history = list(resumed.training.get("history", [])) if resumed is not None else []
    start_epoch = int(resumed.training.get("epoch", 0)) if resumed is not None else 0
    optimizer = make_optimizer(model, config.learning_rate, config.weight_decay)
    steps = len(loader)  # the schedule counts steps from the run's first epoch, resumed or not
    scheduler = make_scheduler(optimizer, config.schedule, steps * config.epochs, start_epoch * steps)
    if resumed is not None:
        restore_training_state(resumed, optimizer)
    origin = None
    if init_from is not None:
        origin = {"checkpoint": str(init_from), "epoch": int(started.training.get("epoch", 0))}
    return _Run(model, vocabs, optimizer, scheduler, loader, test_set, history, start_epoch, origin)


def _train_epochs(
    config: TrainConfig,
    run: _Run,
    directory: Path | None,
    device: torch.device,
    progress: bool,
    log: Callable[[str], None],
) -> bool:
    """Train the remaining epochs, saving after each; True when the time budget ended the run early.

    With `average_last` above 1, the model ends with the mean of its last epochs' weights (`_WeightAverage`).
    """
    criterion = make_criterion(config)
    budget = _Budget(config.time_budget, config.budget_clock)
    if config.schedule_over == "budget":
        run.scheduler = budget_scheduler(run.optimizer, config.schedule, budget.share)
    averaged = _WeightAverage(config.average_last)
    for epoch in range(run.start_epoch + 1, config.epochs + 1):
        if epoch > run.start_epoch + 1 and budget.no_room_for_another_epoch():  # every run trains one epoch
            log(f"time budget of {config.time_budget:.0f} s reached after {budget.elapsed():.0f} s: no epoch {epoch}")
            averaged.load_into(run.model)
            return True
        tic = budget.start_epoch()
        loss, ratio = train_epoch(
            run.model, run.loader, run.optimizer, criterion, config, epoch, device, progress, run.scheduler
        )
        if not math.isfinite(loss):
            raise InputError(f"the loss became {loss} in epoch {epoch}; lower the learning rate")
        test_loss = mean_loss(run.model, run.test_set, device) if run.test_set is not None else None  # no pairs: null
        seconds = budget.end_epoch(tic)
        run.history.append(
            {"epoch": epoch, "loss": loss, "test_loss": test_loss, "seconds": seconds, "teacher_forcing_ratio": ratio}
        )
        held_out = "       -" if test_loss is None else f"{test_loss:8.4f}"
        log(f"| epoch: {epoch:3d} | time: {seconds:5.1f} sec | loss: {loss:8.4f} | held-out loss: {held_out}")
        averaged.add(run.model)
        if directory is not None:
            _save(directory, config, run)
    averaged.load_into(run.model)
    return False


class _Budget:
    """The time budget of a run, counted in the clock `budget_clock` names (`BUDGET_CLOCKS`)."""

    def __init__(self, seconds: float | None, budget_clock: str) -> None:
        self.seconds = seconds
        self.clock = getattr(time, BUDGET_CLOCKS[budget_clock])
        self.started = self.clock()
        self.last_epoch_cost = 0.0  # in the budget's clock

    def elapsed(self) -> float:
        return self.clock() - self.started

    def share(self) -> float:
        """The share of the budget spent so far (at most 1)."""
        return min(1.0, self.elapsed() / self.seconds)

    def no_room_for_another_epoch(self) -> bool:
        """Whether one more epoch as costly as the last one would overrun the budget."""
        return self.seconds is not None and self.elapsed() + self.last_epoch_cost > self.seconds

    def start_epoch(self) -> tuple[float, float]:
        return time.perf_counter(), self.clock()

    def end_epoch(self, tic: tuple[float, float]) -> float:
        """Record the epoch's cost; returns its wall-clock seconds (for the log and the history)."""
        self.last_epoch_cost = self.clock() - tic[1]
        return time.perf_counter() - tic[0]


BUDGET_SCHEDULE_STEPS = 10_000
"""The resolution of a schedule spread over the time budget: the budget counts as this many steps."""


def budget_scheduler(optimizer: torch.optim.Optimizer, schedule: str, share: Callable[[], float]) -> LambdaLR:
    """`schedule` spread over the time budget, not over the steps of the planned epochs (``schedule_over="budget"``).

    Each step's learning rate is that of `learning_rate_at` at the share of the budget spent
    (`share()`, 0 to 1) when the step is taken: with ``cosine``, a warm-up over the first 5% of
    the budget and a decay that reaches zero where the budget ends, however many epochs the
    machine fits into it. The rates then depend on how fast the machine runs, so two runs of the
    same seed may differ; a resumed run spreads the schedule again over its own budget.
    """
    total = BUDGET_SCHEDULE_STEPS
    return LambdaLR(optimizer, lambda _: learning_rate_at(schedule, 1.0, min(round(share() * total), total - 1), total))


class _WeightAverage:
    """The mean of the weights of the last `count` epochs (checkpoint averaging; `count` 1 keeps the last epoch's).

    Floating-point tensors are averaged; others (none in these models) keep the last epoch's value.
    """

    def __init__(self, count: int) -> None:
        self.count = count
        self.states: list[dict[str, torch.Tensor]] = []

    def add(self, model: nn.Module) -> None:
        """Keep a copy of `model`'s weights as the newest epoch's (the oldest kept one goes past `count`)."""
        if self.count > 1:
            state = {k: v.detach().clone() for k, v in model.state_dict().items()}
            self.states = [*self.states[-(self.count - 1) :], state]

    @torch.no_grad()
    def load_into(self, model: nn.Module) -> None:
        """Put the mean of the kept epochs' weights into `model` (nothing with fewer than two kept)."""
        if len(self.states) < 2:
            return
        last = self.states[-1]
        mean = {
            k: torch.stack([state[k] for state in self.states]).mean(0) if v.is_floating_point() else v
            for k, v in last.items()
        }  # each (like the parameter)
        model.load_state_dict(mean)


def _save(
    directory: Path,
    config: TrainConfig,
    run: _Run,
    *,
    final: dict | None = None,
    keep_training_state: bool = True,
) -> None:
    """Save the model with the run's config, finished epochs and history (with `final`'s entries after the
    last epoch), and what resuming needs unless `keep_training_state` is False."""
    epoch = run.history[-1]["epoch"] if run.history else run.start_epoch
    training = {"config": asdict(config), "epoch": epoch, "history": run.history}
    if run.started_from is not None:
        training["started_from"] = run.started_from
    training.update(final or {})
    keep = {"optimizer": run.optimizer, "save_rng": True} if keep_training_state else {}
    save_checkpoint(directory, run.model, run.vocabs, training=training, **keep)


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


def _check_resumable(config: TrainConfig, saved: object, checkpoint: str | Path, verb: str = "resume from") -> None:
    if not isinstance(saved, dict):
        raise InputError(f"cannot {verb} {checkpoint}: it holds no training config")
    current = asdict(config)

    def saved_value(f):
        return saved.get(f.name, TrainConfig.LEGACY_DEFAULTS.get(f.name, f.default))

    changed = [
        f"{f.name}: saved {saved_value(f)!r}, now {current[f.name]!r}"
        for f in fields(TrainConfig)
        if f.name not in TrainConfig.RESUMABLE_CHANGES and saved_value(f) != current[f.name]
    ]
    if changed:
        raise InputError(f"cannot {verb} {checkpoint}: the config changed ({'; '.join(changed)})")


def _check_checkpoint_directory(directory: Path, resume: bool, overwrite: bool) -> None:
    """Refuse, before anything is written, to lose an existing checkpoint."""
    has_json = (directory / "checkpoint.json").is_file()
    has_files = directory.is_dir() and any(path.name != LOCK_NAME for path in directory.iterdir())
    if resume and has_files and not has_json:
        raise InputError(
            f"cannot resume from {directory}: checkpoint.json is missing but the directory holds other files; "
            "nothing was changed"
        )
    if not resume and has_json and not overwrite:
        raise InputError(f"{directory} already holds a checkpoint; resume it (--resume) or replace it (--overwrite)")
