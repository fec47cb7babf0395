"""The translator a user calls: sentences in, sentences out, and the checkpoint loader that goes with it.

`translate` checks what it is given once, here, then turns French sentences into a batch and
decodes it with the search loops of `search.py`; `load_translator` reads a translation
checkpoint with the length limit of its training data. Neither trains: the read-only commands
(translate, plot-attention, export) import this module, not `train.py`.
"""

import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path

import torch

from ..core.batching import DECODE_BATCH_SIZE, collate
from ..core.checkpoint import Checkpoint, load_checkpoint
from ..core.checks import Call, check_count, checked, checks_of
from ..core.config import is_number, saved_setting
from ..core.errors import InputError, echo
from ..core.vocabulary import Vocabularies
from ..model.search import MAX_BEAM, MAX_LENGTH, MAX_LENGTH_PENALTY, MAX_STEPS, beam_search_decode, greedy_decode
from ..model.seq2seq import Seq2Seq
from ..model.tokens import EOS_IDX
from .config import TrainConfig
from .corpus import MAX_WORDS, normalize_string


def check_length_penalty(length_penalty: object) -> None:
    """Beam search's alpha: a finite number in [-`MAX_LENGTH_PENALTY`, `MAX_LENGTH_PENALTY`]."""
    if not is_number(length_penalty):
        raise InputError(f"length_penalty must be a number, got {echo(length_penalty)}")
    if not math.isfinite(length_penalty) or abs(length_penalty) > MAX_LENGTH_PENALTY:
        bound = f"{MAX_LENGTH_PENALTY:g}"
        raise InputError(f"length_penalty must be a finite number in [-{bound}, {bound}], got {length_penalty}")


def check_steps(max_length: object, beam_size: object = 1, length_penalty: object = 1.0) -> None:
    """A search's numbers: `max_length` in [1, `MAX_STEPS`], `beam_size` in [1, `MAX_BEAM`], a finite
    `length_penalty` (the defaults: a greedy search, with nothing to check for a beam)."""
    check_length_penalty(length_penalty)
    check_count("max_length", max_length, MAX_STEPS)
    check_count("beam_size", beam_size, MAX_BEAM)


class SentenceError(InputError):
    """An `InputError` about one sentence of a list; `index` is its 0-based position."""

    def __init__(self, index: int, problem: str) -> None:
        super().__init__(f"sentence {index + 1} {problem}")
        self.index = index
        self.problem = problem


def check_prepare(call: Call) -> None:
    vocabs, sentences, max_words, unknown = call.vocabs, call.sentences, call.max_words, call.unknown
    _check_sentence_list(sentences)
    _check_unknown(unknown)
    _check_vocabs(vocabs)
    check_count("max_words", max_words)


@checked(check_prepare)
def prepare_sentences(
    vocabs: Vocabularies, sentences: Sequence[str], max_words: int = MAX_WORDS, unknown: str = "error"
) -> list[list[int]]:
    """Normalise and encode French sentences, with a clear error for each kind of bad input.

    Raises:
        InputError: no sentences; or a `SentenceError` naming the sentence: not a string, an
            empty or whitespace-only sentence, letters outside the Latin alphabet, more than
            `max_words` words, or (with `unknown="error"`) a word outside the vocabulary.
    """
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
    if not isinstance(model, Seq2Seq):
        raise InputError(
            f"model must be a Seq2Seq translator (build_model, load_checkpoint), got {type(model).__name__}"
        )
    _check_vocabs(vocabs)
    for side, size in model.vocabulary_sizes.items():
        if len(getattr(vocabs, side)) != size:
            raise InputError(
                f"the model has a {side} vocabulary of {size} but vocabs.{side} has {len(getattr(vocabs, side))}"
            )


def _check_vocabs(vocabs: object) -> None:
    if not isinstance(vocabs, Vocabularies) or vocabs.target is None:
        raise InputError(f"vocabs must be a translator's Vocabularies (source and target), got {echo(vocabs, 80)}")


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
    return f" (it holds the invisible character(s) {', '.join(names)}, which hold no word)"


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
    single_spaced = " ".join(words)
    try:
        checks_of(vocabs.source.encode, single_spaced, unknown=unknown)  # encode runs unchecked inside this call
    except InputError as error:
        raise InputError(f"has {error}{_invisible(sentence)}{_question(vocabs, words)}") from None
    return vocabs.source.encode(single_spaced, unknown=unknown)


def _question(vocabs: Vocabularies, words: list[str]) -> str:
    """Why '?' is unknown, where it is: the training pairs are statements (the tutorial's filter), never questions."""
    if "?" not in words or "?" in vocabs.source.word2index:
        return ""
    return (
        "; '?' is unknown because every training pair is a statement ending in '.' or '!': the model never saw a "
        "question (end the sentence with '.' instead)"
    )


def check_translate(call: Call) -> None:
    """Everything `translate` passes on: the model and its vocabularies, the numbers, the sentences."""
    check_translator(call.model, call.vocabs)
    check_count("batch_size", call.batch_size)
    check_steps(call.max_length, call.beam_size, call.length_penalty)
    check_prepare(call)  # the same names: vocabs, sentences, max_words, unknown


@checked(check_translate)
def translate(
    model: "Seq2Seq",
    vocabs: Vocabularies,
    sentences: Sequence[str],
    *,
    max_words: int = MAX_WORDS,
    max_length: int = MAX_LENGTH,
    unknown: str = "error",
    batch_size: int = DECODE_BATCH_SIZE,
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


@dataclass
class Translator(Checkpoint):
    """A translation checkpoint, loaded by `load_translator`.

    Attributes:
        max_words: the length limit of the data it was trained on (its saved `TrainConfig`'s,
            `MAX_WORDS` when it saved none); `translate` refuses longer sentences.
    """

    max_words: int = MAX_WORDS


def load_translator(path: str | Path, device: torch.device | str = "cpu") -> Translator:
    """Load a translation checkpoint, with the length limit of its training data.

    Raises:
        InputError: see `load_checkpoint`, a checkpoint of another task, or a saved `max_words`
            that `TrainConfig` would refuse.
    """
    checkpoint = load_checkpoint(path, device, task="translation")
    max_words = saved_setting(TrainConfig, checkpoint.training, "max_words", f"checkpoint {path}")
    return Translator(**{f.name: getattr(checkpoint, f.name) for f in fields(Checkpoint)}, max_words=max_words)
