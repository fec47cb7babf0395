"""Small tensor helpers of the model: the padding mask, running a recurrent layer without reading the padding, and
`shapes_checked`, the run-time check of the shapes a public function's signature states.

Shapes are written in the signatures with jaxtyping (`Float[Tensor, "B S H"]`: a float tensor whose three dimensions
are named B, S and H, each name one size across the call's arguments and result). `shapes_checked` makes beartype
check them when the function is called; a wrong shape raises jaxtyping's `TypeCheckError` naming the parameter, the
annotation and the shape it got. The check runs where a batch enters the model, never per decoder step: a training
run switches it off (`shape_checks_off`).
"""

import contextlib
from collections.abc import Iterator

import jaxtyping
import torch
from beartype import beartype
from jaxtyping import Bool, Int64, jaxtyped
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

shapes_checked = jaxtyped(typechecker=beartype)
"""Decorate a public function of the model so that the shapes and dtypes its annotations state are checked."""


@contextlib.contextmanager
def shape_checks_off() -> Iterator[None]:
    """Run a block without the shape checks (a training run's steps: its batches are the package's own)."""
    previous = jaxtyping.config.jaxtyping_disable
    jaxtyping.config.update("jaxtyping_disable", True)
    try:
        yield
    finally:
        jaxtyping.config.update("jaxtyping_disable", previous)


@shapes_checked
# --8<-- [start:mask]
def lengths_to_mask(lengths: Int64[Tensor, " B"], max_length: int) -> Bool[Tensor, "B S"]:
    """True at the first `lengths[b]` positions of each row: the padding mask, on the device of `lengths`."""
    positions = torch.arange(max_length, device=lengths.device)  # (S,)
    return positions.unsqueeze(0) < lengths.unsqueeze(1)  # (B, S)


# --8<-- [end:mask]


# --8<-- [start:run_packed]
def run_packed(rnn: nn.RNNBase, inputs: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, object]:
    """Run a batch-first RNN (GRU or LSTM) so that it never reads padding.

    When every sequence fills the batch (a length bucket) there is nothing to skip and the RNN
    runs directly; otherwise the batch is packed, run, and padded again.

    Shapes:
        inputs: (B, S, E).
        lengths: (B,) real lengths, on any device.
        outputs: (B, S, D*H), zero at padded positions (D = 2 for a bidirectional RNN).
        state: (D, B, H) each direction's state after its last real token (a pair for an LSTM).
    """
    if bool((lengths == inputs.size(1)).all()):  # no padding: nothing to pack
        return rnn(inputs)  # (B, S, D*H), state
    packed = pack_padded_sequence(inputs, lengths.cpu(), batch_first=True, enforce_sorted=False)
    packed_outputs, state = rnn(packed)  # state: (D, B, H)
    outputs, _ = pad_packed_sequence(packed_outputs, batch_first=True, total_length=inputs.size(1))  # (B, S, D*H)
    return outputs, state


# --8<-- [end:run_packed]
