"""Greedy and beam-search translation: batched, under `torch.inference_mode`, stopping at `<eos>`."""

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


# --8<-- [start:beam]
@torch.inference_mode()
def beam_search_decode(
    model: Seq2Seq,
    source: torch.Tensor,
    lengths: torch.Tensor,
    beam_size: int = 5,
    max_length: int = MAX_LENGTH,
    length_penalty: float = 1.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Keep the `beam_size` most likely prefixes of every sentence, all sentences in one batch.

    At each step every live prefix is extended by every word; the `beam_size` best-scoring
    extensions that do not end in `<eos>` live on, and an extension that ends in `<eos>` and
    ranks among the `beam_size` best is a finished hypothesis. Hypotheses are compared by
    their log-probability divided by ``length ** length_penalty`` (length with `<eos>`), so
    that short translations are not preferred just because they multiply fewer
    probabilities. A sentence is done once it has `beam_size` finished hypotheses; one that
    has none after `max_length` steps takes its best live prefix. With ``beam_size=1`` this is
    exactly `greedy_decode`.

    Args:
        model: a trained `Seq2Seq` (in eval mode).
        source: (B, S) long, padded source indices.
        lengths: (B,) long, the real source lengths.
        beam_size: k, the prefixes kept per sentence.
        max_length: at most this many steps (`<eos>` included).
        length_penalty: alpha; 0 compares raw log-probabilities, 1 per-word averages.

    Shapes:
        tokens: (B, T) long, T <= max_length; each row ends at its `<eos>`, then `PAD_IDX`.
        scores: (B,) the chosen hypotheses' length-normalised log-probabilities.
    """
    sizes = check_tensor("source", source, ("B", "S"), dtype="long")
    if beam_size < 1 or max_length < 1:
        raise ValueError(f"beam_size and max_length must be at least 1, got {beam_size} and {max_length}")
    B, k, device = sizes["B"], beam_size, source.device
    encoder_outputs, hidden = model.encoder(source, lengths)  # (B, S, H), (1, B, H)
    positions = torch.arange(sizes["S"], device=device)  # (S,)
    source_mask = positions.unsqueeze(0) < lengths.to(device).unsqueeze(1)  # (B, S)
    encoder_outputs = encoder_outputs.repeat_interleave(k, dim=0)  # (B*k, S, H): k rows per sentence
    source_mask = source_mask.repeat_interleave(k, dim=0)  # (B*k, S)
    hidden = hidden.repeat_interleave(k, dim=1)  # (1, B*k, H)
    proj_keys = model.decoder.precompute(encoder_outputs)  # (B*k, S, H) or None
    scores = torch.full((B, k), float("-inf"), device=device)  # (B, k): log-probability of each prefix
    scores[:, 0] = 0.0  # one live prefix (<sos>) at the start
    prefixes = torch.empty(B, k, 0, dtype=torch.long, device=device)  # (B, k, t)
    decoder_input = torch.full((B * k, 1), SOS_IDX, dtype=torch.long, device=device)  # (B*k, 1)
    best = torch.full((B,), float("-inf"), device=device)  # (B,): best finished, normalised
    best_tokens = torch.full((B, max_length), PAD_IDX, dtype=torch.long, device=device)  # (B, max_length)
    best_length = torch.zeros(B, dtype=torch.long, device=device)  # (B,)
    n_finished = torch.zeros(B, dtype=torch.long, device=device)  # (B,)
    rank = torch.arange(2 * k, device=device).expand(B, 2 * k)  # (B, 2k)
    offsets = (torch.arange(B, device=device) * k).unsqueeze(1)  # (B, 1): first row of each sentence
    for t in range(max_length):
        logits, hidden, _ = model.decoder.forward_step(
            decoder_input, hidden, encoder_outputs, source_mask, proj_keys
        )  # (B*k, 1, V), (1, B*k, H)
        log_probs = torch.log_softmax(logits.squeeze(1), dim=-1).view(B, k, -1)  # (B, k, V)
        V = log_probs.size(-1)
        candidates = (scores.unsqueeze(2) + log_probs).view(B, k * V)  # (B, k*V)
        top_scores, top_index = candidates.topk(min(2 * k, k * V), dim=1)  # (B, 2k)
        top_beam, top_token = top_index // V, top_index % V  # (B, 2k) each
        top_prefixes = torch.cat(
            (prefixes.gather(1, top_beam.unsqueeze(2).expand(-1, -1, t)), top_token.unsqueeze(2)), dim=2
        )  # (B, 2k, t+1)
        # finished: <eos> among the k best, for sentences still searching
        is_eos = top_token == EOS_IDX  # (B, 2k)
        ends = is_eos & (rank[:, : is_eos.size(1)] < k) & torch.isfinite(top_scores) & (n_finished < k).unsqueeze(1)
        normalised = top_scores / float(t + 1) ** length_penalty  # (B, 2k)
        ending = normalised.masked_fill(~ends, float("-inf"))  # (B, 2k)
        candidate_best, which = ending.max(dim=1)  # (B,), (B,)
        better = candidate_best > best  # (B,)
        best = torch.where(better, candidate_best, best)  # (B,)
        chosen = top_prefixes[torch.arange(B, device=device), which]  # (B, t+1)
        best_tokens[better, : t + 1] = chosen[better]
        best_length[better] = t + 1
        n_finished = n_finished + ends.sum(dim=1)  # (B,)
        if bool((n_finished >= k).all()):
            break
        # live: the k best extensions that do not end in <eos>
        live_scores, live = top_scores.masked_fill(is_eos, float("-inf")).topk(k, dim=1)  # (B, k)
        scores = live_scores  # (B, k)
        prefixes = top_prefixes.gather(1, live.unsqueeze(2).expand(-1, -1, t + 1))  # (B, k, t+1)
        origin = (offsets + top_beam.gather(1, live)).flatten()  # (B*k,): the row each new prefix extends
        hidden = hidden.index_select(1, origin)  # (1, B*k, H)
        decoder_input = top_token.gather(1, live).reshape(B * k, 1)  # (B*k, 1)
    unfinished = n_finished == 0  # (B,): take the best live prefix
    if bool(unfinished.any()):
        steps = prefixes.size(2)
        best[unfinished] = scores[unfinished, 0] / float(max(steps, 1)) ** length_penalty
        best_tokens[unfinished, :steps] = prefixes[unfinished, 0]
        best_length[unfinished] = steps
    return best_tokens[:, : int(best_length.max())], best


# --8<-- [end:beam]


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
    beam_size: int = 1,
    length_penalty: float = 1.0,
) -> list[str]:
    """Translate French sentences to English with greedy decoding or beam search, in batches.

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
        beam_size: 1 decodes greedily (`greedy_decode`), more runs `beam_search_decode`.
        length_penalty: beam search's alpha (see `beam_search_decode`).

    Returns:
        One normalised English sentence per input, without `<eos>`.

    Raises:
        UserError: see `prepare_sentences`.
    """
    if beam_size < 1:
        raise UserError(f"beam_size must be at least 1, got {beam_size}")
    encoded = prepare_sentences(vocabs, sentences, max_words, unknown)
    model.eval()
    device = next(model.parameters()).device
    translations = []
    for start in range(0, len(encoded), batch_size):
        chunk = encoded[start : start + batch_size]
        batch = collate([(src, [EOS_IDX]) for src in chunk]).to(device)
        if beam_size > 1:
            tokens, _ = beam_search_decode(model, batch.source, batch.lengths, beam_size, max_length, length_penalty)
        else:
            tokens, _ = greedy_decode(model, batch.source, batch.lengths, max_length)  # (B, T)
        translations.extend(vocabs.target.decode(row) for row in tokens.tolist())
    return translations
