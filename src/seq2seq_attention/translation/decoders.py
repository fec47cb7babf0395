"""Decoders: one interface (`init_state`, `forward_step`), one training loop, three decoders.

A decoder turns the encoder's outputs into its own per-sentence state once (`init_state`:
the first hidden state, the keys, the mask and, for an attentional decoder, the keys already
projected by its score), then moves one word at a time (`forward_step`). A step has three
pieces: `embed` (tokens to vectors), `step` (the recurrence and the attention) and the output
layer `out`. The training loop in `StepDecoder.forward` embeds every target input at once,
calls `step` per position and applies `out` once. Decoding without a target is not a decoder's
business: greedy decoding and beam search (`search.py`, driven by `Seq2Seq` and `translate`)
call a decoder through `init_state` and `forward_step` only, and no decoder imports them.

Each input check (`_check_*`) sits just above the method it guards and runs where a user calls
that method (`checked`); inside, the decoder trusts its tensors.
"""

import inspect
from dataclasses import dataclass, replace
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from ..attention.attention import Attention
from ..attention.scores import build_attention, check_score_name
from ..core.checks import (
    Call,
    check_indices,
    check_module_device,
    check_module_dtype,
    check_same_device,
    check_tensor,
    checked,
)
from ..core.errors import InputError, echo
from ..core.tokens import PAD_IDX, SOS_IDX
from .defaults import DROPOUT


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
        feed: (B, 1, H), the previous step's attentional vector for input feeding (zeros before
            the first step); None for a decoder that does not feed it.
    """

    hidden: torch.Tensor
    keys: torch.Tensor
    mask: torch.Tensor | None = None
    proj_keys: torch.Tensor | None = None
    feed: torch.Tensor | None = None

    def select(self, rows: torch.Tensor) -> "DecoderState":
        """The state of the batch rows `rows` (B',) long, in that order: beam search copies and reorders rows."""
        return DecoderState(
            self.hidden.index_select(1, rows),  # (1, B', H)
            self.keys.index_select(0, rows),  # (B', S, H)
            None if self.mask is None else self.mask.index_select(0, rows),  # (B', S)
            None if self.proj_keys is None else self.proj_keys.index_select(0, rows),  # (B', S, Hp)
            None if self.feed is None else self.feed.index_select(0, rows),  # (B', 1, H)
        )


# --8<-- [end:state]


class StepDecoder(nn.Module):
    """The decoding loop of the tutorial, shared by every decoder.

    A subclass builds its layers (`embedding`, `out`, and `attention`, an `Attention` or None)
    and defines `embed` and `step`; `init_state`, `forward_step` and the loop are the same for all.
    Every decoder takes ``(hidden_size, output_size)`` and then only the options it uses
    (`dropout_p`, `score`, `input_feeding`); `build_model` passes each decoder just those.

    Args:
        hidden_size: H, the size of the GRU state (and of the encoder's).
        output_size: V, the target vocabulary size.
        input_feeding: feed the previous step's output vector back into the GRU with the next
            token (Luong et al., 2015, section 3.3); only a decoder that takes `input_feeding` can.

    Shapes:
        encoder_outputs: (B, S, H).
        encoder_hidden: (1, B, H), the decoder's first state.
        target_tensor: (B, T) token indices ending in `<eos>`, padded with `PAD_IDX`; the loop
            runs T steps (teacher forcing, or the mixed schedule).
        source_mask: (B, S) bool, True for real source positions; optional.
        decoder_outputs: (B, T, V) log-probabilities.
        decoder_hidden: (1, B, H), the state after the last step.
        attentions: (B, T, S), one attention distribution per step (None for a decoder
            without attention).
    """

    def __init__(self, hidden_size: int, output_size: int, input_feeding: bool = False) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.output_size = output_size
        self.input_feeding = input_feeding
        self.attention: Attention | None = None  # an attentional decoder sets its own

    out: nn.Linear
    """The output layer, H -> V (each decoder makes its own, in the tutorial's order of layers)."""

    def _check_state(self, call: Call) -> dict[str, int]:
        """`init_state`'s arguments; returns the sizes they bind (B, S, H)."""
        encoder_outputs, encoder_hidden, source_mask = call.encoder_outputs, call.encoder_hidden, call.source_mask
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
        return sizes

    @checked("_check_state")
    # --8<-- [start:init_state]
    def init_state(
        self, encoder_outputs: torch.Tensor, encoder_hidden: torch.Tensor, source_mask: torch.Tensor | None = None
    ) -> DecoderState:
        """The per-batch state: the first hidden state, the keys, the mask, the keys projected once."""
        if source_mask is not None and bool(source_mask.all()):
            source_mask = None  # nothing is padded (a length bucket): no mask to apply at every step
        proj_keys = None if self.attention is None else self.attention.project_keys(encoder_outputs)  # (B, S, Hp)
        batch_size = encoder_outputs.size(0)
        feed = encoder_hidden.new_zeros(batch_size, 1, self.hidden_size) if self.input_feeding else None  # (B, 1, H)
        hidden = encoder_hidden.contiguous()  # (1, B, H): cuDNN's GRU refuses a strided view such as outputs[:, -1]
        return DecoderState(hidden, encoder_outputs, source_mask, proj_keys, feed)

    # --8<-- [end:init_state]

    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        """Token indices (B, T) to the vectors `step` takes, (B, T, E)."""
        raise NotImplementedError

    def step(
        self, embedded: torch.Tensor, state: DecoderState
    ) -> tuple[torch.Tensor, DecoderState, torch.Tensor | None]:
        """One embedded token (B, 1, E) and the state to the output layer's input (B, 1, H), the next state, weights."""
        raise NotImplementedError

    def _check_step(self, call: Call) -> None:
        """`forward_step`'s arguments: (B, 1) token indices and a `DecoderState` that fits this decoder."""
        input, state = call.input, call.state
        if not isinstance(state, DecoderState):
            raise InputError(f"state must be a DecoderState (made by init_state), got {type(state).__name__}")
        sizes = check_tensor("state.keys", state.keys, ("B", "S", "H"), {"H": self.hidden_size}, dtype="float")
        check_tensor("state.hidden", state.hidden, (1, "B", "H"), sizes, dtype="float")
        if state.mask is not None:
            check_tensor("state.mask", state.mask, ("B", "S"), sizes, dtype="bool")
        needed = []  # the parts of the state that only some decoders carry: (name, value, dims, sizes, why)
        if self.attention is not None:
            projected = {**sizes, "Hp": self.attention.hidden_size}
            why = "the keys as init_state projects them"
            needed.append(("state.proj_keys", state.proj_keys, ("B", "S", "Hp"), projected, why))
        if self.input_feeding:
            why = "the previous attentional vector of input feeding, zeros before the first step (init_state makes it)"
            needed.append(("state.feed", state.feed, ("B", 1, "H"), sizes, why))
        for name, value, dims, known, why in needed:
            if value is None:
                expected = ", ".join(str(known.get(d, d)) if isinstance(d, str) else str(d) for d in dims)
                raise InputError(f"{name} must be ({expected}): {why}; got None")
            check_tensor(name, value, dims, known, dtype="float")
        check_tensor("input", input, ("B", 1), {"B": sizes["B"]}, dtype="long")
        check_indices("input", input, self.output_size)
        parts = {"input": input, "state.hidden": state.hidden, "state.keys": state.keys, "state.mask": state.mask}
        device = check_same_device(**parts, **{"state.proj_keys": state.proj_keys, "state.feed": state.feed})
        check_module_device(self, device, "the input and the state")
        check_module_dtype(self, state.hidden, "state.hidden")

    @checked("_check_step")
    # --8<-- [start:forward_step]
    def forward_step(
        self, input: torch.Tensor, state: DecoderState
    ) -> tuple[torch.Tensor, DecoderState, torch.Tensor | None]:
        """One step: (B, 1) tokens and the state to (B, 1, V) logits, the next state and (B, 1, S) weights."""
        output, state, attn_weights = self.step(self.embed(input), state)  # (B, 1, H), (B, 1, S) or None
        return self.out(output), state, attn_weights  # (B, 1, V) logits, (B, 1, S) or None

    # --8<-- [end:forward_step]

    def _check_forward(self, call: Call) -> None:
        """`forward`'s arguments: those of `init_state`, then the target and the ratio."""
        sizes = self._check_state(call)
        if call.target_tensor is None:
            raise InputError(
                "target_tensor is required: a decoder's forward is the training loop; decode without a target "
                "with Seq2Seq.forward, greedy_search or translate"
            )
        check_target(self.output_size, sizes, call.target_tensor, call.teacher_forcing_ratio)
        check_same_device(encoder_outputs=call.encoder_outputs, target_tensor=call.target_tensor)

    @checked("_check_forward")
    # --8<-- [start:forward]
    def forward(
        self,
        encoder_outputs: torch.Tensor,
        encoder_hidden: torch.Tensor,
        target_tensor: torch.Tensor,
        source_mask: torch.Tensor | None = None,
        teacher_forcing_ratio: float = 1.0,
        coin_per_step: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        state = self.init_state(encoder_outputs, encoder_hidden, source_mask)  # keys projected once here
        batch_size, device = target_tensor.size(0), target_tensor.device
        sos = torch.full_like(target_tensor[:, :1], SOS_IDX)  # (B, 1)
        teacher = torch.cat((sos, target_tensor[:, :-1]), dim=1)  # (B, T): y_0 = <sos>, then the target shifted
        embedded = self.embed(teacher)  # (B, T, E): every teacher-forced input, embedded at once
        mixed = teacher_forcing_ratio < 1.0  # draw coins only when mixing
        use_target = torch.rand(batch_size, 1, 1, device=device) < teacher_forcing_ratio if mixed else None  # (B, 1, 1)
        # --8<-- [end:forward]

        # --8<-- [start:loop]
        outputs, attentions = [], []
        for i in range(target_tensor.size(1)):
            step_input = embedded[:, i : i + 1]  # (B, 1, E): y_i, the true previous token
            if use_target is not None and i > 0:
                if coin_per_step and i > 1:
                    use_target = torch.rand(batch_size, 1, 1, device=device) < teacher_forcing_ratio  # (B, 1, 1)
                guess = self.out(outputs[-1]).argmax(dim=-1)  # (B, 1): the previous step's guess, an index
                step_input = torch.where(use_target, step_input, self.embed(guess))  # (B, 1, E)
            output, state, attn_weights = self.step(step_input, state)  # (B, 1, H), (B, 1, S) or None
            outputs.append(output)
            attentions.append(attn_weights)
        # --8<-- [end:loop]

        # --8<-- [start:after_loop]
        logits = self.out(torch.cat(outputs, dim=1))  # (B, T, V): the output layer once, for every step
        decoder_outputs = F.log_softmax(logits, dim=-1)  # (B, T, V)
        attentions = None if attentions[0] is None else torch.cat(attentions, dim=1)  # (B, T, S)

        return decoder_outputs, state.hidden, attentions
        # --8<-- [end:after_loop]


class DecoderRNN(StepDecoder):
    """The tutorial's decoder without attention: embedding, ReLU, GRU, linear.

    The decoder sees the source only through `encoder_hidden`, its first state: the
    fixed-size context vector.

    Args:
        hidden_size: H.
        output_size: V, the target vocabulary size. (No dropout and no score: the tutorial's
            decoder without attention has neither.)
    """

    def __init__(self, hidden_size: int, output_size: int) -> None:
        super().__init__(hidden_size, output_size)
        self.embedding = nn.Embedding(output_size, hidden_size, padding_idx=PAD_IDX)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)

    # --8<-- [start:decoder_rnn_step]
    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        return F.relu(self.embedding(tokens))  # (B, T, H)

    def step(self, embedded: torch.Tensor, state: DecoderState) -> tuple[torch.Tensor, DecoderState, None]:
        output, hidden = self.gru(embedded, state.hidden)  # (B, 1, H), (1, B, H)
        return output, replace(state, hidden=hidden), None  # `forward_step` applies `out`: (B, 1, V)

    # --8<-- [end:decoder_rnn_step]


class AttnDecoderRNN(StepDecoder):
    """The tutorial's decoder with Bahdanau attention (`--decoder bahdanau`).

    At every step the previous state s_{t-1} (the query) attends over the encoder outputs,
    and the context vector is concatenated with the embedded input token as the GRU's input.

    Args:
        hidden_size: H.
        output_size: V, the target vocabulary size.
        dropout_p: dropout on the embedded input token.
        score: the score function's name, one of `DECODERS["bahdanau"].scores`; the default is
            the table's first, ``"additive"`` (the paper's), which makes `attention` a `BahdanauAttention`.
    """

    # --8<-- [start:init]
    def __init__(self, hidden_size: int, output_size: int, dropout_p: float = DROPOUT, score: str = "additive") -> None:
        super().__init__(hidden_size, output_size)
        self.embedding = nn.Embedding(output_size, hidden_size, padding_idx=PAD_IDX)
        self.attention = build_attention(score, hidden_size)  # "additive": BahdanauAttention
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)
        self.dropout = nn.Dropout(dropout_p)

    # --8<-- [end:init]

    # --8<-- [start:step]
    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.embedding(tokens))  # (B, T, H)

    def step(self, embedded: torch.Tensor, state: DecoderState) -> tuple[torch.Tensor, DecoderState, torch.Tensor]:
        query = state.hidden.permute(1, 0, 2)  # (1, B, H) -> (B, 1, H): s_{t-1}
        context, attn_weights = self.attention(query, state.keys, state.mask, state.proj_keys)  # (B, 1, H), (B, 1, S)
        input_gru = torch.cat((embedded, context), dim=2)  # (B, 1, 2H)

        output, hidden = self.gru(input_gru, state.hidden)  # (B, 1, H), (1, B, H)

        return output, replace(state, hidden=hidden), attn_weights  # `forward_step` applies `out`: (B, 1, V)

    # --8<-- [end:step]


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
        score: the score function's name, one of `DECODERS["luong"].scores`; the default is the
            table's first, ``"dot"``; ``"general"`` or ``"scaled_dot"`` give Luong's other variants.
        input_feeding: feed the previous attentional vector h~_{t-1} into the GRU with the token.

    Shapes:
        as `StepDecoder`; `forward_step` maps (B, 1) tokens and the state to (B, 1, V)
        logits, the next state and (B, 1, S) attention weights.
    """

    # --8<-- [start:luong_init]
    def __init__(
        self,
        hidden_size: int,
        output_size: int,
        dropout_p: float = DROPOUT,
        score: str = "dot",
        input_feeding: bool = False,
    ) -> None:
        super().__init__(hidden_size, output_size, input_feeding)
        self.embedding = nn.Embedding(output_size, hidden_size, padding_idx=PAD_IDX)
        self.dropout = nn.Dropout(dropout_p)
        feed_size = hidden_size if input_feeding else 0  # h~_{t-1} joins the token with input feeding
        self.gru = nn.GRU(hidden_size + feed_size, hidden_size, batch_first=True)  # input: the token (and h~_{t-1})
        self.attention = build_attention(score, hidden_size)  # "dot" unless told otherwise
        self.concat = nn.Linear(2 * hidden_size, hidden_size)  # [value; s_t] -> H
        self.out = nn.Linear(hidden_size, output_size)

    # --8<-- [end:luong_init]

    # --8<-- [start:luong_step]
    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.dropout(F.relu(self.embedding(tokens)))  # (B, T, H)

    def step(self, embedded: torch.Tensor, state: DecoderState) -> tuple[torch.Tensor, DecoderState, torch.Tensor]:
        if self.input_feeding:
            embedded = torch.cat((embedded, state.feed), dim=2)  # (B, 1, 2H): the token and h~_{t-1}
        output, hidden = self.gru(embedded, state.hidden)  # (B, 1, H), (1, B, H): s_t first

        value, attn_weights = self.attention(output, state.keys, state.mask, state.proj_keys)  # (B, 1, H), (B, 1, S)

        concat = torch.cat((value, output), dim=2)  # (B, 1, 2H)
        attentional = torch.tanh(self.concat(concat))  # (B, 1, H): `forward_step` applies `out` to it

        feed = attentional if self.input_feeding else None  # h~_t, fed to the next step
        return attentional, replace(state, hidden=hidden, feed=feed), attn_weights

    # --8<-- [end:luong_step]


class DecoderKind(NamedTuple):
    """A decoder of the table: its class and the scores it may use (the first is its default, as in the
    class's own signature)."""

    decoder: type[StepDecoder]
    scores: tuple[str, ...]

    @property
    def options(self) -> tuple[str, ...]:
        """What its constructor takes after ``(hidden_size, output_size)``: all that `build_model` passes it."""
        return tuple(inspect.signature(self.decoder).parameters)[2:]

    @property
    def feeds_input(self) -> bool:
        """Whether it can feed its previous output vector back (it takes `input_feeding`)."""
        return "input_feeding" in self.options


# --8<-- [start:decoders]
DECODERS: dict[str, DecoderKind] = {
    "gru": DecoderKind(DecoderRNN, ()),  # no attention, only the fixed-size context vector
    "bahdanau": DecoderKind(AttnDecoderRNN, ("additive", "dot", "scaled_dot", "general")),  # query s_{t-1}
    "luong": DecoderKind(LuongAttnDecoderRNN, ("dot", "scaled_dot", "general", "additive")),  # query s_t
}
"""The one table of decoders: a name for `build_model`, checkpoints and `--decoder`, its class,
and the score functions it may use, the first being its default."""
# --8<-- [end:decoders]


def check_score(decoder: str, score: str | None) -> None:
    """The named decoder exists and can use `score` (None: its default, whatever that is).

    Raises:
        InputError: an unknown decoder, or a score the decoder cannot use.
    """
    if not isinstance(decoder, str) or decoder not in DECODERS:
        raise InputError(f"unknown decoder {echo(decoder)}; choose one of {', '.join(sorted(DECODERS))}")
    if score is None:
        return
    check_score_name(score)
    allowed = DECODERS[decoder].scores
    if score not in allowed:
        choices = f"one of {', '.join(allowed)}" if allowed else "none (it has no attention)"
        raise InputError(f"score {echo(score)} does not fit the {decoder} decoder; expected {choices}")


def choose_score(decoder: str, score: str | None) -> str | None:
    """The score the named decoder uses: `score`, or its default (the first of its scores) when None.

    `build_model` resolves the score here once and passes the name it returns to the decoder.

    Raises:
        InputError: see `check_score`.
    """
    check_score(decoder, score)
    allowed = DECODERS[decoder].scores
    return score if score is not None else (allowed[0] if allowed else None)


def check_target(vocab_size: int, sizes: dict[str, int], target: object, teacher_forcing_ratio: object) -> None:
    """What the training loop takes besides the encoder's outputs: a (B, T) target of known words (when one is
    given), and the ratio (for `StepDecoder.forward` and `Seq2Seq.forward`; `sizes` holds the batch's B)."""
    if target is not None:
        check_tensor("target_tensor", target, ("B", "T"), {"B": sizes["B"]}, dtype="long")
        if target.size(1) == 0:
            raise InputError("target_tensor must have at least one step, got T=0")
        check_indices("target_tensor", target, vocab_size)
    if not 0.0 <= teacher_forcing_ratio <= 1.0:
        raise InputError(f"teacher_forcing_ratio must lie in [0, 1], got {teacher_forcing_ratio}")


def check_input_feeding(decoder: str, input_feeding: bool) -> None:
    """The rule of input feeding, for `build_model` and `TrainConfig`: only a feeding decoder feeds.
    `decoder` is a key of `DECODERS`.

    Raises:
        InputError: input feeding asked of a decoder that cannot feed its output back.
    """
    if input_feeding and not DECODERS[decoder].feeds_input:
        feeding = ", ".join(name for name, kind in DECODERS.items() if kind.feeds_input)
        raise InputError(
            f"input feeding needs a decoder that feeds its output back ({feeding}): the previous attentional "
            f"vector joins the next token, which is Luong's; {DECODERS[decoder].decoder.__name__} cannot feed it"
        )
