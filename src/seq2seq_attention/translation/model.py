"""The whole translator: an encoder and a decoder, chosen by name from one registry.

`Seq2Seq.forward` trains through the decoder's loop when it has a target, and decodes greedily
through the search loop (`search.greedy_search`) when it has none: the model drives the search,
the decoders know nothing of it.
"""

import torch
import torch.nn.functional as F
from torch import nn

from ..core.batching import lengths_to_mask
from ..core.checkpoint import register_task
from ..core.checks import (
    Call,
    check_dropout,
    check_parameter_budget,
    check_same_device,
    check_size,
    check_tensor,
    check_tokens,
    checked,
)
from ..core.errors import InputError, echo
from .decoders import DECODERS, StepDecoder, check_input_feeding, check_score, check_target, choose_score
from .defaults import DROPOUT, HIDDEN_SIZE
from .encoder import EncoderRNN, check_bidirectional
from .search import MAX_LENGTH, check_steps, greedy_search


class Seq2Seq(nn.Module):
    """Encoder + decoder. The encoder's last state is the decoder's first state.

    Args:
        encoder: an `EncoderRNN`.
        decoder: any `StepDecoder` (see `DECODERS`).

    Shapes:
        source: (B, S) long, padded with `PAD_IDX`.
        lengths: (B,) long, the real source lengths.
        target: (B, T) long, ends in `<eos>`, padded; optional (teacher forcing when given).
        source_mask: (B, S) bool, the batch's padding mask; made from `lengths` when not given.
        log_probs: (B, T, V) (T = `max_length` without a target).
        attentions: (B, T, S), or None for a decoder without attention.
    """

    def __init__(self, encoder: EncoderRNN, decoder: StepDecoder) -> None:
        super().__init__()
        if encoder.hidden_size != decoder.hidden_size:
            raise InputError(f"encoder and decoder must share H, got {encoder.hidden_size} and {decoder.hidden_size}")
        self.encoder = encoder
        self.decoder = decoder
        self.config: dict = {}  # set by `build_model`: what a checkpoint saves to rebuild the model

    @property
    def vocabulary_sizes(self) -> dict[str, int]:
        """The vocabulary sizes the model was built for, by side (checked against a checkpoint's vocabularies)."""
        return {"source": self.encoder.embedding.num_embeddings, "target": self.decoder.output_size}

    def _check_encode(self, call: Call) -> dict[str, int]:
        """`source` (B, S) and `lengths` (B,) as the encoder reads them, and the mask when given."""
        source, lengths, source_mask = call.source, call.lengths, call.source_mask
        sizes = check_tensor("source", source, ("B", "S"), dtype="long")
        check_tensor("lengths", lengths, (sizes["B"],), dtype="long")
        check_tokens(self.encoder, source, lengths, self.encoder.embedding.num_embeddings)
        if source_mask is not None:
            check_tensor("source_mask", source_mask, ("B", "S"), sizes, dtype="bool")
            check_same_device(source=source, source_mask=source_mask)
        return sizes

    @checked("_check_encode")
    # --8<-- [start:encode]
    def encode(
        self, source: torch.Tensor, lengths: torch.Tensor, source_mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Run the encoder; returns its outputs (B, S, H), its last state (1, B, H) and the mask (B, S).

        `lengths` is required here, since the mask comes from it.
        """
        encoder_outputs, encoder_hidden = self.encoder(source, lengths)  # (B, S, H), (1, B, H)
        if source_mask is None:
            source_mask = lengths_to_mask(lengths.to(source.device), source.size(1))  # (B, S)
        return encoder_outputs, encoder_hidden, source_mask

    # --8<-- [end:encode]

    def _check_forward(self, call: Call) -> None:
        """`forward`'s arguments: those of `encode`, then the target (or, without one, `max_length`) and the ratio."""
        sizes = self._check_encode(call)
        if call.target is None:
            check_steps(call.max_length)
        check_target(self.decoder.output_size, sizes, call.target, call.teacher_forcing_ratio)
        if call.target is not None:
            check_same_device(source=call.source, target=call.target)

    @checked("_check_forward")
    # --8<-- [start:forward]
    def forward(
        self,
        source: torch.Tensor,
        lengths: torch.Tensor,
        target: torch.Tensor | None = None,
        max_length: int = MAX_LENGTH,
        teacher_forcing_ratio: float = 1.0,
        coin_per_step: bool = False,
        source_mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        encoder_outputs, encoder_hidden, source_mask = self.encode(source, lengths, source_mask)
        if target is None:  # nothing to learn from: decode greedily (the one free-running loop, `search.py`)
            state = self.decoder.init_state(encoder_outputs, encoder_hidden, source_mask)  # keys projected once
            _, logits, attentions, _ = greedy_search(
                self.decoder.forward_step, state, max_length
            )  # (B, T, V), (B, T, S) or None
            return F.log_softmax(logits, dim=-1), attentions  # (B, T, V), (B, T, S) or None
        log_probs, _, attentions = self.decoder(
            encoder_outputs,
            encoder_hidden,  # the context vector: the decoder's first state
            target,
            source_mask,
            teacher_forcing_ratio=teacher_forcing_ratio,
            coin_per_step=coin_per_step,
        )  # (B, T, V), (B, T, S) or None
        return log_probs, attentions

    # --8<-- [end:forward]


def _check_build(call: Call) -> None:
    """`build_model`'s arguments: the decoder and score first, then each value's type and range, then the rules
    between them (an even H for a bidirectional encoder, input feeding for a feeding decoder)."""
    check_score(call.decoder, call.score)  # validated here; `build_model` resolves it, once
    for name in ("src_vocab_size", "tgt_vocab_size", "hidden_size"):
        check_size(name, call[name])
    check_dropout("dropout", call.dropout)
    check_architecture(call.decoder, call.hidden_size, call.bidirectional, call.tie_embeddings, call.input_feeding)
    H, S, T = call.hidden_size, call.src_vocab_size, call.tgt_vocab_size
    check_parameter_budget(f"a {call.decoder} translator", H * (S + 2 * T) + 24 * H * H)


@checked(_check_build)
# --8<-- [start:build_model]
def build_model(
    decoder: str,
    src_vocab_size: int,
    tgt_vocab_size: int,
    hidden_size: int = HIDDEN_SIZE,
    dropout: float = DROPOUT,
    score: str | None = None,
    *,
    bidirectional: bool = False,
    tie_embeddings: bool = False,
    input_feeding: bool = False,
) -> Seq2Seq:
    """Build a `Seq2Seq` with the named decoder of the table `DECODERS`.

    Args:
        decoder: a key of `DECODERS`, e.g. ``"gru"`` or ``"bahdanau"``.
        src_vocab_size: V_src, the source vocabulary size.
        tgt_vocab_size: V, the target vocabulary size.
        hidden_size: H, for the embeddings and both GRUs.
        dropout: dropout on the embeddings.
        score: the attention's score function, one of `DECODERS[decoder].scores`; None picks
            the decoder's default (the first), and must stay None for a decoder without attention.
        bidirectional: a bidirectional encoder (two GRUs of H/2, see `EncoderRNN`). This and the
            next two switches are keyword-only and off by default: a checkpoint saved before they
            existed lacks them and is rebuilt with them off, the model it was.
        tie_embeddings: the output layer shares its (V, H) weight with the target embedding.
        input_feeding: Luong's input feeding (the luong decoder only).

    Raises:
        InputError: an unknown decoder or score, a size outside [1, 2^20], a dropout outside [0, 1),
            an odd H for a bidirectional encoder, or input feeding for a decoder that cannot feed.
    """
    score = choose_score(decoder, score)  # None: the decoder's default, the first of its scores
    encoder = EncoderRNN(src_vocab_size, hidden_size, dropout, bidirectional)
    kind = DECODERS[decoder]
    options = {"dropout_p": dropout, "score": score, "input_feeding": input_feeding}
    taken = {name: options[name] for name in kind.options}  # each decoder gets only what it takes
    model = Seq2Seq(encoder, kind.decoder(hidden_size, tgt_vocab_size, **taken))
    if tie_embeddings:
        model.decoder.out.weight = model.decoder.embedding.weight  # (V, H): one matrix reads and writes words
    model.config = {
        "task": "translation",
        "decoder": decoder,
        "score": score,
        "src_vocab_size": src_vocab_size,
        "tgt_vocab_size": tgt_vocab_size,
        "hidden_size": hidden_size,
        "dropout": dropout,
        "bidirectional": bidirectional,
        "tie_embeddings": tie_embeddings,
        "input_feeding": input_feeding,
    }  # what a checkpoint saves to rebuild the model
    return model


# --8<-- [end:build_model]


def check_architecture(
    decoder: str, hidden_size: int, bidirectional: bool, tie_embeddings: bool, input_feeding: bool
) -> None:
    """Check the architecture switches: booleans, then (H an int first) an even H for a bidirectional encoder,
    and input feeding for a decoder that feeds its output back. `decoder` is a key of `DECODERS`.

    Raises:
        InputError: what does not fit, with what was expected.
    """
    switches = {"bidirectional": bidirectional, "tie_embeddings": tie_embeddings, "input_feeding": input_feeding}
    for name, value in switches.items():
        if not isinstance(value, bool):
            raise InputError(f"{name} must be True or False, got {echo(value)}")
    check_size("hidden_size", hidden_size)
    check_bidirectional(hidden_size, bidirectional)
    check_input_feeding(decoder, input_feeding)


register_task("translation", build_model, "a translator")
