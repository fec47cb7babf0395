"""The whole translator: an encoder and a decoder, chosen by name from one registry."""

import inspect

import torch
from torch import nn

from .checks import check_tensor
from .decoder import MAX_LENGTH, AttnDecoderRNN, DecoderRNN, LuongAttnDecoderRNN, StepDecoder
from .encoder import EncoderRNN

DECODERS: dict[str, type[StepDecoder]] = {
    "gru": DecoderRNN,
    "bahdanau": AttnDecoderRNN,
    "luong": LuongAttnDecoderRNN,
}
"""Decoder classes by name. A decoder registered here is buildable by `build_model`, trainable
by `train`, storable by `checkpoint` and selectable with `seq2seq-attention train --decoder`.
Its constructor takes ``(hidden_size, output_size)`` and, optionally, ``dropout_p``."""


class Seq2Seq(nn.Module):
    """Encoder + decoder. The encoder's last state is the decoder's first state.

    Args:
        encoder: an `EncoderRNN`.
        decoder: any `StepDecoder` (see `DECODERS`).

    Shapes:
        source: (B, S) long, padded with `PAD_IDX`.
        lengths: (B,) long, the real source lengths.
        target: (B, T) long, ends in `<eos>`, padded; optional (teacher forcing when given).
        log_probs: (B, T, V) (T = `max_length` without a target).
        attentions: (B, T, S), or None for a decoder without attention.
    """

    def __init__(self, encoder: EncoderRNN, decoder: StepDecoder) -> None:
        super().__init__()
        if encoder.hidden_size != decoder.hidden_size:
            raise ValueError(f"encoder and decoder must share H, got {encoder.hidden_size} and {decoder.hidden_size}")
        self.encoder = encoder
        self.decoder = decoder
        self.config: dict | None = None  # set by `build_model`

    # --8<-- [start:forward]
    def forward(
        self,
        source: torch.Tensor,
        lengths: torch.Tensor,
        target: torch.Tensor | None = None,
        max_length: int = MAX_LENGTH,
        teacher_forcing_ratio: float = 1.0,
        coin_per_step: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        sizes = check_tensor("source", source, ("B", "S"), dtype="long")
        check_tensor("lengths", lengths, (sizes["B"],), dtype="long")
        encoder_outputs, encoder_hidden = self.encoder(source, lengths)  # (B, S, H), (1, B, H)
        positions = torch.arange(source.size(1), device=source.device)  # (S,)
        source_mask = positions.unsqueeze(0) < lengths.to(source.device).unsqueeze(1)  # (B, S)
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


# --8<-- [start:build_model]
def build_model(
    decoder: str,
    src_vocab_size: int,
    tgt_vocab_size: int,
    hidden_size: int = 256,
    dropout: float = 0.1,
) -> Seq2Seq:
    """Build a `Seq2Seq` with the named decoder from `DECODERS`.

    Args:
        decoder: a key of `DECODERS`, e.g. ``"gru"`` or ``"bahdanau"``.
        src_vocab_size: V_src, the source vocabulary size.
        tgt_vocab_size: V, the target vocabulary size.
        hidden_size: H, for the embeddings and both GRUs.
        dropout: dropout on the embeddings (for decoders that take `dropout_p`).

    Raises:
        ValueError: an unknown decoder name, a non-positive size or a dropout outside [0, 1).
    """
    if decoder not in DECODERS:
        raise ValueError(f"unknown decoder {decoder!r}; choose one of {', '.join(sorted(DECODERS))}")
    for name, value in (("src_vocab_size", src_vocab_size), ("tgt_vocab_size", tgt_vocab_size)):
        if value < 1:
            raise ValueError(f"{name} must be positive, got {value}")
    if hidden_size < 1:
        raise ValueError(f"hidden_size must be positive, got {hidden_size}")
    if not 0.0 <= dropout < 1.0:
        raise ValueError(f"dropout must lie in [0, 1), got {dropout}")
    decoder_class = DECODERS[decoder]
    extra = {"dropout_p": dropout} if "dropout_p" in inspect.signature(decoder_class).parameters else {}
    encoder = EncoderRNN(src_vocab_size, hidden_size, dropout_p=dropout)
    model = Seq2Seq(encoder, decoder_class(hidden_size, tgt_vocab_size, **extra))
    model.config = {
        "decoder": decoder,
        "src_vocab_size": src_vocab_size,
        "tgt_vocab_size": tgt_vocab_size,
        "hidden_size": hidden_size,
        "dropout": dropout,
    }  # what `checkpoint` saves to rebuild the model
    return model


# --8<-- [end:build_model]
