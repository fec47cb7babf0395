"""The Tatoeba French-English pairs: normalisation, filtering, split, vocabulary, batches.

Seed 001's pipeline, as library code: read the bundled `corpora/eng-fra.txt.xz`
(English<TAB>French), normalise both sides exactly as the seed does, keep the short
"subject + be" sentences, put every pair whose French side hashes to 0 (mod 10) in the
held-out split, build one `Vocabulary` per language from the training split, and turn
sentences into padded, length-bucketed batches.
"""

import functools
import lzma
import re
import unicodedata
import zlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

import torch
from torch.utils.data import DataLoader, Dataset, Sampler

from .errors import UserError
from .tokens import EOS_IDX, PAD_IDX, SOS_IDX, SPECIAL_TOKENS, UNK_IDX

CORPUS_PATH = Path(__file__).resolve().parent / "corpora" / "eng-fra.txt.xz"
"""The bundled Tatoeba pairs (135,842 lines, English<TAB>French, CC-BY 2.0 FR)."""

MAX_WORDS = 6
"""The seed's `MAX_LENGTH = 6`: both sides keep at most this many words (punctuation counts)."""

ENG_PREFIXES = (
    "i am ",
    "i m ",
    "he is",
    "he s ",
    "she is",
    "she s ",
    "you are",
    "you re ",
    "we are",
    "we re ",
    "they are",
    "they re ",
)
"""The seed's English prefixes ("subject + be"), matched on the normalised English side."""


class Pair(NamedTuple):
    """One normalised sentence pair: French is the source, English the target."""

    source: str
    target: str


# --8<-- [start:normalize]
def unicode_to_ascii(s: str) -> str:
    """Drop accents: decompose (NFD) and remove the combining marks (category Mn)."""
    if s.isascii():
        return s  # nothing to decompose: the same result, faster
    return "".join(c for c in unicodedata.normalize("NFD", s) if unicodedata.category(c) != "Mn")


def normalize_string(s: str) -> str:
    """Lowercase, strip, drop accents, split off `.!?`, and turn every other non-letter into a space."""
    s = unicode_to_ascii(s.lower().strip())
    s = re.sub(r"([.!?])", r" \1", s)  # "fatigue." -> "fatigue ."
    s = re.sub(r"[^a-zA-Z.!?]+", r" ", s)  # "j'ai" -> "j ai", "\u202f!" -> " !"
    return s


# --8<-- [end:normalize]


# --8<-- [start:read_lines]
def read_lines(path: str | Path | None = None) -> list[tuple[str, str]]:
    """Read the raw (English, French) lines of an xz-compressed or plain tab-separated file.

    Args:
        path: the file; the bundled corpus by default.

    Raises:
        UserError: the file is missing, is not UTF-8, or a line does not hold two columns.
    """
    path = Path(path) if path is not None else CORPUS_PATH
    opener = lzma.open if path.suffix == ".xz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError as error:
        raise UserError(f"corpus file not found: {path}") from error
    except (lzma.LZMAError, EOFError) as error:
        raise UserError(f"corpus file {path} is not a valid xz file: {error}") from error
    except UnicodeDecodeError as error:
        raise UserError(f"corpus file {path} is not UTF-8 text: {error}") from error
    lines = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line:
            continue
        columns = line.split("\t")
        if len(columns) < 2:
            raise UserError(f"{path}:{number}: expected English<TAB>French, got {line[:60]!r}")
        lines.append((columns[0], columns[1]))
    return lines


# --8<-- [end:read_lines]


# --8<-- [start:filter]
def keep_pair(pair: Pair, max_words: int = MAX_WORDS, prefixes: Sequence[str] = ENG_PREFIXES) -> bool:
    """The seed's filter: both sides at most `max_words` words, English starting with a prefix."""
    return (
        len(pair.source.split(" ")) <= max_words
        and len(pair.target.split(" ")) <= max_words
        and pair.target.startswith(tuple(prefixes))
    )


# --8<-- [end:filter]


# --8<-- [start:load_pairs]
def load_pairs(
    max_words: int = MAX_WORDS,
    prefixes: Sequence[str] = ENG_PREFIXES,
    path: str | Path | None = None,
) -> list[Pair]:
    """Read, normalise and filter the corpus: the seed's 5,318 pairs with the defaults.

    The English side is normalised and tested first, so that only the few French
    sentences that can pass are normalised: same result as normalising everything, in
    a fraction of the time.

    Args:
        max_words: keep pairs whose sides have at most this many words.
        prefixes: keep pairs whose normalised English side starts with one of these.
        path: the corpus file; the bundled one by default.

    Returns:
        (French, English) pairs in file order. The bundled corpus is read once per process
        and parameter set; later calls get a new list of the same pairs.
    """
    if path is None:
        return list(_bundled_pairs(max_words, tuple(prefixes)))
    return _read_pairs(path, max_words, tuple(prefixes))


@functools.lru_cache(maxsize=4)
def _bundled_pairs(max_words: int, prefixes: tuple[str, ...]) -> tuple[Pair, ...]:
    return tuple(_read_pairs(CORPUS_PATH, max_words, prefixes))


def _read_pairs(path: str | Path, max_words: int, prefixes: tuple[str, ...]) -> list[Pair]:
    pairs = []
    for english, french in read_lines(path):
        target = normalize_string(english)
        if not target.startswith(prefixes) or len(target.split(" ")) > max_words:
            continue
        pair = Pair(normalize_string(french), target)
        if keep_pair(pair, max_words, prefixes):
            pairs.append(pair)
    return pairs


# --8<-- [end:load_pairs]


# --8<-- [start:split]
def is_test(source: str) -> bool:
    """The held-out rule: a pair is a test pair when crc32 of its French side is 0 mod 10."""
    return zlib.crc32(source.encode("utf-8")) % 10 == 0


def split_pairs(pairs: Iterable[Pair]) -> tuple[list[Pair], list[Pair]]:
    """Split into (train, test) by `is_test`: one French sentence never sits on both sides."""
    train, test = [], []
    for pair in pairs:
        (test if is_test(pair.source) else train).append(pair)
    return train, test


# --8<-- [end:split]


class Vocabulary:
    """Seed 001's `Lang`: words to indices and back, with counts.

    Indices 0-3 are the special tokens of `tokens.py` (`<pad>`, `<sos>`, `<eos>`, `<unk>`);
    words get the next free index in the order they are first seen. The seed's `Lang` had
    only `<sos>` and `<eos>`, so its `n_words` equals ``len(vocab) - 2`` here.

    Args:
        name: the language's name, e.g. ``"fra"``.
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
        """A vocabulary holding every word of `sentences`."""
        vocab = cls(name)
        for sentence in sentences:
            vocab.add_sentence(sentence)
        return vocab

    # --8<-- [start:encode]
    def encode(self, sentence: str, *, add_eos: bool = True, unknown: str = "error") -> list[int]:
        """Split on spaces and map each word to its index, then append `<eos>`.

        Args:
            sentence: a normalised sentence, e.g. ``"je suis fatigue ."``.
            add_eos: append `EOS_IDX`.
            unknown: ``"error"`` raises on a word the vocabulary lacks, ``"unk"`` maps it
                to `UNK_IDX`.

        Raises:
            UserError: the sentence is empty, or holds unknown words and `unknown="error"`.
        """
        words = sentence.split()
        if not words:
            raise UserError(f"the sentence is empty: {sentence!r}")
        if unknown == "error":
            missing = [word for word in words if word not in self.word2index]
            if missing:
                raise UserError(
                    f"unknown {self.name} word(s) {', '.join(repr(w) for w in missing)} in {sentence!r}: "
                    f"the vocabulary has {len(self)} entries from the training sentences"
                )
        elif unknown != "unk":
            raise ValueError(f"unknown must be 'error' or 'unk', got {unknown!r}")
        indices = [self.word2index.get(word, UNK_IDX) for word in words]
        return indices + [EOS_IDX] if add_eos else indices

    def decode(self, indices: Iterable[int], *, stop_at_eos: bool = True) -> str:
        """Map indices back to words, stopping at `<eos>` and leaving out `<pad>`/`<sos>`/`<eos>`."""
        words = []
        for index in indices:
            index = int(index)
            if index == EOS_IDX and stop_at_eos:
                break
            if index in (PAD_IDX, SOS_IDX, EOS_IDX):
                continue
            words.append(self.index2word[index])
        return " ".join(words)

    # --8<-- [end:encode]

    def to_dict(self) -> dict:
        """A JSON-ready dict: the name, the words in index order and their counts."""
        return {"name": self.name, "index2word": self.index2word, "word2count": self.word2count}

    @classmethod
    def from_dict(cls, data: dict) -> "Vocabulary":
        """Rebuild a vocabulary saved by `to_dict`.

        Raises:
            UserError: the dict does not describe a vocabulary with our special tokens.
        """
        try:
            words = list(data["index2word"])
            counts = {str(k): int(v) for k, v in data["word2count"].items()}
            name = str(data["name"])
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise UserError(f"not a saved vocabulary: {error!r}") from error
        if tuple(words[: len(SPECIAL_TOKENS)]) != SPECIAL_TOKENS or len(set(words)) != len(words):
            raise UserError(f"saved vocabulary {name!r} does not start with {SPECIAL_TOKENS} or repeats a word")
        vocab = cls(name)
        vocab.index2word = words
        vocab.word2index = {word: index for index, word in enumerate(words)}
        vocab.word2count = counts
        return vocab

    def __repr__(self) -> str:
        return f"Vocabulary({self.name!r}, {len(self)} entries)"


class Vocabularies(NamedTuple):
    """The source (French) and target (English) vocabularies of one model."""

    source: Vocabulary
    target: Vocabulary


def build_vocabularies(pairs: Iterable[Pair]) -> Vocabularies:
    """Both vocabularies from the given pairs (pass the training split)."""
    pairs = list(pairs)
    return Vocabularies(
        Vocabulary.from_sentences("fra", (p.source for p in pairs)),
        Vocabulary.from_sentences("eng", (p.target for p in pairs)),
    )


class TranslationDataset(Dataset):
    """Pairs encoded once: ``dataset[i]`` is ``(source indices, target indices)``, each ending in `<eos>`.

    Args:
        pairs: normalised pairs.
        vocabs: the vocabularies; words they lack become `<unk>` (the test split has some).
    """

    def __init__(self, pairs: Sequence[Pair], vocabs: Vocabularies) -> None:
        self.pairs = list(pairs)
        self.examples = [
            (vocabs.source.encode(p.source, unknown="unk"), vocabs.target.encode(p.target, unknown="unk"))
            for p in self.pairs
        ]

    def __len__(self) -> int:
        return len(self.examples)

    def __getitem__(self, index: int) -> tuple[list[int], list[int]]:
        return self.examples[index]


class Batch(NamedTuple):
    """A padded batch.

    Shapes:
        source: (B, S) long, padded with `PAD_IDX`.
        lengths: (B,) long, the real source lengths (with `<eos>`).
        source_mask: (B, S) bool, True on real source positions.
        target: (B, T) long, padded with `PAD_IDX`.
        target_lengths: (B,) long.
    """

    source: torch.Tensor
    lengths: torch.Tensor
    source_mask: torch.Tensor
    target: torch.Tensor
    target_lengths: torch.Tensor

    def to(self, device: torch.device | str) -> "Batch":
        return Batch(*(t.to(device) for t in self))


# --8<-- [start:pad]
def pad_sequences(sequences: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Stack index lists into one `PAD_IDX`-padded tensor and their lengths.

    Shapes:
        returns: (B, L) long, and (B,) long lengths, L the longest sequence.
    """
    lengths = torch.tensor([len(s) for s in sequences], dtype=torch.long)  # (B,)
    if bool((lengths == lengths[0]).all()):  # a length bucket: nothing to pad, one tensor call
        return torch.tensor([list(s) for s in sequences], dtype=torch.long), lengths  # (B, L), (B,)
    padded = torch.full((len(sequences), int(lengths.max())), PAD_IDX, dtype=torch.long)  # (B, L)
    for row, sequence in enumerate(sequences):
        padded[row, : len(sequence)] = torch.tensor(sequence, dtype=torch.long)
    return padded, lengths


def collate(examples: Sequence[tuple[Sequence[int], Sequence[int]]]) -> Batch:
    """The `DataLoader` collate: pad sources and targets, keep lengths, build the source mask."""
    source, lengths = pad_sequences([src for src, _ in examples])  # (B, S), (B,)
    target, target_lengths = pad_sequences([tgt for _, tgt in examples])  # (B, T), (B,)
    source_mask = torch.arange(source.size(1)).unsqueeze(0) < lengths.unsqueeze(1)  # (B, S)
    return Batch(source, lengths, source_mask, target, target_lengths)


# --8<-- [end:pad]


class BucketBatchSampler(Sampler[list[int]]):
    """Batches of examples with equal (source, target) lengths where possible, in random order.

    Examples are shuffled, sorted (stably) by their lengths, cut into batches of
    `batch_size`, and the batches are shuffled: most batches need no padding at all, and
    the order still changes every epoch. The order depends only on `seed` and the epoch
    (`set_epoch`), so a resumed run sees the same batches as an uninterrupted one.

    Args:
        lengths: one (source length, target length) per example.
        batch_size: examples per batch (the last batch of a length group may be smaller).
        shuffle: shuffle examples and batches; False keeps the sorted order.
        seed: seeds the shuffling.
    """

    def __init__(self, lengths: Sequence[tuple[int, int]], batch_size: int, shuffle: bool = True, seed: int = 0):
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self.lengths = list(lengths)
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def _batches(self) -> list[list[int]]:
        generator = torch.Generator().manual_seed(self.seed * 1_000_003 + self.epoch)
        order = torch.randperm(len(self.lengths), generator=generator).tolist() if self.shuffle else None
        order = order if order is not None else list(range(len(self.lengths)))
        order.sort(key=lambda i: self.lengths[i])
        batches = []
        start = 0
        while start < len(order):
            key = self.lengths[order[start]]
            end = start
            while end < len(order) and end - start < self.batch_size and self.lengths[order[end]] == key:
                end += 1
            batches.append(order[start:end])
            start = end
        if self.shuffle:
            batches = [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]
        return batches

    def __iter__(self) -> Iterator[list[int]]:
        return iter(self._batches())

    def __len__(self) -> int:
        return len(self._batches())


def make_loader(dataset: TranslationDataset, batch_size: int, shuffle: bool = True, seed: int = 0) -> DataLoader:
    """A `DataLoader` over `dataset` with length buckets and `collate`."""
    sampler = BucketBatchSampler([(len(s), len(t)) for s, t in dataset.examples], batch_size, shuffle, seed)
    return DataLoader(dataset, batch_sampler=sampler, collate_fn=collate)
