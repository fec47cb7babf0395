"""Running a recurrent layer over a padded batch without reading the padding (both tasks' encoders)."""

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


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
