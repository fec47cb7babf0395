"""The sentiment data: labelled sentences, tokens, a vocabulary, a fixed split and padded batches.

The sentences are the UCI "Sentiment Labelled Sentences" (Kotzias et al., KDD 2015, CC BY 4.0),
shipped in `corpora/sentiment/`: 1,000 sentences each from IMDB, Amazon and Yelp reviews,
500 positive (label 1) and 500 negative (label 0) per source.
"""

import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import torch

from ..core.batching import Batch, collate
from ..core.checks import check_count
from ..core.errors import InputError, echo
from ..core.split import checksum_split
from ..core.text import DROPPED_CATEGORIES
from ..core.vocabulary import Vocabulary
from ..model.tokens import UNK_IDX
from .config import SOURCES

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
        InputError: an unknown source, a missing file, or a line that is not ``sentence<TAB>0|1``.
    """
    if not sources:
        raise InputError(f"choose at least one source from {sorted(SOURCES)}")
    unknown = [s for s in sources if s not in SOURCES]
    if unknown:
        raise InputError(f"unknown sentiment source(s) {unknown}; choose from {sorted(SOURCES)}")
    folder = corpus_dir() if root is None else Path(root)
    examples = []
    for source in dict.fromkeys(sources):
        path = folder / SOURCES[source]
        if not path.is_file():
            raise InputError(f"sentiment file {path} does not exist")
        for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
            if not line.strip():
                continue
            text, tab, label = line.rstrip().rpartition("\t")
            if not tab or label not in ("0", "1"):
                raise InputError(f"{path}:{number}: expected 'sentence<TAB>0|1', got {line[:60]!r}")
            examples.append(Example(text.strip(), int(label), source))
    return examples


def tokenize(text: str) -> list[str]:
    """Lower-case words (with an apostrophe suffix such as ``n't`` or ``'s``), ``!`` and ``?``.

    Normalised as the translation side does (`translation.corpus.unicode_to_ascii`): decomposed
    (NFD), without accents and invisible format characters (`DROPPED_CATEGORIES`), so "cliché
    naïve" gives ``cliche``, ``naive`` typed composed (NFC) or decomposed, and "go\u200dod" gives
    ``good``. Other punctuation is dropped; U+0085 and any other non-word character separates words.
    """
    if not isinstance(text, str):
        hint = "; decode it first" if isinstance(text, bytes) else ""
        raise InputError(f"text must be a string, got {type(text).__name__}{hint}")
    if any("\udc80" <= c <= "\udcff" for c in text):
        raise InputError(f"text is not valid UTF-8 (undecodable bytes escaped as surrogates): {echo(text)}")
    folded = unicodedata.normalize("NFD", text.lower())
    return _TOKEN.findall("".join(c for c in folded if unicodedata.category(c) not in DROPPED_CATEGORIES))


# --8<-- [start:split]
def split_examples(
    examples: Iterable[Example], test_percent: int = 20, salt: str = ""
) -> tuple[list[Example], list[Example]]:
    """Split into train and test by a checksum of each sentence, not by a random draw.

    A sentence goes to the test set when ``crc32(salt + text) % 100 < test_percent``
    (`checksum_split`): the split is the same on every machine and Python version, and a
    sentence that occurs twice always lands on the same side, so no test sentence is also a
    training sentence. A different `salt` gives an independent split (the training carves its
    validation set this way).
    """
    return checksum_split(examples, key=lambda example: example.text, held_out=test_percent, salt=salt)


# --8<-- [end:split]


def encode_tokens(vocab: Vocabulary, tokens: Sequence[str]) -> list[int]:
    """Token strings to indices; unknown words become `UNK_IDX`, and a sentence without a word one `<unk>`."""
    return vocab.encode(tokens, add_eos=False, unknown="unk") if tokens else [UNK_IDX]


def shuffled_batches(size: int, batch_size: int, generator: torch.Generator | None = None) -> list[list[int]]:
    """Indices ``0..size-1`` cut into batches of `batch_size`, in a random order when a generator is given."""
    check_count("batch_size", batch_size)
    order = list(range(size)) if generator is None else torch.randperm(size, generator=generator).tolist()
    return [order[start : start + batch_size] for start in range(0, size, batch_size)]


def iterate_batches(
    sequences: Sequence[Sequence[int]],
    labels: Sequence[int],
    batch_size: int,
    generator: torch.Generator | None = None,
) -> Iterator[Batch]:
    """Yield padded `Batch`es (labels as the target) of at most `batch_size` examples; shuffled with a generator."""
    for rows in shuffled_batches(len(sequences), batch_size, generator):
        yield collate([(sequences[i], labels[i]) for i in rows])


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
    vocab = Vocabulary.from_counts("words", (tokenize(e.text) for e in train), min_freq=min_freq)

    def encode(examples: list[Example]) -> Split:
        return Split(examples, [encode_tokens(vocab, tokenize(e.text)) for e in examples])

    return SentimentData(tuple(dict.fromkeys(sources)), vocab, encode(train), encode(valid), encode(test))
