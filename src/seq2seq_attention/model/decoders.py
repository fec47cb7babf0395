"""Decoders: one interface (`init_state`, `forward_step`), one training loop, three decoders.

A decoder turns the encoder's outputs into its own per-sentence state once (`init_state`:
the first hidden state, the keys, the mask and, for an attentional decoder, the keys already
projected by its score), then moves one word at a time (`forward_step`). A step has three
pieces: `embed` (tokens to vectors), `step` (the recurrence and the attention) and the output
layer `out`. The training loop in `StepDecoder.forward` embeds every target input at once,
calls `step` per position and applies `out` once. Decoding without a target is not a decoder's
business: greedy decoding and beam search (`search.py`, driven by `Seq2Seq` and `translate`)
call a decoder through `init_state` and `forward_step` only, and no decoder imports them.
"""

import inspect
from dataclasses import dataclass, replace
from typing import NamedTuple

import torch
import torch.nn.functional as F
from jaxtyping import Bool, Float, Int64
from torch import Tensor, nn

from .attention import Attention
from .defaults import DROPOUT
from .rules import echo, require
from .scores import SCORES, build_attention
from .tensors import Dropout, Probability, Size, annotations_checked
from .tokens import PAD_IDX, SOS_IDX


# --8<-- [start:state]
@dataclass(frozen=True)
class DecoderState:
    """What a decoder carries from one step to the next, made once per batch by `init_state`.

    Attributes:
        hidden: the GRU state (s_{t-1} before a step, s_t after it).
        keys: the encoder outputs (the attention's keys and values).
        mask: True on real source positions; None when nothing is padded.
        proj_keys: the keys as the score needs them (`Ua(keys)` for Bahdanau), computed once;
            None for a decoder without attention.
        feed: the previous step's attentional vector for input feeding (zeros before the first
            step); None for a decoder that does not feed it.
    """

    hidden: Float[Tensor, "1 B H"]
    keys: Float[Tensor, "B S H"]
    mask: Bool[Tensor, "B S"] | None = None
    proj_keys: Float[Tensor, "B S Hp"] | None = None
    feed: Float[Tensor, "B 1 H"] | None = None

    def select(self, rows: Int64[Tensor, " R"]) -> "DecoderState":
        """The state of the batch rows `rows`, in that order (B' = R rows): beam search copies and reorders rows."""
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

    `forward` is the training loop: `encoder_hidden` is the decoder's first state; `target_tensor`
    holds token indices ending in `<eos>`, padded with `PAD_IDX`, and the loop runs T steps
    (teacher forcing, or the mixed schedule); it returns log-probabilities, the state after the
    last step and one attention distribution per step (None for a decoder without attention).
    """

    def __init__(self, hidden_size: int, output_size: int, input_feeding: bool = False) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.output_size = output_size
        self.input_feeding = input_feeding
        self.attention: Attention | None = None  # an attentional decoder sets its own

    out: nn.Linear
    """The output layer, H -> V (each decoder makes its own, in the tutorial's order of layers)."""

    @annotations_checked
    # --8<-- [start:init_state]
    def init_state(
        self,
        encoder_outputs: Float[Tensor, "B S H"],
        encoder_hidden: Float[Tensor, "1 B H"],
        source_mask: Bool[Tensor, "B S"] | None = None,
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

    def embed(self, tokens: Int64[Tensor, "B T"]) -> Float[Tensor, "B T E"]:
        """Token indices to the vectors `step` takes."""
        raise NotImplementedError

    def step(
        self, embedded: Float[Tensor, "B 1 E"], state: DecoderState
    ) -> tuple[Float[Tensor, "B 1 H"], DecoderState, Float[Tensor, "B 1 S"] | None]:
        """One embedded token and the state to the output layer's input, the next state and the weights."""
        raise NotImplementedError

    @annotations_checked
    # --8<-- [start:forward_step]
    def forward_step(
        self, input: Int64[Tensor, "B 1"], state: DecoderState
    ) -> tuple[Float[Tensor, "B 1 V"], DecoderState, Float[Tensor, "B 1 S"] | None]:
        """One step: tokens and the state to logits, the next state and the attention weights."""
        output, state, attn_weights = self.step(self.embed(input), state)  # (B, 1, H), (B, 1, S) or None
        return self.out(output), state, attn_weights  # (B, 1, V) logits, (B, 1, S) or None

    # --8<-- [end:forward_step]

    @annotations_checked
    # --8<-- [start:forward]
    def forward(
        self,
        encoder_outputs: Float[Tensor, "B S H"],
        encoder_hidden: Float[Tensor, "1 B H"],
        target_tensor: Int64[Tensor, "B T"],
        source_mask: Bool[Tensor, "B S"] | None = None,
        teacher_forcing_ratio: Probability = 1.0,
        coin_per_step: bool = False,
    ) -> tuple[Float[Tensor, "B T V"], Float[Tensor, "1 B H"], Float[Tensor, "B T S"] | None]:
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

    @annotations_checked
    def __init__(self, hidden_size: Size, output_size: Size) -> None:
        super().__init__(hidden_size, output_size)
        self.embedding = nn.Embedding(output_size, hidden_size, padding_idx=PAD_IDX)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)

    # --8<-- [start:decoder_rnn_step]
    def embed(self, tokens: Int64[Tensor, "B T"]) -> Float[Tensor, "B T H"]:
        return F.relu(self.embedding(tokens))  # (B, T, H)

    def step(
        self, embedded: Float[Tensor, "B 1 H"], state: DecoderState
    ) -> tuple[Float[Tensor, "B 1 H"], DecoderState, None]:
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
        score: the score function's name, a key of `SCORES`; the default, ``"additive"`` (the
            paper's), makes `attention` a `BahdanauAttention`.
    """

    @annotations_checked
    # --8<-- [start:init]
    def __init__(
        self, hidden_size: Size, output_size: Size, dropout_p: Dropout = DROPOUT, score: str = "additive"
    ) -> None:
        super().__init__(hidden_size, output_size)
        self.embedding = nn.Embedding(output_size, hidden_size, padding_idx=PAD_IDX)
        self.attention = build_attention(score, hidden_size)  # "additive": BahdanauAttention
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)
        self.dropout = nn.Dropout(dropout_p)

    # --8<-- [end:init]

    # --8<-- [start:step]
    def embed(self, tokens: Int64[Tensor, "B T"]) -> Float[Tensor, "B T H"]:
        return self.dropout(self.embedding(tokens))  # (B, T, H)

    def step(
        self, embedded: Float[Tensor, "B 1 H"], state: DecoderState
    ) -> tuple[Float[Tensor, "B 1 H"], DecoderState, Float[Tensor, "B 1 S"]]:
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
        score: the score function's name, a key of `SCORES`; the default is ``"dot"``;
            ``"general"`` or ``"scaled_dot"`` give Luong's other variants.
        input_feeding: feed the previous attentional vector h~_{t-1} into the GRU with the token.
    """

    @annotations_checked
    # --8<-- [start:luong_init]
    def __init__(
        self,
        hidden_size: Size,
        output_size: Size,
        dropout_p: Dropout = DROPOUT,
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
    def embed(self, tokens: Int64[Tensor, "B T"]) -> Float[Tensor, "B T H"]:
        return self.dropout(F.relu(self.embedding(tokens)))  # (B, T, H)

    def step(
        self, embedded: Float[Tensor, "B 1 H"], state: DecoderState
    ) -> tuple[Float[Tensor, "B 1 H"], DecoderState, Float[Tensor, "B 1 S"]]:
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
    """A decoder of the table: its class, and the scores it refuses with the reason (none refuses any so far)."""

    decoder: type[StepDecoder]
    refuses: dict[str, str] = {}

    @property
    def options(self) -> tuple[str, ...]:
        """What its constructor takes after ``(hidden_size, output_size)``: all that `build_model` passes it."""
        return tuple(inspect.signature(self.decoder).parameters)[2:]

    @property
    def default_score(self) -> str | None:
        """The score its class takes when none is named (its own signature's default); None without attention."""
        score = inspect.signature(self.decoder).parameters.get("score")
        return None if score is None else score.default

    @property
    def scores(self) -> tuple[str, ...]:
        """The scores it may use, its default first: every registered score it does not refuse."""
        if self.default_score is None:
            return ()
        others = [name for name in SCORES if name != self.default_score and name not in self.refuses]
        return (self.default_score, *others)

    @property
    def feeds_input(self) -> bool:
        """Whether it can feed its previous output vector back (it takes `input_feeding`)."""
        return "input_feeding" in self.options


# --8<-- [start:decoders]
DECODERS: dict[str, DecoderKind] = {
    "gru": DecoderKind(DecoderRNN),  # no attention, only the fixed-size context vector
    "bahdanau": DecoderKind(AttnDecoderRNN),  # query s_{t-1}
    "luong": DecoderKind(LuongAttnDecoderRNN),  # query s_t
}
"""The one table of decoders: a name for `build_model`, checkpoints and `--decoder`, and its class; an attentional
decoder uses every score of `SCORES` it does not refuse, its class's default first."""
# --8<-- [end:decoders]


def choose_score(decoder: str, score: str | None) -> str | None:
    """The score the named decoder uses: `score` (checked against what it refuses), or its default when None."""
    names = ", ".join(sorted(DECODERS))
    require(decoder in DECODERS, f"unknown decoder {echo(decoder)}; choose one of {names}")
    kind = DECODERS[decoder]
    require(score is None or kind.scores, f"the {decoder} decoder has no attention, so no score; got {echo(score)}")
    require(score not in kind.refuses, f"the {decoder} decoder refuses the {score} score: {kind.refuses.get(score)}")
    return kind.default_score if score is None else score


def check_input_feeding(decoder: str, input_feeding: bool) -> None:
    """Input feeding needs a decoder that feeds its output back (Luong's): for `build_model` and `TrainConfig`."""
    feeding = [name for name, kind in DECODERS.items() if kind.feeds_input]
    why = f"input feeding needs a decoder that feeds its output back ({', '.join(feeding)}), not {decoder}"
    require(not input_feeding or decoder in feeding, why)
