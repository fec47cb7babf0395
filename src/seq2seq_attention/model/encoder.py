"""The encoder: token indices to one hidden state per source position."""

import torch
from jaxtyping import Float, Int64
from torch import Tensor, nn

from .defaults import DROPOUT
from .rules import require
from .tensors import Dropout, Size, annotations_checked, run_packed
from .tokens import PAD_IDX


class EncoderRNN(nn.Module):
    """Embedding, dropout and a one-layer GRU, batch first.

    Args:
        input_size: source vocabulary size V_src.
        hidden_size: H, the size of the embeddings and of the encoder's states.
        dropout_p: dropout on the embeddings.
        bidirectional: read the sentence both ways: two GRUs of H/2 each (H must be even), whose
            states are concatenated, so that each position's state (still H wide) sees the
            whole sentence; the first state of the decoder is [forward's last; backward's last].

    `forward` takes token indices padded with `PAD_IDX` and, optionally, the real lengths. With
    them, the GRU never reads padding: padded positions of the outputs are zero and the last
    state is the state after each sentence's last real token. The outputs are the attention's
    keys; the last state is the decoder's first state.
    """

    @annotations_checked
    def __init__(
        self, input_size: Size, hidden_size: Size, dropout_p: Dropout = DROPOUT, bidirectional: bool = False
    ) -> None:
        super().__init__()
        check_bidirectional(hidden_size, bidirectional)
        self.hidden_size = hidden_size
        self.bidirectional = bidirectional
        self.embedding = nn.Embedding(input_size, hidden_size, padding_idx=PAD_IDX)
        directions = 2 if bidirectional else 1
        self.gru = nn.GRU(hidden_size, hidden_size // directions, batch_first=True, bidirectional=bidirectional)
        self.dropout = nn.Dropout(dropout_p)

    @annotations_checked
    # --8<-- [start:forward]
    def forward(
        self, input: Int64[Tensor, "B S"], lengths: Int64[Tensor, " B"] | None = None
    ) -> tuple[Float[Tensor, "B S H"], Float[Tensor, "1 B H"]]:
        embedded = self.dropout(self.embedding(input))  # (B, S, H)
        if lengths is None:
            outputs, hidden = self.gru(embedded)  # (B, S, H), (D, B, H/D): D directions
        else:
            outputs, hidden = run_packed(self.gru, embedded, lengths)  # (B, S, H) zero on padding, (D, B, H/D)
        return outputs, join_directions(hidden)  # (B, S, H), (1, B, H)

    # --8<-- [end:forward]


# --8<-- [start:join_directions]
def join_directions(hidden: Float[Tensor, "D B Hd"]) -> Float[Tensor, "1 B H"]:
    """The last states of D directions (each H/D wide) side by side as one state; unchanged for D = 1."""
    if hidden.size(0) == 1:
        return hidden  # (1, B, H)
    return torch.cat(tuple(hidden), dim=-1).unsqueeze(0)  # (1, B, H): [forward; backward]


# --8<-- [end:join_directions]


def check_bidirectional(hidden_size: int, bidirectional: bool) -> None:
    """The rule of a bidirectional encoder: its two directions split H, so H must be even."""
    even = not bidirectional or (type(hidden_size) is int and hidden_size % 2 == 0)
    require(even, f"a bidirectional encoder splits H in two halves; H must be even, got {hidden_size}")
