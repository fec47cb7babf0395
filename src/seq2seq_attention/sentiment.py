"""The sentiment data: labelled sentences, tokens, a vocabulary, a fixed split and padded batches.

The sentences are the UCI "Sentiment Labelled Sentences" (Kotzias et al., KDD 2015, CC BY 4.0),
shipped in `corpora/sentiment/`: 1,000 sentences each from IMDB, Amazon and Yelp reviews,
500 positive (label 1) and 500 negative (label 0) per source.
"""

import re
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import torch

from .errors import UserError
from .tokens import PAD_IDX, SPECIAL_TOKENS, UNK_IDX

SOURCES: dict[str, str] = {
    "imdb": "imdb_labelled.txt",
    "amazon": "amazon_cells_labelled.txt",
    "yelp": "yelp_labelled.txt",
}

_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|[!?]")


@dataclass(frozen=True)
class Example:
    """One labelled sentence: its text, 1 for positive or 0 for negative, and where it came from."""

    text: str
    label: int
    source: str


def corpus_dir() -> Path:
    """The folder of the bundled sentiment files inside the installed package."""
    return Path(str(resources.files("seq2seq_attention") / "corpora" / "sentiment"))


def load_sentences(sources: Sequence[str] = ("imdb",), root: Path | None = None) -> list[Example]:
    """Read the labelled sentences of the given sources, in file order.

    The files are split on ``"\\n"`` only: two IMDB sentences hold the character U+0085 (an
    ellipsis from a Windows code page), which `str.splitlines` would treat as a line break.

    Args:
        sources: names from `SOURCES` (``imdb``, ``amazon``, ``yelp``).
        root: folder holding the files; the bundled copy by default.

    Raises:
        UserError: an unknown source, a missing file, or a line that is not ``sentence<TAB>0|1``.
    """
    if not sources:
        raise UserError(f"choose at least one source from {sorted(SOURCES)}")
    unknown = [s for s in sources if s not in SOURCES]
    if unknown:
        raise UserError(f"unknown sentiment source(s) {unknown}; choose from {sorted(SOURCES)}")
    folder = corpus_dir() if root is None else Path(root)
    examples = []
    for source in dict.fromkeys(sources):
        path = folder / SOURCES[source]
        if not path.is_file():
            raise UserError(f"sentiment file {path} does not exist")
        for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
            if not line.strip():
                continue
            text, tab, label = line.rstrip().rpartition("\t")
            if not tab or label not in ("0", "1"):
                raise UserError(f"{path}:{number}: expected 'sentence<TAB>0|1', got {line[:60]!r}")
            examples.append(Example(text.strip(), int(label), source))
    return examples


def tokenize(text: str) -> list[str]:
    """Lower-case words (with an apostrophe suffix such as ``n't`` or ``'s``), ``!`` and ``?``.

    Other punctuation is dropped; U+0085 and any other non-word character separates words.
    """
    return _TOKEN.findall(text.lower())


# --8<-- [start:split]
def split_examples(
    examples: Iterable[Example], test_percent: int = 20, salt: str = ""
) -> tuple[list[Example], list[Example]]:
    """Split into train and test by a checksum of each sentence, not by a random draw.

    A sentence goes to the test set when ``crc32(salt + text) % 100 < test_percent``: the split
    is the same on every machine and Python version, and a sentence that occurs twice always
    lands on the same side, so no test sentence is also a training sentence. A different
    `salt` gives an independent split (the training script carves its validation set this way).
    """
    if not 0 < test_percent < 100:
        raise UserError(f"test_percent must lie in (0, 100), got {test_percent}")
    train, test = [], []
    for example in examples:
        bucket = zlib.crc32((salt + example.text).encode("utf-8")) % 100
        (test if bucket < test_percent else train).append(example)
    return train, test


# --8<-- [end:split]


class Vocabulary:
    """Word <-> index, with the shared special tokens first (`PAD_IDX` = 0, `UNK_IDX` = 3).

    Args:
        words: the non-special words, in index order.
    """

    def __init__(self, words: Sequence[str]) -> None:
        self.itos: list[str] = [*SPECIAL_TOKENS, *(w for w in words if w not in SPECIAL_TOKENS)]
        self.stoi: dict[str, int] = {word: index for index, word in enumerate(self.itos)}

    @classmethod
    def build(cls, token_lists: Iterable[Sequence[str]], min_freq: int = 2) -> "Vocabulary":
        """Keep the words seen at least `min_freq` times, most frequent first (ties alphabetical).

        With `min_freq` = 2 the training data contains `<unk>` (every word seen once), so the
        model learns an embedding for the words it will meet only at test time.
        """
        counts = Counter(token for tokens in token_lists for token in tokens)
        kept = sorted((w for w, c in counts.items() if c >= min_freq), key=lambda w: (-counts[w], w))
        return cls(kept)

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, tokens: Sequence[str]) -> list[int]:
        """Token strings to indices; unknown words become `UNK_IDX`."""
        return [self.stoi.get(token, UNK_IDX) for token in tokens]


@dataclass
class Batch:
    """Padded token indices with their lengths, mask and labels.

    Shapes:
        tokens: (B, S) long, padded on the right with `PAD_IDX`; S is the longest length.
        lengths: (B,) long, the real lengths (each at least 1).
        mask: (B, S) bool, True for real tokens.
        labels: (B,) float, 1.0 positive and 0.0 negative.
    """

    tokens: torch.Tensor
    lengths: torch.Tensor
    mask: torch.Tensor
    labels: torch.Tensor

    def to(self, device: torch.device) -> "Batch":
        return Batch(self.tokens.to(device), self.lengths.to(device), self.mask.to(device), self.labels.to(device))


def lengths_to_mask(lengths: torch.Tensor, max_length: int) -> torch.Tensor:
    """True at the first `lengths[b]` positions of each row.

    Shapes:
        lengths: (B,).
        returns: (B, max_length) bool, on the device of `lengths`.
    """
    positions = torch.arange(max_length, device=lengths.device)  # (S,)
    return positions.unsqueeze(0) < lengths.unsqueeze(1)  # (B, S)


# --8<-- [start:make_batch]
def make_batch(sequences: Sequence[Sequence[int]], labels: Sequence[int], max_length: int | None = None) -> Batch:
    """Pad index sequences to one (B, S) tensor; an empty sequence becomes a single `<unk>`.

    Args:
        sequences: B lists of token indices.
        labels: B labels (0 or 1).
        max_length: cut sequences longer than this (keeping their beginning); no cut by default.
    """
    if len(sequences) != len(labels) or not sequences:
        raise ValueError(f"need as many labels as sequences (at least one), got {len(sequences)} and {len(labels)}")
    rows = [list(seq[:max_length]) or [UNK_IDX] for seq in sequences]
    lengths = torch.tensor([len(row) for row in rows], dtype=torch.long)  # (B,)
    tokens = torch.full((len(rows), int(lengths.max())), PAD_IDX, dtype=torch.long)  # (B, S)
    for b, row in enumerate(rows):
        tokens[b, : len(row)] = torch.tensor(row, dtype=torch.long)
    mask = lengths_to_mask(lengths, tokens.shape[1])  # (B, S)
    return Batch(tokens, lengths, mask, torch.tensor(labels, dtype=torch.float))


# --8<-- [end:make_batch]


def iterate_batches(
    sequences: Sequence[Sequence[int]],
    labels: Sequence[int],
    batch_size: int,
    generator: torch.Generator | None = None,
    max_length: int | None = None,
) -> Iterator[Batch]:
    """Yield `Batch`es of at most `batch_size` examples; shuffled when a generator is given."""
    if batch_size < 1:
        raise UserError(f"batch_size must be at least 1, got {batch_size}")
    if generator is None:
        order = list(range(len(sequences)))
    else:
        order = torch.randperm(len(sequences), generator=generator).tolist()
    for start in range(0, len(order), batch_size):
        chosen = order[start : start + batch_size]
        yield make_batch([sequences[i] for i in chosen], [labels[i] for i in chosen], max_length)


@dataclass
class Split:
    """One side of the split: the examples and their encoded token indices, in the same order."""

    examples: list[Example]
    ids: list[list[int]]

    @property
    def labels(self) -> list[int]:
        return [e.label for e in self.examples]

    def __len__(self) -> int:
        return len(self.examples)


@dataclass
class SentimentData:
    """The chosen sources split into train, validation and test, encoded with the training vocabulary."""

    sources: tuple[str, ...]
    vocab: Vocabulary
    train: Split
    valid: Split
    test: Split


def prepare_data(
    sources: Sequence[str] = ("imdb",),
    test_percent: int = 20,
    valid_percent: int = 10,
    min_freq: int = 2,
    root: Path | None = None,
) -> SentimentData:
    """Load, split, build the vocabulary on the training sentences only, and encode every side.

    The test set is `test_percent` of the sentences (`split_examples`); the validation set is
    `valid_percent` of the rest, carved with another salt, so the test split does not depend on
    `valid_percent`. The vocabulary never sees a validation or test sentence.
    """
    rest, test = split_examples(load_sentences(sources, root), test_percent)
    train, valid = split_examples(rest, valid_percent, salt="valid") if valid_percent else (rest, [])
    vocab = Vocabulary.build((tokenize(e.text) for e in train), min_freq=min_freq)

    def encode(examples: list[Example]) -> Split:
        return Split(examples, [vocab.encode(tokenize(e.text)) for e in examples])

    return SentimentData(tuple(dict.fromkeys(sources)), vocab, encode(train), encode(valid), encode(test))
