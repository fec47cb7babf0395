"""Decoders: one interface (`init_state`, `forward_step`), one decoding loop, three decoders.

A decoder turns the encoder's outputs into its own per-sentence state once (`init_state`:
the first hidden state, the keys, the mask and, for an attentional decoder, the keys already
projected by its score), then moves one word at a time (`forward_step`). The loop in
`StepDecoder.forward` (teacher forcing, free running or a mix), greedy decoding and beam
search all drive a decoder through these two methods only.
"""

from dataclasses import dataclass, replace

import torch
import torch.nn.functional as F
from torch import nn

from ..attention.attention import Attention, _masked_softmax, build_attention
from ..attention.scores import SCORES, AdditiveScore
from ..core.checks import check_indices, check_module_device, check_module_dtype, check_same_device, check_tensor
from ..core.errors import InputError, echo
from ..core.tokens import PAD_IDX, SOS_IDX
from .search import MAX_LENGTH, greedy_search

# --8<-- [start:decoder_scores]
DECODER_SCORES: dict[str, tuple[str, ...]] = {
    "gru": (),  # DecoderRNN: no attention, only the fixed-size context vector
    "bahdanau": ("additive", *(name for name in SCORES if name != "additive")),  # query s_{t-1}, before the GRU
    "luong": ("dot", *(name for name in SCORES if name != "dot")),  # query s_t, after the GRU
}
"""The one table of which decoder may score with which function; the first is its default."""
# --8<-- [end:decoder_scores]


def default_score(decoder: str) -> str | None:
    """The score a decoder uses when none is named: the first of its `DECODER_SCORES` entry."""
    scores = DECODER_SCORES[decoder]
    return scores[0] if scores else None


# --8<-- [start:state]
@dataclass(frozen=True)
class DecoderState:
    """What a decoder carries from one step to the next, made once per batch by `init_state`.

    Shapes:
        hidden: (1, B, H), the GRU state (s_{t-1} before a step, s_t after it).
        keys: (B, S, H), the encoder outputs (the attention's keys and values).
        mask: (B, S) bool, True on real source positions; None when nothing is padded.
        proj_keys: (B, S, Hp), the keys as the score needs them (`Ua(keys)` for Bahdanau),
            computed once; None for a decoder without attention.
    """

    hidden: torch.Tensor
    keys: torch.Tensor
    mask: torch.Tensor | None = None
    proj_keys: torch.Tensor | None = None

    def select(self, rows: torch.Tensor) -> "DecoderState":
        """The state of the batch rows `rows` (B',) long, in that order: beam search copies and reorders rows."""
        return DecoderState(
            self.hidden.index_select(1, rows),  # (1, B', H)
            self.keys.index_select(0, rows),  # (B', S, H)
            None if self.mask is None else self.mask.index_select(0, rows),  # (B', S)
            None if self.proj_keys is None else self.proj_keys.index_select(0, rows),  # (B', S, Hp)
        )


# --8<-- [end:state]


class StepDecoder(nn.Module):
    """The decoding loop of the tutorial, shared by every decoder.

    A subclass builds its layers (and `self.attention`, an `Attention` or None) and defines
    `forward_step`; `init_state` and the loop are the same for all.

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
        self.attention: Attention | None = None  # an attentional decoder sets its own

    # --8<-- [start:init_state]
    def init_state(
        self, encoder_outputs: torch.Tensor, encoder_hidden: torch.Tensor, source_mask: torch.Tensor | None = None
    ) -> DecoderState:
        """The per-batch state: the first hidden state, the keys, the mask, the keys projected once."""
        self._check_state(encoder_outputs, encoder_hidden, source_mask)
        proj_keys = None if self.attention is None else self.attention.project_keys(encoder_outputs)  # (B, S, Hp)
        return DecoderState(encoder_hidden, encoder_outputs, source_mask, proj_keys)

    # --8<-- [end:init_state]

    def forward_step(
        self, input: torch.Tensor, state: DecoderState
    ) -> tuple[torch.Tensor, DecoderState, torch.Tensor | None]:
        """One step: (B, 1) tokens and the state to (B, 1, V) logits, the next state and (B, 1, S) weights."""
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
        self._check_loop(encoder_outputs, target_tensor, max_length, teacher_forcing_ratio)
        state = self.init_state(encoder_outputs, encoder_hidden, source_mask)  # keys projected once here
        if target_tensor is None:  # nothing to learn from: decode greedily (the one free-running loop)
            _, logits, attentions, state = greedy_search(self.forward_step, state, max_length)  # (B, T, V)
            return F.log_softmax(logits, dim=-1), state.hidden, attentions
        batch_size = encoder_outputs.size(0)
        device = encoder_outputs.device
        decoder_input = torch.full((batch_size, 1), SOS_IDX, dtype=torch.long, device=device)  # (B, 1)
        decoder_outputs = []
        attentions = []
        mixed = teacher_forcing_ratio < 1.0  # draw coins only when mixing
        use_target = torch.rand(batch_size, 1, device=device) < teacher_forcing_ratio if mixed else None  # (B, 1)
        # --8<-- [end:forward]

        # --8<-- [start:loop]
        for i in range(target_tensor.size(1)):
            decoder_output, state, attn_weights = self.forward_step(decoder_input, state)  # (B, 1, V), (B, 1, S)
            decoder_outputs.append(decoder_output)
            attentions.append(attn_weights)

            teacher = target_tensor[:, i].unsqueeze(1)  # (B, 1): the true token of step i
            if use_target is None:
                decoder_input = teacher  # teacher forcing
            else:
                prediction = decoder_output.argmax(dim=-1).detach()  # (B, 1): our own guess, cut from the graph
                if coin_per_step and i > 0:
                    use_target = torch.rand(batch_size, 1, device=device) < teacher_forcing_ratio  # (B, 1)
                decoder_input = torch.where(use_target, teacher, prediction)  # (B, 1)
        # --8<-- [end:loop]

        # --8<-- [start:after_loop]
        decoder_outputs = torch.cat(decoder_outputs, dim=1)  # (B, T, V)
        decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)  # (B, T, V)
        attentions = None if attentions[0] is None else torch.cat(attentions, dim=1)  # (B, T, S)

        return decoder_outputs, state.hidden, attentions
        # --8<-- [end:after_loop]

    def teacher_forced(
        self,
        encoder_outputs: torch.Tensor,
        encoder_hidden: torch.Tensor,
        target_tensor: torch.Tensor,
        source_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Log-probabilities (B, T, V) of the target under teacher forcing: what training needs.

        The loop of `forward` by default; a decoder may compute the same numbers faster.
        """
        return self(encoder_outputs, encoder_hidden, target_tensor, source_mask)[0]  # (B, T, V)

    def _check_state(
        self, encoder_outputs: torch.Tensor, encoder_hidden: torch.Tensor, source_mask: torch.Tensor | None
    ) -> None:
        sizes = check_tensor(
            "encoder_outputs", encoder_outputs, ("B", "S", "H"), {"H": self.hidden_size}, dtype="float"
        )
        check_tensor("encoder_hidden", encoder_hidden, (1, "B", "H"), sizes, dtype="float")
        if source_mask is not None:
            check_tensor("source_mask", source_mask, ("B", "S"), sizes, dtype="bool")
        device = check_same_device(
            encoder_outputs=encoder_outputs, encoder_hidden=encoder_hidden, source_mask=source_mask
        )
        check_module_device(self, device, "the encoder outputs")
        check_module_dtype(self, encoder_outputs, "encoder_outputs")
        check_module_dtype(self, encoder_hidden, "encoder_hidden")

    def _check_loop(
        self,
        encoder_outputs: torch.Tensor,
        target_tensor: torch.Tensor | None,
        max_length: int,
        teacher_forcing_ratio: float,
    ) -> None:
        sizes = check_tensor("encoder_outputs", encoder_outputs, ("B", "S", "H"), {"H": self.hidden_size})
        if target_tensor is not None:
            check_tensor("target_tensor", target_tensor, ("B", "T"), {"B": sizes["B"]}, dtype="long")
            if target_tensor.size(1) == 0:
                raise InputError("target_tensor must have at least one step, got T=0")
            check_indices("target_tensor", target_tensor, self.output_size)
            check_same_device(encoder_outputs=encoder_outputs, target_tensor=target_tensor)
        if target_tensor is None and (not isinstance(max_length, int) or max_length < 1):
            raise InputError(f"max_length must be an int of at least 1, got {echo(max_length)}")
        if not 0.0 <= teacher_forcing_ratio <= 1.0:
            raise InputError(f"teacher_forcing_ratio must lie in [0, 1], got {teacher_forcing_ratio}")


class DecoderRNN(StepDecoder):
    """The tutorial's decoder without attention: embedding, ReLU, GRU, linear.

    The decoder sees the source only through `encoder_hidden`, its first state: the
    fixed-size context vector.
    """

    def __init__(self, hidden_size: int, output_size: int) -> None:
        super().__init__(hidden_size, output_size)
        self.embedding = nn.Embedding(output_size, hidden_size, padding_idx=PAD_IDX)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)

    # --8<-- [start:decoder_rnn_step]
    def forward_step(self, input: torch.Tensor, state: DecoderState) -> tuple[torch.Tensor, DecoderState, None]:
        output = F.relu(self.embedding(input))  # (B, 1, H)
        output, hidden = self.gru(output, state.hidden)  # (B, 1, H), (1, B, H)
        output = self.out(output)  # (B, 1, V)
        return output, replace(state, hidden=hidden), None

    # --8<-- [end:decoder_rnn_step]


class AttnDecoderRNN(StepDecoder):
    """The tutorial's decoder with Bahdanau attention (`--decoder bahdanau`).

    At every step the previous state s_{t-1} (the query) attends over the encoder outputs,
    and the context vector is concatenated with the embedded input token as the GRU's input.

    Args:
        hidden_size: H.
        output_size: V, the target vocabulary size.
        dropout_p: dropout on the embedded input token.
        score: the score function's name (`DECODER_SCORES["bahdanau"]`); ``"additive"``, the
            paper's, by default, which makes `attention` a `BahdanauAttention`.
    """

    # --8<-- [start:init]
    def __init__(self, hidden_size: int, output_size: int, dropout_p: float = 0.1, score: str | None = None) -> None:
        super().__init__(hidden_size, output_size)
        self.embedding = nn.Embedding(output_size, hidden_size, padding_idx=PAD_IDX)
        self.attention = build_attention(score or "additive", hidden_size)  # BahdanauAttention for "additive"
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)
        self.dropout = nn.Dropout(dropout_p)

    # --8<-- [end:init]

    # --8<-- [start:forward_step]
    def forward_step(self, input: torch.Tensor, state: DecoderState) -> tuple[torch.Tensor, DecoderState, torch.Tensor]:
        embedded = self.dropout(self.embedding(input))  # (B, 1, H)

        query = state.hidden.permute(1, 0, 2)  # (1, B, H) -> (B, 1, H): s_{t-1}
        context, attn_weights = self.attention(query, state.keys, state.mask, state.proj_keys)  # (B, 1, H), (B, 1, S)
        input_gru = torch.cat((embedded, context), dim=2)  # (B, 1, 2H)

        output, hidden = self.gru(input_gru, state.hidden)  # (B, 1, H), (1, B, H)
        output = self.out(output)  # (B, 1, V): logits

        return output, replace(state, hidden=hidden), attn_weights

    # --8<-- [end:forward_step]

    # --8<-- [start:fused]
    def teacher_forced(
        self,
        encoder_outputs: torch.Tensor,
        encoder_hidden: torch.Tensor,
        target_tensor: torch.Tensor,
        source_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """The loop's teacher-forced log-probabilities, with the step-free work taken out of the loop.

        The same function as ``self(encoder_outputs, encoder_hidden, target_tensor, source_mask)[0]``
        (same parameters, same math), rearranged for speed: what does not depend on the
        state is done once for all T steps as one large matrix product (the embedded inputs'
        share of the GRU input gates, the output layer, the log-softmax), the keys are
        projected once, and with the additive score the two products of the previous state
        (the query `Wa s` and the GRU's hidden gates `W_hh s`) are one matrix product.

        Shapes:
            target_tensor: (B, T) long, padded with `PAD_IDX`; returns (B, T, V) log-probabilities.
        """
        self._check_loop(encoder_outputs, target_tensor, MAX_LENGTH, 1.0)
        if source_mask is not None and bool(source_mask.all()):
            source_mask = None  # a length bucket: nothing to mask
        state = self.init_state(encoder_outputs, encoder_hidden, source_mask)
        keys, proj_keys, score, gru, H = state.keys, state.proj_keys, self.attention.score, self.gru, self.hidden_size
        sos = torch.full_like(target_tensor[:, :1], SOS_IDX)  # (B, 1)
        inputs = torch.cat((sos, target_tensor[:, :-1]), dim=1)  # (B, T): teacher forcing, shifted right
        embedded = self.dropout(self.embedding(inputs))  # (B, T, H)
        w_embedded, w_context = gru.weight_ih_l0.split(H, dim=1)  # (3H, H) each: GRU input = [embedded; context]
        gates_embedded = F.linear(embedded, w_embedded, gru.bias_ih_l0)  # (B, T, 3H), all steps at once
        additive = isinstance(score, AdditiveScore)
        w_state = torch.cat((score.Wa.weight, gru.weight_hh_l0)) if additive else gru.weight_hh_l0  # (4H or 3H, H)
        b_state = torch.cat((score.Wa.bias, gru.bias_hh_l0)) if additive else gru.bias_hh_l0  # (4H or 3H,)
        if source_mask is not None:
            keys = keys.masked_fill(~source_mask.unsqueeze(2), 0.0)  # (B, S, H): as `Attention`, padding never leaks
        hidden = state.hidden[0]  # (B, H)
        states = []
        for t in range(target_tensor.size(1)):
            projected = F.linear(hidden, w_state, b_state)  # (B, 4H) or (B, 3H)
            if additive:
                query, gates_hidden = projected.split((H, 3 * H), dim=1)  # (B, H), (B, 3H)
                scores = score.Va(torch.tanh(query.unsqueeze(1) + proj_keys)).squeeze(2)  # (B, S)
            else:
                gates_hidden = projected  # (B, 3H)
                scores = score.compare(hidden.unsqueeze(1), proj_keys).squeeze(1)  # (B, S)
            if source_mask is None:
                weights = torch.softmax(scores, dim=1)  # (B, S)
            else:
                weights = _masked_softmax(scores.unsqueeze(1), source_mask).squeeze(1)  # (B, S): the module's masking
            context = torch.bmm(weights.unsqueeze(1), keys).squeeze(1)  # (B, H)
            gates_input = gates_embedded[:, t] + F.linear(context, w_context)  # (B, 3H)
            i_r, i_z, i_n = gates_input.chunk(3, dim=1)  # (B, H) each
            h_r, h_z, h_n = gates_hidden.chunk(3, dim=1)  # (B, H) each
            reset = torch.sigmoid(i_r + h_r)  # (B, H)
            update = torch.sigmoid(i_z + h_z)  # (B, H)
            candidate = torch.tanh(i_n + reset * h_n)  # (B, H)
            hidden = candidate + update * (hidden - candidate)  # (B, H): (1 - z) n + z s
            states.append(hidden)
        logits = self.out(torch.stack(states, dim=1))  # (B, T, V), one product for all steps
        return F.log_softmax(logits, dim=-1)  # (B, T, V)

    # --8<-- [end:fused]


class LuongAttnDecoderRNN(StepDecoder):
    """Luong's attention decoder (`--decoder luong`), batched and masked.

    The GRU steps first; its new state s_t (the query) then scores every encoder output,
    the softmax over source positions gives the attention distribution, the weighted sum
    of the encoder outputs gives the attention value, and `tanh(concat([value, s_t]))`
    followed by the output layer gives the logits. Compare `AttnDecoderRNN`, which
    attends with s_{t-1} before the GRU step and feeds the context into the GRU.

    Args:
        hidden_size: H.
        output_size: V, the target vocabulary size.
        dropout_p: dropout on the embedded input token.
        score: the score function's name (`DECODER_SCORES["luong"]`): ``"dot"`` by default,
            ``"general"`` or ``"scaled_dot"`` give Luong's other variants.

    Shapes:
        as `StepDecoder`; `forward_step` maps (B, 1) tokens and the state to (B, 1, V)
        logits, the next state and (B, 1, S) attention weights.
    """

    # --8<-- [start:luong_init]
    def __init__(self, hidden_size: int, output_size: int, dropout_p: float = 0.1, score: str | None = None) -> None:
        super().__init__(hidden_size, output_size)
        self.embedding = nn.Embedding(output_size, hidden_size, padding_idx=PAD_IDX)
        self.dropout = nn.Dropout(dropout_p)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)  # input: the token only
        self.attention = build_attention(score or "dot", hidden_size)  # (B, 1, H), (B, S, H) -> (B, 1, S) weights
        self.concat = nn.Linear(2 * hidden_size, hidden_size)  # [value; s_t] -> H
        self.out = nn.Linear(hidden_size, output_size)

    # --8<-- [end:luong_init]

    # --8<-- [start:luong_step]
    def forward_step(self, input: torch.Tensor, state: DecoderState) -> tuple[torch.Tensor, DecoderState, torch.Tensor]:
        embedded = self.dropout(F.relu(self.embedding(input)))  # (B, 1, H)
        output, hidden = self.gru(embedded, state.hidden)  # (B, 1, H), (1, B, H): s_t first

        value, attn_weights = self.attention(
            output, state.keys, state.mask, state.proj_keys
        )  # (B, 1, H) attention value, (B, 1, S) distribution

        concat = torch.cat((value, output), dim=2)  # (B, 1, 2H)
        attentional = torch.tanh(self.concat(concat))  # (B, 1, H)
        output = self.out(attentional)  # (B, 1, V): logits; the loop applies log_softmax

        return output, replace(state, hidden=hidden), attn_weights

    # --8<-- [end:luong_step]
