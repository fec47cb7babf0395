"""The Tatoeba French-English pairs: normalisation, filtering, split, vocabulary, batches.

The PyTorch tutorial's pipeline, as library code: read the bundled `corpora/eng-fra.txt.xz`
(English<TAB>French), normalise both sides exactly as the tutorial does, keep the short
"subject + be" sentences, put every pair whose French side hashes to 0 (mod 10) in the
held-out split, build one `Vocabulary` per language from the training split, and encode
the pairs for length-bucketed batches (`core.batching`).
"""

import functools
import lzma
import os
import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from torch.utils.data import DataLoader, Dataset

from ..core.batching import BucketBatchSampler, collate
from ..core.checks import Call, check_count, checked
from ..core.errors import InputError, echo
from ..core.split import checksum_split
from ..core.text import DROPPED_CATEGORIES
from ..core.vocabulary import Vocabularies, Vocabulary
from ..model.defaults import EVAL_SPLITS, MAX_WORDS, SPLITS

CORPUS_PATH = Path(__file__).resolve().parent.parent / "corpora" / "eng-fra.txt.xz"
"""The bundled Tatoeba pairs (135,842 lines, English<TAB>French, CC-BY 2.0 FR)."""

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
"""The tutorial's English prefixes ("subject + be"), matched on the normalised English side."""


class Pair(NamedTuple):
    """One normalised sentence pair: French is the source, English the target."""

    source: str
    target: str


def _check_text(call: Call) -> None:
    s = call.s
    if isinstance(s, bytes | bytearray):
        raise InputError(f"the sentence must be a string, got bytes {echo(s, 60)}; decode it first")
    if not isinstance(s, str):
        raise InputError(f"the sentence must be a string, got {type(s).__name__}")


@checked(_check_text)
# --8<-- [start:normalize]
def normalize_string(s: str) -> str:
    """Lowercase, strip, drop accents, split off `.!?`, and turn every other non-letter into a space."""
    s = unicode_to_ascii(s.lower().strip())
    s = re.sub(r"([.!?])", r" \1", s)  # "fatigue." -> "fatigue ."
    s = re.sub(r"[^a-zA-Z.!?]+", r" ", s)  # "j'ai" -> "j ai", "\u202f!" -> " !"
    return s


def unicode_to_ascii(s: str) -> str:
    """Drop accents and invisible characters: decompose (NFD), remove combining marks and format characters."""
    if s.isascii():
        return s  # nothing to decompose: the same result, faster
    return "".join(c for c in unicodedata.normalize("NFD", s) if unicodedata.category(c) not in DROPPED_CATEGORIES)


# --8<-- [end:normalize]


def split_lines(text: str) -> list[str]:
    r"""The lines of `text`: each ends at ``\n``, ``\r\n`` or a lone ``\r`` (old Mac files), never at another separator.

    `str.splitlines` also breaks at U+0085, U+2028, U+2029, form feed, vertical tab and the
    other control separators, so one input line would give two translations; here they stay
    inside the sentence, which normalises or refuses them like any other character.
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the line end that ends the last line starts no new one
    return lines


# --8<-- [start:read_lines]
def read_lines(path: str | Path | None = None) -> list[tuple[str, str]]:
    """Read the raw (English, French) lines of an xz-compressed or plain tab-separated file.

    Args:
        path: the file; the bundled corpus by default.

    Raises:
        InputError: the file is missing or a directory, is not UTF-8, or a line does not hold two columns.
    """
    path = Path(path) if path is not None else CORPUS_PATH
    text = _read_text(path)  # the whole file, decompressed when it ends in .xz; every line holds a tab
    lines = []
    for line in text.splitlines():
        if not line:
            continue
        english, french, *_ = line.split("\t")  # further columns are ignored
        lines.append((english, french))
    return lines


# --8<-- [end:read_lines]


def _read_text(path: Path) -> str:
    if path.is_dir():
        raise InputError(f"corpus file {path} is a directory, expected an English<TAB>French text file")
    opener = lzma.open if path.suffix == ".xz" else open
    try:
        with opener(path, "rt", encoding="utf-8-sig") as handle:  # -sig: a byte-order mark is not text
            text = handle.read()
    except FileNotFoundError as error:
        raise InputError(f"corpus file not found: {path}") from error
    except (lzma.LZMAError, EOFError) as error:
        raise InputError(f"corpus file {path} is not a valid xz file: {error}") from error
    except UnicodeDecodeError as error:
        raise InputError(f"corpus file {path} is not UTF-8 text: {error}") from error
    except ValueError as error:  # a NUL character in the path: no file can have that name
        raise InputError(f"corpus file {echo(str(path), 80)} is not a valid path: {error}") from None
    _check_columns(path, text)
    return text


def _check_columns(path: Path, text: str) -> None:
    """Every line that is not empty holds English<TAB>French (more columns may follow)."""
    for number, line in enumerate(text.splitlines(), start=1):
        if line and "\t" not in line:
            raise InputError(f"{path}:{number}: expected English<TAB>French, got {echo(line, 60)}")


# --8<-- [start:filter]
def keep_pair(pair: Pair, max_words: int = MAX_WORDS, prefixes: Sequence[str] = ENG_PREFIXES) -> bool:
    """The tutorial's filter: both sides at most `max_words` words, English starting with a prefix."""
    return (
        len(pair.source.split(" ")) <= max_words
        and len(pair.target.split(" ")) <= max_words
        and pair.target.startswith(tuple(prefixes))
    )


# --8<-- [end:filter]


def _check_load_options(call: Call) -> None:
    max_words, prefixes, path = call.max_words, call.prefixes, call.path
    check_count("max_words", max_words)
    if isinstance(prefixes, str | bytes | Iterator) or not isinstance(prefixes, Iterable):  # read here, then again
        raise InputError(f"prefixes must be a list of strings, got {echo(prefixes, 80)}")
    prefixes = tuple(prefixes)
    if not all(isinstance(prefix, str) for prefix in prefixes):
        raise InputError(f"prefixes must be a list of strings, got {echo(prefixes, 80)}")
    if path is not None and (not isinstance(path, str | os.PathLike) or isinstance(path, bytes)):
        raise InputError(f"path must be a file name (str or Path), got {echo(path, 80)}")


@checked(_check_load_options)
# --8<-- [start:load_pairs]
def load_pairs(
    max_words: int = MAX_WORDS,
    prefixes: Sequence[str] = ENG_PREFIXES,
    path: str | Path | None = None,
) -> list[Pair]:
    """Read, normalise and filter the corpus: the tutorial's 5,318 pairs with the defaults.

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


def _check_split(call: Call) -> None:
    pairs, split, eval_split = call.pairs, call.split, call.eval_split
    if not isinstance(split, str) or split not in SPLITS:
        raise InputError(f"split must be one of {', '.join(SPLITS)}, got {echo(split)}")
    if not isinstance(eval_split, str) or eval_split not in EVAL_SPLITS:
        raise InputError(f"eval_split must be one of {', '.join(EVAL_SPLITS)}, got {echo(eval_split)}")
    if isinstance(pairs, str | bytes | bytearray | dict | Iterator) or not isinstance(pairs, Iterable):  # read twice
        raise InputError(f"pairs must be a list of Pair(source, target), got {type(pairs).__name__}")
    for index, pair in enumerate(pairs):
        if not isinstance(pair, Pair) or not all(isinstance(side, str) for side in pair):
            raise InputError(f"pairs[{index}] must be a Pair(source, target) of two strings, got {echo(pair, 80)}")


@checked(_check_split)
# --8<-- [start:split]
def split_pairs(
    pairs: Iterable[Pair], split: str = "by_english", eval_split: str = "test"
) -> tuple[list[Pair], list[Pair]]:
    """Split into (train, test) by a checksum of one side of each pair (`SPLITS`).

    ``by_english`` (the default) keys on the English target: pairs that translate to the same
    English sentence all fall on one side ("je suis paresseux ." and "je suis faineante ." ->
    "i m lazy ." both train; the six French sentences of "you re big ." all test), so no held-out
    target was seen in training. ``by_french`` keys on the French source:
    it keeps French sentences apart, but not their translations.

    With ``eval_split="dev"`` it returns (train without dev, dev) instead: the development split
    takes about a tenth of the training split by the same rule and side (salted with `DEV_SALT`),
    so under ``by_english`` no dev target is a training or test target. The test pairs are
    dropped, so that choices made on dev never read the test split.

    Raises:
        InputError: an unknown split or eval_split name, or pairs that are not a list of `Pair`.
    """

    def side(pair: Pair) -> str:
        return getattr(pair, SPLITS[split])

    train, test = checksum_split(pairs, key=side, held_out=1, modulus=10)
    if eval_split == "test":
        return train, test
    return checksum_split(train, key=side, held_out=1, modulus=10, salt=DEV_SALT)  # (train without dev, dev)


DEV_SALT = "dev:"
"""The development split's checksum salt: the test rule again, drawn independently of it."""


def target_overlap(train: Sequence[Pair], test: Sequence[Pair]) -> float:
    """The share of held-out pairs whose English sentence is also a training target, word for word."""
    seen = {pair.target for pair in train}
    return sum(pair.target in seen for pair in test) / max(len(test), 1)


# --8<-- [end:split]


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


def make_loader(dataset: TranslationDataset, batch_size: int, shuffle: bool = True, seed: int = 0) -> DataLoader:
    """A `DataLoader` over `dataset` with length buckets (`BucketBatchSampler`) and `collate`."""
    sampler = BucketBatchSampler([(len(s), len(t)) for s, t in dataset.examples], batch_size, shuffle, seed)
    return DataLoader(dataset, batch_sampler=sampler, collate_fn=collate)
