"""The encoder: token indices to one hidden state per source position."""

import torch
from torch import nn

from ..core.checks import check_sizes, check_tokens
from ..core.rnn import run_packed
from ..core.tokens import PAD_IDX


class EncoderRNN(nn.Module):
    """Embedding, dropout and a one-layer GRU, batch first.

    Args:
        input_size: source vocabulary size V_src.
        hidden_size: H, the size of the embeddings and of the GRU state.
        dropout_p: dropout on the embeddings.

    Shapes:
        input: (B, S) token indices, padded with `PAD_IDX`.
        lengths: (B,) real lengths, optional. With it, the GRU never reads padding:
            padded positions of `outputs` are zero and `hidden` is the state after each
            sentence's last real token.
        outputs: (B, S, H), one state per source position (the attention's keys).
        hidden: (1, B, H), the last state (the decoder's first state).
    """

    def __init__(self, input_size: int, hidden_size: int, dropout_p: float = 0.1) -> None:
        super().__init__()
        check_sizes("EncoderRNN", input_size=input_size, hidden_size=hidden_size)
        self.hidden_size = hidden_size
        self.embedding = nn.Embedding(input_size, hidden_size, padding_idx=PAD_IDX)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.dropout = nn.Dropout(dropout_p)

    # --8<-- [start:forward]
    def forward(self, input: torch.Tensor, lengths: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        check_tokens(self, input, lengths, self.embedding.num_embeddings)
        embedded = self.dropout(self.embedding(input))  # (B, S, H)
        if lengths is None:
            return self.gru(embedded)  # (B, S, H), (1, B, H)
        return run_packed(self.gru, embedded, lengths)  # (B, S, H) zero on padding, (1, B, H)

    # --8<-- [end:forward]
