"""The vocabulary: words to indices and back, one class for both tasks.

Indices 0-3 are the special tokens of `tokens.py` (`<pad>`, `<sos>`, `<eos>`, `<unk>`); words
get the next free index in the order they are added. The translator adds the words of its
training sentences in the order it meets them (the PyTorch tutorial's `Lang`); the sentiment
classifier keeps the words it saw at least twice, most frequent first (`from_counts`).
"""

import operator
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple

from ..model.tokens import EOS_IDX, PAD_IDX, SOS_IDX, SPECIAL_TOKENS, UNK_IDX
from .checks import Call, checked
from .errors import InputError, echo


class Vocabulary:
    """The tutorial's `Lang`: words to indices and back, with counts.

    The tutorial's `Lang` had only `<sos>` and `<eos>`, so its `n_words` equals
    ``len(vocab) - 2`` here.

    Args:
        name: what the words are, e.g. ``"fra"``; used in error messages.
    """

    # --8<-- [start:vocabulary]
    def __init__(self, name: str) -> None:
        self.name = name
        self.index2word: list[str] = list(SPECIAL_TOKENS)  # <pad>, <sos>, <eos>, <unk>
        self.word2index: dict[str, int] = {word: index for index, word in enumerate(self.index2word)}
        self.word2count: dict[str, int] = {}

    def add_sentence(self, sentence: str) -> None:
        for word in sentence.split(" "):
            self.add_word(word)

    def add_word(self, word: str) -> None:
        if word in SPECIAL_TOKENS:
            return
        if word not in self.word2index:
            self.word2index[word] = len(self.index2word)
            self.index2word.append(word)
            self.word2count[word] = 0
        self.word2count[word] += 1

    def __len__(self) -> int:
        return len(self.index2word)

    # --8<-- [end:vocabulary]

    @classmethod
    def from_sentences(cls, name: str, sentences: Iterable[str]) -> "Vocabulary":
        """A vocabulary holding every word of `sentences`, in the order they first occur."""
        vocab = cls(name)
        for sentence in sentences:
            vocab.add_sentence(sentence)
        return vocab

    @classmethod
    def from_counts(cls, name: str, token_lists: Iterable[Sequence[str]], min_freq: int = 2) -> "Vocabulary":
        """Keep the words seen at least `min_freq` times, most frequent first (ties alphabetical).

        With `min_freq` = 2 the training data contain `<unk>` (every word seen once), so a model
        learns an embedding for the words it will meet only at test time.
        """
        counts = Counter(token for tokens in token_lists for token in tokens if token not in SPECIAL_TOKENS)
        kept = sorted((w for w, c in counts.items() if c >= min_freq), key=lambda w: (-counts[w], w))
        vocab = cls(name)
        for word in kept:
            vocab.word2index[word] = len(vocab.index2word)
            vocab.index2word.append(word)
            vocab.word2count[word] = counts[word]
        return vocab

    def check_encode(self, call: Call) -> None:
        """`encode`'s check: a non-empty sentence (a string or a list of strings), every word known
        unless ``unknown="unk"``, and `unknown` one of ``"error"``, ``"unk"``.

        `encode` runs it when a user calls it; a caller inside the package that hands on a sentence
        it built itself (`translate`) runs it first.

        Raises:
            InputError: naming the sentence and what is wrong with it.
        """
        sentence, unknown = call.sentence, call.unknown
        words = sentence.split() if isinstance(sentence, str) else _check_tokens(sentence)
        if not words:
            raise InputError(f"the sentence is empty: {echo(sentence)}")
        if unknown == "error":
            missing = [word for word in words if word not in self.word2index]
            if missing:
                raise InputError(
                    f"unknown {self.name} word(s) {', '.join(echo(word, 60) for word in missing[:10])} "
                    f"in {echo(sentence)}: "
                    f"the vocabulary has {len(self)} entries from the training sentences"
                )
        elif unknown != "unk":
            raise InputError(f"unknown must be 'error' or 'unk', got {echo(unknown)}")

    @checked("check_encode")
    # --8<-- [start:encode]
    def encode(self, sentence: str | Sequence[str], *, add_eos: bool = True, unknown: str = "error") -> list[int]:
        """Map each word to its index, then append `<eos>`.

        Args:
            sentence: a normalised sentence (split on spaces), e.g. ``"je suis fatigue ."``,
                or a list of tokens.
            add_eos: append `EOS_IDX`.
            unknown: ``"error"`` raises on a word the vocabulary lacks, ``"unk"`` maps it
                to `UNK_IDX`.

        Raises:
            InputError: the sentence is empty, or holds unknown words and `unknown="error"`.
        """
        words = sentence.split() if isinstance(sentence, str) else list(sentence)
        indices = [self.word2index.get(word, UNK_IDX) for word in words]  # UNK_IDX only with unknown="unk"
        return indices + [EOS_IDX] if add_eos else indices

    # --8<-- [end:encode]

    def _check_decode(self, call: Call) -> None:
        """Token indices (a list or a tensor row of ints, not a one-shot iterator: the check reads them
        before `decode` does), each in ``[0, len(self))`` up to the first `<eos>` when stopping there."""
        indices, stop_at_eos = call.indices, call.stop_at_eos
        if isinstance(indices, Iterator):
            raise InputError(
                f"indices must be a list of token indices (ints), got {type(indices).__name__}; pass list(...)"
            )
        for index in _check_indices(indices):
            if not 0 <= index < len(self.index2word):
                raise InputError(f"index {index} is outside the {self.name} vocabulary [0, {len(self) - 1}]")
            if index == EOS_IDX and stop_at_eos:
                break

    @checked("_check_decode")
    # --8<-- [start:decode]
    def decode(self, indices: Iterable[int], *, stop_at_eos: bool = True) -> str:
        """Map indices back to words, stopping at `<eos>` and leaving out `<pad>`/`<sos>`/`<eos>`.

        Raises:
            InputError: an index outside ``[0, len(self))`` (before the first `<eos>` when stopping there).
        """
        words = []
        for index in indices:
            if index == EOS_IDX and stop_at_eos:
                break
            if index in (PAD_IDX, SOS_IDX, EOS_IDX):
                continue
            words.append(self.index2word[index])
        return " ".join(words)

    # --8<-- [end:decode]

    def to_dict(self) -> dict:
        """A JSON-ready dict: the name, the words in index order and their counts."""
        return {"name": self.name, "index2word": self.index2word, "word2count": self.word2count}

    @classmethod
    def from_dict(cls, data: object) -> "Vocabulary":
        """Rebuild a vocabulary saved by `to_dict`.

        Raises:
            InputError: the dict does not describe a vocabulary with our special tokens.
        """
        try:
            words = [str(w) for w in data["index2word"]]  # type: ignore[index]
            counts = {str(k): int(v) for k, v in data["word2count"].items()}  # type: ignore[index]
            name = str(data["name"])  # type: ignore[index]
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise InputError(f"not a saved vocabulary: {echo(error)}") from error
        if tuple(words[: len(SPECIAL_TOKENS)]) != SPECIAL_TOKENS or len(set(words)) != len(words):
            raise InputError(f"saved vocabulary {echo(name)} does not start with {SPECIAL_TOKENS} or repeats a word")
        vocab = cls(name)
        vocab.index2word = words
        vocab.word2index = {word: index for index, word in enumerate(words)}
        vocab.word2count = counts
        return vocab

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocabulary) and (self.name, self.index2word) == (other.name, other.index2word)

    def __repr__(self) -> str:
        return f"Vocabulary({self.name!r}, {len(self)} entries)"


def _check_indices(indices: object) -> list[int]:
    """Token indices as ints (a list, a tensor row, numpy ints); bytes and strings are not indices."""
    if isinstance(indices, str | bytes | bytearray | dict) or not isinstance(indices, Iterable):
        raise InputError(f"indices must be a list of token indices (ints), got {type(indices).__name__}")
    checked = []
    for index in indices:
        try:
            checked.append(operator.index(index))
        except TypeError:
            raise InputError(f"indices must be ints, got {echo(index, 60)}") from None
    return checked


def _check_tokens(tokens: object) -> list[str]:
    """A list of token strings (bytes are not text: decode them first)."""
    if isinstance(tokens, bytes | bytearray):
        raise InputError(f"a sentence must be a string or a list of strings, got bytes {echo(tokens, 60)}; decode it")
    if not isinstance(tokens, Sequence) or not all(isinstance(token, str) for token in tokens):
        raise InputError(f"a sentence must be a string or a list of strings, got {echo(tokens, 80)}")
    return list(tokens)


class Vocabularies(NamedTuple):
    """The vocabularies of one model: the source side, and the target side of a translator."""

    source: Vocabulary
    target: Vocabulary | None = None
