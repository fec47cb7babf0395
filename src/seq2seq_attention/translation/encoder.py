"""The encoder: token indices to one hidden state per source position."""

import torch
from torch import nn

from ..core.checks import Call, check_sizes, check_tokens, checked
from ..core.errors import InputError
from ..core.rnn import run_packed
from ..core.tokens import PAD_IDX
from .defaults import DROPOUT


class EncoderRNN(nn.Module):
    """Embedding, dropout and a one-layer GRU, batch first.

    Args:
        input_size: source vocabulary size V_src.
        hidden_size: H, the size of the embeddings and of the encoder's states.
        dropout_p: dropout on the embeddings.
        bidirectional: read the sentence both ways: two GRUs of H/2 each (H must be even), whose
            states are concatenated, so that each position's state (still H wide) sees the
            whole sentence; the first state of the decoder is [forward's last; backward's last].

    Shapes:
        input: (B, S) token indices, padded with `PAD_IDX`.
        lengths: (B,) real lengths, optional. With it, the GRU never reads padding:
            padded positions of `outputs` are zero and `hidden` is the state after each
            sentence's last real token.
        outputs: (B, S, H), one state per source position (the attention's keys).
        hidden: (1, B, H), the last state (the decoder's first state).
    """

    def __init__(
        self, input_size: int, hidden_size: int, dropout_p: float = DROPOUT, bidirectional: bool = False
    ) -> None:
        super().__init__()
        check_sizes("EncoderRNN", input_size=input_size, hidden_size=hidden_size)
        check_bidirectional(hidden_size, bidirectional)
        self.hidden_size = hidden_size
        self.bidirectional = bidirectional
        self.embedding = nn.Embedding(input_size, hidden_size, padding_idx=PAD_IDX)
        directions = 2 if bidirectional else 1
        self.gru = nn.GRU(hidden_size, hidden_size // directions, batch_first=True, bidirectional=bidirectional)
        self.dropout = nn.Dropout(dropout_p)

    def _check_forward(self, call: Call) -> None:
        input, lengths = call.input, call.lengths
        check_tokens(self, input, lengths, self.embedding.num_embeddings)

    @checked("_check_forward")
    # --8<-- [start:forward]
    def forward(self, input: torch.Tensor, lengths: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        embedded = self.dropout(self.embedding(input))  # (B, S, H)
        if lengths is None:
            outputs, hidden = self.gru(embedded)  # (B, S, H), (D, B, H/D): D directions
        else:
            outputs, hidden = run_packed(self.gru, embedded, lengths)  # (B, S, H) zero on padding, (D, B, H/D)
        return outputs, join_directions(hidden)  # (B, S, H), (1, B, H)

    # --8<-- [end:forward]


# --8<-- [start:join_directions]
def join_directions(hidden: torch.Tensor) -> torch.Tensor:
    """The last states of D directions (D, B, H/D) side by side as one state (1, B, H); unchanged for D = 1."""
    if hidden.size(0) == 1:
        return hidden  # (1, B, H)
    return torch.cat(tuple(hidden), dim=-1).unsqueeze(0)  # (1, B, H): [forward; backward]


# --8<-- [end:join_directions]


def check_bidirectional(hidden_size: int, bidirectional: bool) -> None:
    """The rule of a bidirectional encoder: its two directions split H, so H must be even.

    Raises:
        InputError: an odd H for a bidirectional encoder.
    """
    if bidirectional and hidden_size % 2:
        raise InputError(f"a bidirectional encoder splits H in two halves; H must be even, got {hidden_size}")
