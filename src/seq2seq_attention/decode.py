"""Greedy translation: batched, under `torch.inference_mode`, stopping at `<eos>`."""

import unicodedata
from collections.abc import Sequence

import torch

from .checks import check_tensor
from .data import MAX_WORDS, Vocabularies, collate, normalize_string
from .decoder import MAX_LENGTH
from .errors import UserError
from .models import Seq2Seq
from .tokens import EOS_IDX, PAD_IDX, SOS_IDX


# --8<-- [start:greedy]
@torch.inference_mode()
def greedy_decode(
    model: Seq2Seq, source: torch.Tensor, lengths: torch.Tensor, max_length: int = MAX_LENGTH
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Feed each step's most likely word back in, until every sentence has said `<eos>`.

    Args:
        model: a trained `Seq2Seq` (call `model.eval()` first: dropout stays on otherwise).
        source: (B, S) long, padded source indices.
        lengths: (B,) long, the real source lengths.
        max_length: at most this many steps (`<eos>` included).

    Shapes:
        tokens: (B, T) long, T <= max_length; each row ends at its first `<eos>`, then `PAD_IDX`.
        attentions: (B, T, S) attention weights, or None for a decoder without attention.
    """
    sizes = check_tensor("source", source, ("B", "S"), dtype="long")
    if max_length < 1:
        raise ValueError(f"max_length must be at least 1, got {max_length}")
    encoder_outputs, hidden = model.encoder(source, lengths)  # (B, S, H), (1, B, H)
    positions = torch.arange(sizes["S"], device=source.device)  # (S,)
    source_mask = positions.unsqueeze(0) < lengths.to(source.device).unsqueeze(1)  # (B, S)
    proj_keys = model.decoder.precompute(encoder_outputs)  # (B, S, H) or None
    decoder_input = torch.full((sizes["B"], 1), SOS_IDX, dtype=torch.long, device=source.device)  # (B, 1)
    finished = torch.zeros(sizes["B"], 1, dtype=torch.bool, device=source.device)  # (B, 1)
    tokens, attentions = [], []
    for _ in range(max_length):
        logits, hidden, weights = model.decoder.forward_step(
            decoder_input, hidden, encoder_outputs, source_mask, proj_keys
        )  # (B, 1, V), (1, B, H), (B, 1, S) or None
        prediction = logits.argmax(dim=-1).masked_fill(finished, PAD_IDX)  # (B, 1): PAD once finished
        tokens.append(prediction)
        attentions.append(weights)
        finished = finished | (prediction == EOS_IDX)  # (B, 1)
        if bool(finished.all()):
            break
        decoder_input = prediction  # (B, 1): our own guess is the next input
    tokens = torch.cat(tokens, dim=1)  # (B, T)
    attentions = None if attentions[0] is None else torch.cat(attentions, dim=1)  # (B, T, S)
    return tokens, attentions


# --8<-- [end:greedy]


def prepare_sentences(
    vocabs: Vocabularies, sentences: Sequence[str], max_words: int = MAX_WORDS, unknown: str = "error"
) -> list[list[int]]:
    """Normalise and encode French sentences, with a clear error for each kind of bad input.

    Raises:
        UserError: no sentences, an empty or whitespace-only sentence, letters outside the
            Latin alphabet, a sentence of more than `max_words` words, or (with
            `unknown="error"`) a word outside the vocabulary.
    """
    if isinstance(sentences, str):
        raise UserError("translate takes a list of sentences, got one string; wrap it in a list")
    if len(sentences) == 0:
        raise UserError("no sentences to translate")
    encoded = []
    for number, sentence in enumerate(sentences, start=1):
        if not isinstance(sentence, str):
            raise UserError(f"sentence {number} must be a string, got {type(sentence).__name__}")
        if any("\udc80" <= c <= "\udcff" for c in sentence):
            raise UserError(f"sentence {number} is not valid UTF-8 text: {sentence!r}")
        foreign = sorted({c for c in sentence if c.isalpha() and not unicodedata.name(c, "").startswith("LATIN ")})
        if foreign:
            raise UserError(
                f"sentence {number} has letters outside the Latin alphabet ({''.join(foreign)}) in {sentence!r}; "
                "the model reads French"
            )
        normalized = normalize_string(sentence).strip()
        if not normalized:
            raise UserError(f"sentence {number} is empty after normalisation: {sentence!r}")
        words = normalized.split()
        if len(words) > max_words:
            raise UserError(
                f"sentence {number} has {len(words)} words after normalisation ({normalized!r}); "
                f"the model was trained on at most {max_words}"
            )
        encoded.append(vocabs.source.encode(" ".join(words), unknown=unknown))
    return encoded


def translate(
    model: Seq2Seq,
    vocabs: Vocabularies,
    sentences: Sequence[str],
    *,
    max_words: int = MAX_WORDS,
    max_length: int = MAX_LENGTH,
    unknown: str = "error",
    batch_size: int = 256,
) -> list[str]:
    """Translate French sentences to English with greedy decoding, in batches.

    Each sentence is normalised as the training data were (so ``"Je suis fatigué."`` works),
    encoded, and decoded until `<eos>` or `max_length` words. The model is put in eval mode.

    Args:
        model: a trained `Seq2Seq`.
        vocabs: its vocabularies.
        sentences: French sentences.
        max_words: the longest sentence accepted (the training filter's limit).
        max_length: the most words (with `<eos>`) produced per sentence.
        unknown: ``"error"`` rejects a word outside the vocabulary, ``"unk"`` reads it as `<unk>`.
        batch_size: sentences per forward pass.

    Returns:
        One normalised English sentence per input, without `<eos>`.

    Raises:
        UserError: see `prepare_sentences`.
    """
    encoded = prepare_sentences(vocabs, sentences, max_words, unknown)
    model.eval()
    device = next(model.parameters()).device
    translations = []
    for start in range(0, len(encoded), batch_size):
        chunk = encoded[start : start + batch_size]
        batch = collate([(src, [EOS_IDX]) for src in chunk]).to(device)
        tokens, _ = greedy_decode(model, batch.source, batch.lengths, max_length)  # (B, T)
        translations.extend(vocabs.target.decode(row) for row in tokens.tolist())
    return translations
