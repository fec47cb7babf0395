"""Greedy and beam-search translation: batched, under `torch.inference_mode`, stopping at `<eos>`."""

import math
import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import torch

from ..core.batching import collate
from ..core.checks import check_tensor, is_int, is_number
from ..core.errors import InputError, echo
from ..core.tokens import EOS_IDX, PAD_IDX, SOS_IDX
from ..core.vocabulary import Vocabularies
from .corpus import MAX_WORDS, normalize_string

if TYPE_CHECKING:
    from .decoders import DecoderState
    from .model import Seq2Seq

MAX_LENGTH = 10
"""Steps decoded without a target (the tutorial's `MAX_LENGTH`: 6 words, punctuation, `<eos>`, slack)."""


def _check_length_penalty(length_penalty: object) -> None:
    if not is_number(length_penalty):
        raise InputError(f"length_penalty must be a number, got {echo(length_penalty)}")
    if not math.isfinite(length_penalty) or abs(length_penalty) > 100:
        raise InputError(f"length_penalty must be a finite number in [-100, 100], got {length_penalty}")


def _check_search(
    source: object, max_length: object, beam_size: object = 1, length_penalty: object = 1.0
) -> dict[str, int]:
    sizes = check_tensor("source", source, ("B", "S"), dtype="long")
    _check_length_penalty(length_penalty)
    for name, value in (("max_length", max_length), ("beam_size", beam_size)):
        if not is_int(value) or value < 1:
            raise InputError(f"{name} must be an int of at least 1, got {echo(value)}")
    if max_length > MAX_STEPS:
        raise InputError(f"max_length must be at most {MAX_STEPS}, got {max_length}")
    if sizes["B"] == 0:
        raise InputError("source must hold at least one sentence, got B=0")
    return sizes


MAX_STEPS = 1000
"""The most steps a search takes (`max_length`); the training sentences have at most 7 tokens."""


class Step(Protocol):
    """The decoder's step interface: `forward_step` of a `StepDecoder`, or of the exported graphs' adapter."""

    def __call__(
        self, input: torch.Tensor, state: "DecoderState"
    ) -> tuple[torch.Tensor, "DecoderState", torch.Tensor | None]: ...


def _check_prefix(prefix: object, batch_size: int, max_length: int) -> None:
    if prefix is None:
        return
    sizes = check_tensor("prefix", prefix, ("B", "P"), {"B": batch_size}, dtype="long")
    if sizes["P"] > max_length:
        raise InputError(f"prefix must have at most max_length={max_length} words, got P={sizes['P']}")


# --8<-- [start:greedy_search]
def greedy_search(
    step: Step, state: "DecoderState", max_length: int = MAX_LENGTH, prefix: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None, "DecoderState"]:
    """Feed each step's most likely word back in, until every sentence has said `<eos>`.

    The one free-running loop of the package: `greedy_decode`, a decoder called without a
    target and the exported graphs all decode through it. With a `prefix`, its P words are
    the first P outputs whatever the model prefers (teacher forcing by hand, as on the live
    page), and the model continues greedily from there.

    Shapes:
        state: a `DecoderState` of B sentences (`init_state`).
        prefix: (B, P) long, P <= max_length, the forced first words; optional.
        tokens: (B, T) long, T <= max_length; each row ends at its first `<eos>`, then `PAD_IDX`.
        logits: (B, T, V), the logits of every step.
        attentions: (B, T, S), or None for a decoder without attention.
    """
    batch_size, device = state.keys.size(0), state.keys.device
    _check_prefix(prefix, batch_size, max_length)
    forced = 0 if prefix is None else prefix.size(1)  # P
    decoder_input = torch.full((batch_size, 1), SOS_IDX, dtype=torch.long, device=device)  # (B, 1)
    finished = torch.zeros(batch_size, 1, dtype=torch.bool, device=device)  # (B, 1)
    tokens, logits, attentions = [], [], []
    for t in range(max_length):
        step_logits, state, weights = step(decoder_input, state)  # (B, 1, V), (B, 1, S) or None
        choice = prefix[:, t : t + 1] if t < forced else step_logits.argmax(dim=-1)  # (B, 1): forced or the best
        prediction = choice.masked_fill(finished, PAD_IDX)  # (B, 1): PAD once finished
        tokens.append(prediction)
        logits.append(step_logits)
        attentions.append(weights)
        finished = finished | (prediction == EOS_IDX)  # (B, 1)
        if bool(finished.all()):
            break
        decoder_input = prediction  # (B, 1): our own guess is the next input
    tokens = torch.cat(tokens, dim=1)  # (B, T)
    logits = torch.cat(logits, dim=1)  # (B, T, V)
    attentions = None if attentions[0] is None else torch.cat(attentions, dim=1)  # (B, T, S)
    return tokens, logits, attentions, state


# --8<-- [end:greedy_search]


# --8<-- [start:beam_search]
def beam_search(
    step: Step,
    state: "DecoderState",
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
    exactly `greedy_search`.

    Shapes:
        state: a `DecoderState` of B sentences (`init_state`).
        tokens: (B, T) long, T <= max_length; each row ends at its `<eos>`, then `PAD_IDX`.
        scores: (B,) the chosen hypotheses' length-normalised log-probabilities.
    """
    B, k, device = state.keys.size(0), beam_size, state.keys.device
    state = state.select(torch.arange(B, device=device).repeat_interleave(k))  # (B*k) rows: k per sentence
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
        logits, state, _ = step(decoder_input, state)  # (B*k, 1, V)
        log_probs = torch.log_softmax(logits.squeeze(1), dim=-1).view(B, k, -1)  # (B, k, V)
        V = log_probs.size(-1)
        candidates = (scores.unsqueeze(2) + log_probs).view(B, k * V)  # (B, k*V)
        top_scores, top_index = candidates.topk(min(2 * k, k * V), dim=1)  # (B, 2k) each
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
        live_scores, live = top_scores.masked_fill(is_eos, float("-inf")).topk(k, dim=1)  # (B, k) each
        scores = live_scores  # (B, k)
        prefixes = top_prefixes.gather(1, live.unsqueeze(2).expand(-1, -1, t + 1))  # (B, k, t+1)
        origin = (offsets + top_beam.gather(1, live)).flatten()  # (B*k,): the row each new prefix extends
        state = state.select(origin)  # (B*k) rows, reordered
        decoder_input = top_token.gather(1, live).reshape(B * k, 1)  # (B*k, 1)
    unfinished = n_finished == 0  # (B,): take the best live prefix
    if bool(unfinished.any()):
        steps = prefixes.size(2)
        best[unfinished] = scores[unfinished, 0] / float(max(steps, 1)) ** length_penalty
        best_tokens[unfinished, :steps] = prefixes[unfinished, 0]
        best_length[unfinished] = steps
    return best_tokens[:, : int(best_length.max())], best


# --8<-- [end:beam_search]


# --8<-- [start:greedy]
@torch.inference_mode()
def greedy_decode(
    model: "Seq2Seq", source: torch.Tensor, lengths: torch.Tensor, max_length: int = MAX_LENGTH
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Greedy translation of a batch: encode, then `greedy_search` with the model's decoder.

    Args:
        model: a trained `Seq2Seq` (call `model.eval()` first: dropout stays on otherwise).
        source: (B, S) long, padded source indices.
        lengths: (B,) long, the real source lengths.
        max_length: at most this many steps (`<eos>` included).

    Shapes:
        tokens: (B, T) long, T <= max_length; each row ends at its first `<eos>`, then `PAD_IDX`.
        attentions: (B, T, S) attention weights, or None for a decoder without attention.
    """
    _check_search(source, max_length)
    state = model.decoder.init_state(*model.encode(source, lengths))  # keys projected once
    tokens, _, attentions, _ = greedy_search(model.decoder.forward_step, state, max_length)  # (B, T), (B, T, S)
    return tokens, attentions


# --8<-- [end:greedy]


# --8<-- [start:beam]
@torch.inference_mode()
def beam_search_decode(
    model: "Seq2Seq",
    source: torch.Tensor,
    lengths: torch.Tensor,
    beam_size: int = 5,
    max_length: int = MAX_LENGTH,
    length_penalty: float = 1.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Beam-search translation of a batch: encode, then `beam_search` with the model's decoder.

    Args:
        model: a trained `Seq2Seq` (in eval mode).
        source: (B, S) long, padded source indices.
        lengths: (B,) long, the real source lengths.
        beam_size: k, the prefixes kept per sentence; 1 gives `greedy_decode`'s tokens.
        max_length: at most this many steps (`<eos>` included).
        length_penalty: alpha; 0 compares raw log-probabilities, 1 per-word averages.

    Shapes:
        tokens: (B, T) long, T <= max_length; each row ends at its `<eos>`, then `PAD_IDX`.
        scores: (B,) the chosen hypotheses' length-normalised log-probabilities.
    """
    _check_search(source, max_length, beam_size, length_penalty)
    state = model.decoder.init_state(*model.encode(source, lengths))  # keys projected once
    return beam_search(model.decoder.forward_step, state, beam_size, max_length, length_penalty)  # (B, T), (B,)


# --8<-- [end:beam]


class SentenceError(InputError):
    """An `InputError` about one sentence of a list; `index` is its 0-based position."""

    def __init__(self, index: int, problem: str) -> None:
        super().__init__(f"sentence {index + 1} {problem}")
        self.index = index
        self.problem = problem


def prepare_sentences(
    vocabs: Vocabularies, sentences: Sequence[str], max_words: int = MAX_WORDS, unknown: str = "error"
) -> list[list[int]]:
    """Normalise and encode French sentences, with a clear error for each kind of bad input.

    Raises:
        InputError: no sentences; or a `SentenceError` naming the sentence: not a string, an
            empty or whitespace-only sentence, letters outside the Latin alphabet, more than
            `max_words` words, or (with `unknown="error"`) a word outside the vocabulary.
    """
    _check_sentence_list(sentences)
    _check_unknown(unknown)
    if not isinstance(vocabs, Vocabularies) or vocabs.target is None:
        raise InputError(f"vocabs must be a translator's Vocabularies (source and target), got {echo(vocabs, 80)}")
    if not is_int(max_words) or max_words < 1:
        raise InputError(f"max_words must be an int of at least 1, got {echo(max_words)}")
    encoded = []
    for index, sentence in enumerate(sentences):
        try:
            encoded.append(_prepare_one(vocabs, sentence, max_words, unknown))
        except InputError as error:
            raise SentenceError(index, str(error)) from None
    return encoded


def check_translator(model: object, vocabs: object) -> None:
    """A `Seq2Seq` and its `Vocabularies` (source and target), whose sizes match the model's embeddings.

    Raises:
        InputError: saying what was expected and what came.
    """
    from .model import Seq2Seq  # here, not at the top: model.py imports this module

    if not isinstance(model, Seq2Seq):
        raise InputError(
            f"model must be a Seq2Seq translator (build_model, load_checkpoint), got {type(model).__name__}"
        )
    if not isinstance(vocabs, Vocabularies) or vocabs.target is None:
        raise InputError(f"vocabs must be a translator's Vocabularies (source and target), got {echo(vocabs, 80)}")
    for side, size in model.vocabulary_sizes.items():
        if len(getattr(vocabs, side)) != size:
            raise InputError(
                f"the model has a {side} vocabulary of {size} but vocabs.{side} has {len(getattr(vocabs, side))}"
            )


def _check_sentence_list(sentences: object) -> None:
    if isinstance(sentences, str):
        raise InputError("translate takes a list of sentences, got one string; wrap it in a list")
    if isinstance(sentences, bytes | bytearray):
        raise InputError("translate takes a list of sentences (str), got bytes; decode them first")
    if not isinstance(sentences, Sequence):
        raise InputError(f"translate takes a list of sentences (str), got {type(sentences).__name__}")
    if len(sentences) == 0:
        raise InputError("no sentences to translate")


def _check_unknown(unknown: object) -> None:
    if not isinstance(unknown, str) or unknown not in ("error", "unk"):
        raise InputError(f"unknown must be 'error' or 'unk' (read unknown words as <unk>), got {echo(unknown)}")


def _invisible(sentence: str) -> str:
    """A note naming the invisible characters of `sentence` (zero-width space, line separator, ...), or ""."""
    names = dict.fromkeys(
        f"U+{ord(c):04X} {unicodedata.name(c, 'control character')}"
        for c in sentence
        if unicodedata.category(c) in ("Cf", "Cc", "Zl", "Zp") and c not in "\t\n\r"
    )
    if not names:
        return ""
    return f" (it holds the invisible character(s) {', '.join(names)}, read as a space between words)"


def _prepare_one(vocabs: Vocabularies, sentence: object, max_words: int, unknown: str) -> list[int]:
    if isinstance(sentence, bytes | bytearray):
        raise InputError(f"must be a string, got bytes {echo(sentence, 60)}; decode it first (e.g. .decode('utf-8'))")
    if not isinstance(sentence, str):
        raise InputError(f"must be a string, got {type(sentence).__name__}")
    if any("\udc80" <= c <= "\udcff" for c in sentence):
        raise InputError(f"is not valid UTF-8 text: {echo(sentence)}")
    foreign = sorted({c for c in sentence if c.isalpha() and not unicodedata.name(c, "").startswith("LATIN ")})
    if foreign:
        raise InputError(
            f"has letters outside the Latin alphabet ({echo(''.join(foreign))[1:-1]}) in {echo(sentence)}; "
            "the model reads French"
        )
    normalized = normalize_string(sentence).strip()
    if not normalized:
        raise InputError(f"is empty after normalisation: {echo(sentence)}{_invisible(sentence)}")
    words = normalized.split()
    if len(words) > max_words:
        raise InputError(
            f"has {len(words)} words after normalisation ({echo(normalized)}); "
            f"the model was trained on at most {max_words}"
        )
    try:
        return vocabs.source.encode(" ".join(words), unknown=unknown)
    except InputError as error:
        raise InputError(f"has {error}{_invisible(sentence)}") from None


def translate(
    model: "Seq2Seq",
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
        InputError: see `prepare_sentences`.
    """
    check_translator(model, vocabs)
    for name, value in (("beam_size", beam_size), ("batch_size", batch_size)):
        if not is_int(value) or value < 1:
            raise InputError(f"{name} must be an int of at least 1, got {echo(value)}")
    _check_length_penalty(length_penalty)
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
