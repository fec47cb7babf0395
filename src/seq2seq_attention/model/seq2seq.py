"""The whole translator: an encoder and a decoder, chosen by name from one registry.

`Seq2Seq.forward` trains through the decoder's loop when it has a target, and decodes greedily
through the search loop (`search.greedy_search`) when it has none: the model drives the search,
the decoders know nothing of it.
"""

import torch.nn.functional as F
from jaxtyping import Bool, Float, Int64
from torch import Tensor, nn

from .decoders import DECODERS, StepDecoder, check_input_feeding, choose_score
from .defaults import DROPOUT, HIDDEN_SIZE
from .encoder import EncoderRNN
from .rules import check_parameter_budget, require
from .search import MAX_LENGTH, Steps, greedy_search
from .tensors import Dropout, Probability, Size, annotations_checked, lengths_to_mask


class Seq2Seq(nn.Module):
    """Encoder + decoder. The encoder's last state is the decoder's first state.

    Args:
        encoder: an `EncoderRNN`.
        decoder: any `StepDecoder` (see `DECODERS`).

    `forward` takes the source padded with `PAD_IDX`, its real lengths and, for teacher forcing, a
    target ending in `<eos>`; the mask is made from the lengths when not given. Without a target
    it decodes `max_length` steps at most; the attentions are None for a decoder without attention.
    """

    def __init__(self, encoder: EncoderRNN, decoder: StepDecoder) -> None:
        super().__init__()
        sizes = encoder.hidden_size, decoder.hidden_size
        require(sizes[0] == sizes[1], f"encoder and decoder must share H, got {sizes[0]} and {sizes[1]}")
        self.encoder = encoder
        self.decoder = decoder
        self.config: dict = {}  # set by `build_model`: what a checkpoint saves to rebuild the model

    @property
    def vocabulary_sizes(self) -> dict[str, int]:
        """The vocabulary sizes the model was built for, by side (checked against a checkpoint's vocabularies)."""
        return {"source": self.encoder.embedding.num_embeddings, "target": self.decoder.output_size}

    @annotations_checked
    # --8<-- [start:encode]
    def encode(
        self, source: Int64[Tensor, "B S"], lengths: Int64[Tensor, " B"], source_mask: Bool[Tensor, "B S"] | None = None
    ) -> tuple[Float[Tensor, "B S H"], Float[Tensor, "1 B H"], Bool[Tensor, "B S"]]:
        """Run the encoder; returns its outputs, its last state and the mask (`lengths` is required: the mask comes
        from it)."""
        encoder_outputs, encoder_hidden = self.encoder(source, lengths)  # (B, S, H), (1, B, H)
        if source_mask is None:
            source_mask = lengths_to_mask(lengths.to(source.device), source.size(1))  # (B, S)
        return encoder_outputs, encoder_hidden, source_mask

    # --8<-- [end:encode]

    @annotations_checked
    # --8<-- [start:forward]
    def forward(
        self,
        source: Int64[Tensor, "B S"],
        lengths: Int64[Tensor, " B"],
        target: Int64[Tensor, "B T"] | None = None,
        max_length: Steps = MAX_LENGTH,
        teacher_forcing_ratio: Probability = 1.0,
        coin_per_step: bool = False,
        source_mask: Bool[Tensor, "B S"] | None = None,
    ) -> tuple[Float[Tensor, "B T2 V"], Float[Tensor, "B T2 S"] | None]:
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


@annotations_checked
def build_model(
    decoder: str,
    src_vocab_size: Size,
    tgt_vocab_size: Size,
    hidden_size: Size = HIDDEN_SIZE,
    dropout: Dropout = DROPOUT,
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
    check_input_feeding(decoder, input_feeding)
    H, S, T = hidden_size, src_vocab_size, tgt_vocab_size
    check_parameter_budget(f"a {decoder} translator", H * (S + 2 * T + 24 * H))
    # --8<-- [start:build_model]
    score = choose_score(decoder, score)  # None: the decoder's default
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
