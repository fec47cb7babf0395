"""The whole translator: an encoder and a decoder, chosen by name from one registry."""

import inspect

import torch
from torch import nn

from ..core.batching import lengths_to_mask
from ..core.checks import check_parameter_budget, check_tensor
from ..core.errors import InputError, echo
from .decoders import DECODER_SCORES, MAX_LENGTH, AttnDecoderRNN, DecoderRNN, LuongAttnDecoderRNN, StepDecoder
from .encoder import EncoderRNN

DECODERS: dict[str, type[StepDecoder]] = {
    "gru": DecoderRNN,
    "bahdanau": AttnDecoderRNN,
    "luong": LuongAttnDecoderRNN,
}
"""Decoder classes by name. A decoder registered here (and in `DECODER_SCORES`) is buildable by
`build_model`, trainable by `train`, storable in a checkpoint and selectable with
`seq2seq-attention train --decoder`."""

MAX_SIZE = 1 << 20
"""The largest hidden or vocabulary size `build_model` accepts (a checkpoint cannot ask for more)."""


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

    # --8<-- [start:encode]
    def encode(
        self, source: torch.Tensor, lengths: torch.Tensor, source_mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Run the encoder; returns its outputs (B, S, H), its last state (1, B, H) and the mask (B, S).

        The encoder checks `source` and `lengths`; `lengths` is required here, since the mask comes from it.
        """
        sizes = check_tensor("source", source, ("B", "S"), dtype="long")
        check_tensor("lengths", lengths, (sizes["B"],), dtype="long")
        encoder_outputs, encoder_hidden = self.encoder(source, lengths)  # (B, S, H), (1, B, H)
        if source_mask is None:
            source_mask = lengths_to_mask(lengths.to(source.device), sizes["S"])  # (B, S)
        return encoder_outputs, encoder_hidden, source_mask

    # --8<-- [end:encode]

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
        log_probs, _, attentions = self.decoder(
            encoder_outputs,
            encoder_hidden,  # the context vector: the decoder's first state
            target,
            source_mask,
            max_length=max_length,
            teacher_forcing_ratio=teacher_forcing_ratio,
            coin_per_step=coin_per_step,
        )  # (B, T, V), (B, T, S) or None
        return log_probs, attentions

    # --8<-- [end:forward]

    def training_log_probs(
        self,
        source: torch.Tensor,
        lengths: torch.Tensor,
        target: torch.Tensor,
        source_mask: torch.Tensor | None = None,
        teacher_forcing_ratio: float = 1.0,
        coin_per_step: bool = False,
    ) -> torch.Tensor:
        """The training forward pass: (B, T, V) log-probabilities of `target`.

        Pure teacher forcing asks the decoder (`StepDecoder.teacher_forced`, which the Bahdanau
        decoder computes with fewer, larger operations); a mix of teacher forcing and free
        running goes through the loop.
        """
        encoder_outputs, encoder_hidden, source_mask = self.encode(source, lengths, source_mask)
        if teacher_forcing_ratio == 1.0:
            return self.decoder.teacher_forced(encoder_outputs, encoder_hidden, target, source_mask)  # (B, T, V)
        log_probs, _, _ = self.decoder(
            encoder_outputs,
            encoder_hidden,
            target,
            source_mask,
            teacher_forcing_ratio=teacher_forcing_ratio,
            coin_per_step=coin_per_step,
        )  # (B, T, V)
        return log_probs


# --8<-- [start:build_model]
def build_model(
    decoder: str,
    src_vocab_size: int,
    tgt_vocab_size: int,
    hidden_size: int = 256,
    dropout: float = 0.1,
    score: str | None = None,
) -> Seq2Seq:
    """Build a `Seq2Seq` with the named decoder from `DECODERS`.

    Args:
        decoder: a key of `DECODERS`, e.g. ``"gru"`` or ``"bahdanau"``.
        src_vocab_size: V_src, the source vocabulary size.
        tgt_vocab_size: V, the target vocabulary size.
        hidden_size: H, for the embeddings and both GRUs.
        dropout: dropout on the embeddings (for decoders that take `dropout_p`).
        score: the attention's score function, one of `DECODER_SCORES[decoder]`; None picks
            the decoder's default (the first), and must stay None for a decoder without attention.

    Raises:
        InputError: an unknown decoder or score, a size outside [1, 2^20] or a dropout outside [0, 1).
    """
    if not isinstance(decoder, str) or decoder not in DECODERS:
        raise InputError(f"unknown decoder {echo(decoder)}; choose one of {', '.join(sorted(DECODERS))}")
    allowed = DECODER_SCORES[decoder]
    if score is None:
        score = allowed[0] if allowed else None
    elif score not in allowed:
        choices = f"one of {', '.join(allowed)}" if allowed else "none (it has no attention)"
        raise InputError(f"score {echo(score)} does not fit the {decoder} decoder; expected {choices}")
    sizes = {"src_vocab_size": src_vocab_size, "tgt_vocab_size": tgt_vocab_size, "hidden_size": hidden_size}
    for name, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SIZE:
            raise InputError(f"{name} must be an int in [1, {MAX_SIZE}], got {echo(value)}")
    if isinstance(dropout, bool) or not isinstance(dropout, int | float) or not 0.0 <= dropout < 1.0:
        raise InputError(f"dropout must be a number in [0, 1), got {echo(dropout)}")
    H = hidden_size
    check_parameter_budget(f"a {decoder} translator", H * (src_vocab_size + 2 * tgt_vocab_size) + 24 * H * H)
    decoder_class = DECODERS[decoder]
    options = inspect.signature(decoder_class).parameters
    extra = {"dropout_p": dropout} if "dropout_p" in options else {}
    if score is not None:
        extra["score"] = score
    encoder = EncoderRNN(src_vocab_size, hidden_size, dropout_p=dropout)
    model = Seq2Seq(encoder, decoder_class(hidden_size, tgt_vocab_size, **extra))
    model.config = {
        "task": "translation",
        "decoder": decoder,
        "score": score,
        "src_vocab_size": src_vocab_size,
        "tgt_vocab_size": tgt_vocab_size,
        "hidden_size": hidden_size,
        "dropout": dropout,
    }  # what a checkpoint saves to rebuild the model
    return model


# --8<-- [end:build_model]
