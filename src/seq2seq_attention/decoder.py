"""Decoders: one shared decoding loop, and the step that each decoder plugs into it."""

import torch
import torch.nn.functional as F
from torch import nn

from .attention import BahdanauAttention, masked_softmax
from .checks import check_indices, check_module_device, check_module_dtype, check_same_device, check_tensor
from .scores import DECODER_SCORES, build_score
from .tokens import PAD_IDX, SOS_IDX

MAX_LENGTH = 10
"""Steps decoded without a target (the seeds' `MAX_LENGTH`: 6 words, punctuation, `<eos>`, slack)."""


class StepDecoder(nn.Module):
    """The decoding loop of seed 000, shared by every decoder.

    A subclass defines `forward_step` (one step: token in, logits out) and, if it has
    work that does not depend on the step, `precompute`.

    Args:
        hidden_size: H, the size of the GRU state (and of the encoder's).
        output_size: V, the target vocabulary size.

    Shapes:
        encoder_outputs: (B, S, H).
        encoder_hidden: (1, B, H), the decoder's first state.
        target_tensor: (B, T) token indices ending in `<eos>`, padded with `PAD_IDX`;
            when given, the loop runs T steps with teacher forcing.
        source_mask: (B, S) bool, True for real source positions; optional.
        decoder_outputs: (B, T, V) log-probabilities (T = `max_length` without a target).
        decoder_hidden: (1, B, H), the state after the last step.
        attentions: (B, T, S), one attention distribution per step (None for a decoder
            without attention).
    """

    def __init__(self, hidden_size: int, output_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.output_size = output_size

    def precompute(self, encoder_outputs: torch.Tensor) -> torch.Tensor | None:
        """Work on the encoder outputs that every step reuses (nothing by default)."""
        return None

    def forward_step(
        self,
        input: torch.Tensor,
        hidden: torch.Tensor,
        encoder_outputs: torch.Tensor,
        source_mask: torch.Tensor | None = None,
        proj_keys: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """One step: (B, 1) tokens and (1, B, H) state to (B, 1, V) logits, the new state, (B, 1, S) weights."""
        raise NotImplementedError

    # --8<-- [start:forward]
    def forward(
        self,
        encoder_outputs: torch.Tensor,
        encoder_hidden: torch.Tensor,
        target_tensor: torch.Tensor | None = None,
        source_mask: torch.Tensor | None = None,
        max_length: int = MAX_LENGTH,
        teacher_forcing_ratio: float = 1.0,
        coin_per_step: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        self._check(encoder_outputs, encoder_hidden, target_tensor, source_mask, max_length, teacher_forcing_ratio)
        batch_size = encoder_outputs.size(0)
        device = encoder_outputs.device
        decoder_input = torch.full((batch_size, 1), SOS_IDX, dtype=torch.long, device=device)  # (B, 1)
        decoder_hidden = encoder_hidden  # (1, B, H)
        proj_keys = self.precompute(encoder_outputs)  # (B, S, H), once for all steps
        decoder_outputs = []
        attentions = []
        steps = max_length if target_tensor is None else target_tensor.size(1)
        mixed = target_tensor is not None and teacher_forcing_ratio < 1.0  # draw coins only when mixing
        use_target = torch.rand(batch_size, 1, device=device) < teacher_forcing_ratio if mixed else None  # (B, 1)
        # --8<-- [end:forward]

        # --8<-- [start:loop]
        for i in range(steps):
            decoder_output, decoder_hidden, attn_weights = self.forward_step(
                decoder_input, decoder_hidden, encoder_outputs, source_mask, proj_keys
            )  # (B, 1, V), (1, B, H), (B, 1, S)
            decoder_outputs.append(decoder_output)
            attentions.append(attn_weights)

            _, topi = decoder_output.topk(1)  # (B, 1, 1): the index of the largest logit
            prediction = topi.squeeze(-1).detach()  # (B, 1), cut from the graph
            if target_tensor is None:
                decoder_input = prediction  # free running: feed back our own guess
            else:
                teacher = target_tensor[:, i].unsqueeze(1)  # (B, 1): the true token of step i
                if use_target is None:
                    decoder_input = teacher  # teacher forcing
                else:
                    if coin_per_step and i > 0:
                        use_target = torch.rand(batch_size, 1, device=device) < teacher_forcing_ratio  # (B, 1)
                    decoder_input = torch.where(use_target, teacher, prediction)  # (B, 1)
        # --8<-- [end:loop]

        # --8<-- [start:after_loop]
        decoder_outputs = torch.cat(decoder_outputs, dim=1)  # (B, T, V)
        decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)  # (B, T, V)
        attentions = None if attentions[0] is None else torch.cat(attentions, dim=1)  # (B, T, S)

        return decoder_outputs, decoder_hidden, attentions
        # --8<-- [end:after_loop]

    def _check(
        self,
        encoder_outputs: torch.Tensor,
        encoder_hidden: torch.Tensor,
        target_tensor: torch.Tensor | None,
        source_mask: torch.Tensor | None,
        max_length: int,
        teacher_forcing_ratio: float,
    ) -> None:
        sizes = check_tensor(
            "encoder_outputs", encoder_outputs, ("B", "S", "H"), {"H": self.hidden_size}, dtype="float"
        )
        check_tensor("encoder_hidden", encoder_hidden, (1, "B", "H"), sizes, dtype="float")
        if target_tensor is not None:
            check_tensor("target_tensor", target_tensor, ("B", "T"), sizes, dtype="long")
            if target_tensor.size(1) == 0:
                raise ValueError("target_tensor must have at least one step, got T=0")
            check_indices("target_tensor", target_tensor, self.output_size)
        if source_mask is not None:
            check_tensor("source_mask", source_mask, ("B", "S"), sizes, dtype="bool")
        if target_tensor is None and max_length < 1:
            raise ValueError(f"max_length must be at least 1, got {max_length}")
        if not 0.0 <= teacher_forcing_ratio <= 1.0:
            raise ValueError(f"teacher_forcing_ratio must lie in [0, 1], got {teacher_forcing_ratio}")
        device = check_same_device(
            encoder_outputs=encoder_outputs,
            encoder_hidden=encoder_hidden,
            target_tensor=target_tensor,
            source_mask=source_mask,
        )
        check_module_device(self, device, "the encoder outputs")
        check_module_dtype(self, encoder_outputs, "encoder_outputs")
        check_module_dtype(self, encoder_hidden, "encoder_hidden")


class DecoderRNN(StepDecoder):
    """Seed 001's decoder without attention: embedding, ReLU, GRU, linear.

    The decoder sees the source only through `encoder_hidden`, its first state: the
    fixed-size context vector.
    """

    def __init__(self, hidden_size: int, output_size: int) -> None:
        super().__init__(hidden_size, output_size)
        self.embedding = nn.Embedding(output_size, hidden_size, padding_idx=PAD_IDX)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)

    # --8<-- [start:decoder_rnn_step]
    def forward_step(
        self,
        input: torch.Tensor,
        hidden: torch.Tensor,
        encoder_outputs: torch.Tensor,
        source_mask: torch.Tensor | None = None,
        proj_keys: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, None]:
        output = F.relu(self.embedding(input))  # (B, 1, H)
        output, hidden = self.gru(output, hidden)  # (B, 1, H), (1, B, H)
        output = self.out(output)  # (B, 1, V)
        return output, hidden, None

    # --8<-- [end:decoder_rnn_step]


class AttnDecoderRNN(StepDecoder):
    """Seed 000's decoder with Bahdanau attention.

    At every step the previous state (the query) attends over the encoder outputs, and
    the context vector is concatenated with the embedded input token as the GRU's input.

    Args:
        hidden_size: H.
        output_size: V, the target vocabulary size.
        dropout_p: dropout on the embedded input token.
    """

    # --8<-- [start:init]
    def __init__(self, hidden_size: int, output_size: int, dropout_p: float = 0.1) -> None:
        super().__init__(hidden_size, output_size)
        self.embedding = nn.Embedding(output_size, hidden_size, padding_idx=PAD_IDX)
        self.attention = BahdanauAttention(hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)
        self.dropout = nn.Dropout(dropout_p)

    # --8<-- [end:init]

    def precompute(self, encoder_outputs: torch.Tensor) -> torch.Tensor:
        """Ua(encoder_outputs), (B, S, H): the keys projected once, reused at every step."""
        return self.attention.project_keys(encoder_outputs)  # (B, S, H)

    # --8<-- [start:forward_step]
    def forward_step(
        self,
        input: torch.Tensor,
        hidden: torch.Tensor,
        encoder_outputs: torch.Tensor,
        source_mask: torch.Tensor | None = None,
        proj_keys: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        embedded = self.dropout(self.embedding(input))  # (B, 1, H)

        query = hidden.permute(1, 0, 2)  # (1, B, H) -> (B, 1, H)
        context, attn_weights = self.attention(query, encoder_outputs, source_mask, proj_keys)  # (B, 1, H), (B, 1, S)
        input_gru = torch.cat((embedded, context), dim=2)  # (B, 1, 2H)

        output, hidden = self.gru(input_gru, hidden)  # (B, 1, H), (1, B, H)
        output = self.out(output)  # (B, 1, V): logits

        return output, hidden, attn_weights

    # --8<-- [end:forward_step]


class LuongAttnDecoderRNN(StepDecoder):
    """Seed 001's dot-product (Luong) attention decoder, batched and masked.

    The GRU steps first; its new state s_t (the query) then scores every encoder output,
    the softmax over source positions gives the attention distribution, the weighted sum
    of the encoder outputs gives the attention value, and `tanh(concat([value, s_t]))`
    followed by the output layer gives the logits. Compare `AttnDecoderRNN`, which
    attends with s_{t-1} before the GRU step and feeds the context into the GRU.

    Args:
        hidden_size: H.
        output_size: V, the target vocabulary size.
        dropout_p: dropout on the embedded input token.
        score: the score function's name in `scores.SCORES`; `DECODER_SCORES["luong"]`
            (`"dot"`) by default, `"general"` or `"scaled_dot"` give Luong's other variants.

    Shapes:
        as `StepDecoder`; `forward_step` maps (B, 1) tokens and a (1, B, H) state to
        (B, 1, V) logits, the new (1, B, H) state and (B, 1, S) attention weights.
    """

    # --8<-- [start:luong_init]
    def __init__(
        self,
        hidden_size: int,
        output_size: int,
        dropout_p: float = 0.1,
        score: str | None = None,
    ) -> None:
        super().__init__(hidden_size, output_size)
        self.score_name = score or DECODER_SCORES["luong"]
        self.embedding = nn.Embedding(output_size, hidden_size, padding_idx=PAD_IDX)
        self.dropout = nn.Dropout(dropout_p)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)  # input: the token only
        self.score = build_score(self.score_name, hidden_size)  # (B, 1, H), (B, S, H) -> (B, 1, S)
        self.concat = nn.Linear(2 * hidden_size, hidden_size)  # [value; s_t] -> H
        self.out = nn.Linear(hidden_size, output_size)

    # --8<-- [end:luong_init]

    # --8<-- [start:luong_step]
    def forward_step(
        self,
        input: torch.Tensor,
        hidden: torch.Tensor,
        encoder_outputs: torch.Tensor,
        source_mask: torch.Tensor | None = None,
        proj_keys: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        embedded = self.dropout(F.relu(self.embedding(input)))  # (B, 1, H)
        output, hidden = self.gru(embedded, hidden)  # (B, 1, H), (1, B, H): s_t first

        scores = self.score(output, encoder_outputs)  # (B, 1, S): s_t . h_j for every j
        attn_weights = masked_softmax(scores, source_mask)  # (B, 1, S): the attention distribution
        value = torch.bmm(attn_weights, encoder_outputs)  # (B, 1, H): the attention value

        concat = torch.cat((value, output), dim=2)  # (B, 1, 2H)
        attentional = torch.tanh(self.concat(concat))  # (B, 1, H)
        output = self.out(attentional)  # (B, 1, V): logits; the loop applies log_softmax

        return output, hidden, attn_weights

    # --8<-- [end:luong_step]
