"""The training loop both tasks share: optimizer, learning-rate schedule, one step, one epoch, the best epoch.

A task supplies what is its own (how a batch becomes a loss, what it evaluates after an
epoch); everything else, from the optimizer to the progress bar, is here once.
"""

import contextlib
import copy
import math
from collections.abc import Callable, Iterable
from typing import TypeVar

import torch
from torch import nn
from torch.optim.lr_scheduler import LambdaLR
from tqdm.auto import tqdm

from ..model.tensors import shape_checks_off

BatchT = TypeVar("BatchT")


def learning_rate_at(schedule: str, learning_rate: float, step: int, total_steps: int) -> float:
    """The learning rate of optimisation step `step` (0-based) of `total_steps` under `schedule`."""
    if schedule == "constant":
        return learning_rate
    warmup = max(1, round(0.05 * total_steps))
    if step < warmup:
        return learning_rate * (step + 1) / warmup
    progress = (step - warmup) / max(1, total_steps - warmup)
    return learning_rate * 0.5 * (1.0 + math.cos(math.pi * min(progress, 1.0)))


def make_scheduler(optimizer: torch.optim.Optimizer, schedule: str, total_steps: int, first_step: int = 0) -> LambdaLR:
    """Sets `optimizer`'s learning rate to that of step ``first_step + n`` after `n` calls of its `step()`.

    The rate is the optimizer's initial one scaled as `learning_rate_at` says: a run that resumes
    at step `first_step` continues the schedule where the interrupted run left it.
    """
    return LambdaLR(optimizer, lambda n: learning_rate_at(schedule, 1.0, first_step + n, total_steps))


def make_optimizer(model: nn.Module, learning_rate: float, weight_decay: float = 0.0) -> torch.optim.Optimizer:
    """Adam with `learning_rate`; AdamW when `weight_decay` is positive; fused where the device has the kernel."""
    fused = {"fused": True} if _fused_adam_available(model) else {}  # one kernel for all parameters: ~10x faster
    if weight_decay > 0:
        return torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=weight_decay, **fused)
    return torch.optim.Adam(model.parameters(), lr=learning_rate, **fused)


def _fused_adam_available(model: nn.Module) -> bool:
    """Fused Adam needs float parameters on a device that has the kernel (CPU and CUDA do)."""
    return all(p.is_floating_point() and p.device.type in ("cpu", "cuda") for p in model.parameters())


# --8<-- [start:optimizer_step]
def optimizer_step(model: nn.Module, optimizer: torch.optim.Optimizer, loss: torch.Tensor, clip: float) -> None:
    """Back-propagate `loss`, clip the gradient norm to `clip` (0: no clipping), update the weights."""
    optimizer.zero_grad()
    loss.backward()
    if clip > 0:
        nn.utils.clip_grad_norm_(model.parameters(), clip)
    optimizer.step()


# --8<-- [end:optimizer_step]


def run_epoch(
    batches: Iterable[BatchT],
    step: Callable[[int, BatchT], tuple[float, int]],
    *,
    total: int | None = None,
    desc: str = "",
    progress: bool = False,
) -> float:
    """Call ``step(index, batch)`` on every batch, with a progress bar; the mean loss per unit.

    `step` returns its batch's mean loss and how many units (target tokens, sentences) it was
    averaged over, so the result is the mean over all units of the epoch. The model checks the shapes of the
    epoch's first batch; the others come from the same loader and run without the checks (`shape_checks_off`), so
    the hot loop does not pay for them at every step.
    """
    loss_sum, units = 0.0, 0
    bar = tqdm(batches, total=total, desc=desc, leave=False, disable=not progress, unit="batch")
    for index, batch in enumerate(bar):
        with contextlib.nullcontext() if index == 0 else shape_checks_off():
            loss, count = step(index, batch)
        loss_sum, units = loss_sum + loss * count, units + count
        bar.set_postfix(loss=f"{loss_sum / units:.4f}", refresh=False)
    return loss_sum / max(units, 1)


class BestWeights:
    """Keeps a copy of the weights of the epoch with the highest score, to put back after training."""

    def __init__(self) -> None:
        self.score = -math.inf
        self.epoch: int | None = None
        self.state: dict[str, torch.Tensor] | None = None

    def update(self, model: nn.Module, score: float, epoch: int) -> bool:
        """Remember the model's weights when `score` beats every earlier one; True when it did."""
        if score <= self.score:
            return False
        self.score, self.epoch, self.state = score, epoch, copy.deepcopy(model.state_dict())
        return True

    def restore(self, model: nn.Module) -> None:
        """Load the remembered weights into `model` (nothing happens when none were remembered)."""
        if self.state is not None:
            model.load_state_dict(self.state)
