"""Small tensor helpers of the model: the padding mask, running a recurrent layer without reading the padding, and
`annotations_checked`, the run-time check of the shapes a public function's signature states.

Shapes are written in the signatures with jaxtyping (`Float[Tensor, "B S H"]`: a float tensor whose three dimensions
are named B, S and H, each name one size across the call's arguments and result). `annotations_checked` makes beartype
check them when the function is called, with the ranges some numbers carry (`within`); an argument that does not fit
raises one `ArgumentError` (an `InputError`) naming the function, the parameter, its annotation with the sizes
already bound, and what came. The check runs where
a batch enters the model, never per decoder step of a training run (`shape_checks_off`).
"""

import contextlib
import functools
import re
from collections.abc import Callable, Iterator
from typing import Annotated, TypeVar

import jaxtyping
import torch
from beartype import beartype
from beartype.vale import Is
from jaxtyping import Bool, Float, Int64, TypeCheckError, jaxtyped
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from .rules import MAX_SIZE, InputError

F = TypeVar("F", bound=Callable)


class ArgumentError(InputError):
    """An argument that does not fit its parameter's annotation: a tensor's rank, sizes or dtype, a number's type or
    range (one line; jaxtyping's full report is kept as `report`)."""


def within(low: float, high: float, *, below_high: bool = False) -> object:
    """A range a number must lie in, for `Annotated[int, within(1, 1000)]` (`nan` lies in none)."""

    def test(value: float) -> bool:  # True is 1 to Python, not a number to a user
        return type(value) is not bool and (low <= value < high if below_high else low <= value <= high)

    test.__name__ = test.__qualname__ = f"in [{low}, {high}{')' if below_high else ']'}"
    return Is[test]


Probability = Annotated[float | int, within(0, 1)]
"""A probability: the teacher-forcing ratio, a dropout."""
Size = Annotated[int, within(1, MAX_SIZE)]
"""A layer's or a vocabulary's size."""
Dropout = Annotated[float | int, within(0, 1, below_high=True)]
"""A dropout probability (1 would drop everything)."""


def annotations_checked(function: F) -> F:
    """Check the shapes and dtypes `function`'s annotations state when it is called (jaxtyping with beartype)."""
    checked = jaxtyped(typechecker=beartype)(function)

    @functools.wraps(function)
    def call(*args: object, **kwargs: object) -> object:
        if jaxtyping.config.jaxtyping_disable or torch.compiler.is_compiling() or torch.jit.is_tracing():
            return function(*args, **kwargs)  # switched off, or a graph being traced (symbolic sizes)
        try:
            return checked(*args, **kwargs)
        except TypeCheckError as error:
            raise _one_line(str(error), function.__qualname__) or error from None

    return call  # type: ignore[return-value]


def _one_line(report: str, name: str) -> ArgumentError | None:
    """jaxtyping's report on a parameter as one line: ``f: keys must be Float[Tensor, 'B S Hk'] with B=2, got
    f32[3,5,8]``; None for anything else (a result that breaks its annotation is a bug: its report stays)."""
    parameter = re.search(r"typechecking parameter '(\w+)'\.\nActual value: (.*)\nExpected type: (.*)\.\n", report)
    if parameter is None:
        return None
    argument, got, expected = parameter.groups()
    expected = re.sub(r"<class '(.*)'>|jaxtyping\.", r"\1", expected)
    expected = re.sub(r"typing\.Annotated\[(.*), beartype\.vale\.Is\[(.*)\]\]", r"\1 \2", expected)
    bound = report.partition("axis annotation are as follows.\n")[2].split()
    sizes = f" with {', '.join(bound)}" if bound and "Tensor" in expected else ""
    error = ArgumentError(f"{name}: {argument} must be {expected}{sizes}, got {got.removesuffix('(torch)')}")
    error.report = report
    return error


@contextlib.contextmanager
def shape_checks_off() -> Iterator[None]:
    """Run a block without the shape checks (a training run's steps: its batches are the package's own)."""
    previous = jaxtyping.config.jaxtyping_disable
    jaxtyping.config.update("jaxtyping_disable", True)
    try:
        yield
    finally:
        jaxtyping.config.update("jaxtyping_disable", previous)


@annotations_checked
# --8<-- [start:mask]
def lengths_to_mask(
    lengths: Int64[Tensor, " B"], max_length: Annotated[int, within(0, MAX_SIZE)]
) -> Bool[Tensor, "B S"]:
    """True at the first `lengths[b]` positions of each row: the padding mask, on the device of `lengths`."""
    positions = torch.arange(max_length, device=lengths.device)  # (S,)
    return positions.unsqueeze(0) < lengths.unsqueeze(1)  # (B, S)


# --8<-- [end:mask]


# --8<-- [start:run_packed]
def run_packed(
    rnn: nn.RNNBase, inputs: Float[Tensor, "B S E"], lengths: Int64[Tensor, " B"]
) -> tuple[Float[Tensor, "B S DH"], object]:
    """Run a batch-first RNN (GRU or LSTM) so that it never reads padding.

    When every sequence fills the batch (a length bucket) there is nothing to skip and the RNN
    runs directly; otherwise the batch is packed, run, and padded again. The lengths may be on
    any device. The outputs (D*H wide, D = 2 for a bidirectional RNN) are zero at padded
    positions; the state is each direction's state after its last real token, (D, B, H) (a pair
    for an LSTM).
    """
    if bool((lengths == inputs.size(1)).all()):  # no padding: nothing to pack
        return rnn(inputs)  # (B, S, D*H), state
    packed = pack_padded_sequence(inputs, lengths.cpu(), batch_first=True, enforce_sorted=False)
    packed_outputs, state = rnn(packed)  # state: (D, B, H)
    outputs, _ = pad_packed_sequence(packed_outputs, batch_first=True, total_length=inputs.size(1))  # (B, S, D*H)
    return outputs, state


# --8<-- [end:run_packed]
