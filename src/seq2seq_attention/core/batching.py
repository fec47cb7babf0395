"""Batches for both tasks: padded tensors with their lengths and their one mask, and the bucket sampler.

Sequences of different lengths are padded on the right with `PAD_IDX`; every batch carries
the real lengths, and `lengths_to_mask` is the only place a padding mask is made from them.
`BucketBatchSampler` chooses which examples share a batch (equal lengths where possible).
"""

from collections.abc import Iterator, Sequence
from typing import NamedTuple

import torch
from torch.utils.data import Sampler

from ..model.tensors import lengths_to_mask
from ..model.tokens import PAD_IDX
from .checks import Call, check_count, checked
from .errors import InputError, echo

DECODE_BATCH_SIZE = 256
"""Sentences per batch where nothing is learned (translating, evaluating, predicting): no gradient is kept, so a
batch may be larger than a training batch."""


def _check_examples(call: Call) -> None:
    """A non-empty list of (source indices, target indices or a number) pairs."""
    examples = call.examples
    if isinstance(examples, str | bytes | dict) or not isinstance(examples, Sequence) or not examples:
        raise InputError(f"examples must be a non-empty list of (source, target) pairs, got {echo(examples, 80)}")
    for number, example in enumerate(examples):
        ok = isinstance(example, tuple | list) and len(example) == 2 and _is_indices(example[0]) and len(example[0])
        label = ok and isinstance(example[1], int | float) and not isinstance(example[1], bool)
        if not ok or not (label or _is_indices(example[1])):
            raise InputError(
                f"examples[{number}] must be (source indices, target indices or a label), got {echo(example, 80)}"
            )


@checked(_check_examples)
# --8<-- [start:pad]
def collate(examples: Sequence[tuple[Sequence[int], Sequence[int] | float]]) -> "Batch":
    """Pad sources and targets (or stack labels), keep lengths, build the source mask once.

    Each example is ``(source indices, target indices)`` or ``(source indices, label)``.
    """
    source, lengths = pad_sequences([src for src, _ in examples])  # (B, S), (B,)
    source_mask = lengths_to_mask(lengths, source.size(1))  # (B, S)
    targets = [tgt for _, tgt in examples]
    if targets and isinstance(targets[0], int | float):
        return Batch(source, lengths, source_mask, torch.tensor(targets, dtype=torch.float))  # labels (B,) in a Batch
    target, target_lengths = pad_sequences(targets)  # (B, T), (B,)
    return Batch(source, lengths, source_mask, target, target_lengths)


def pad_sequences(sequences: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Stack index lists into one `PAD_IDX`-padded tensor and their lengths.

    Shapes:
        returns: (B, L) long, and (B,) long lengths, L the longest sequence.
    """
    lengths = torch.tensor([len(s) for s in sequences], dtype=torch.long)  # (B,)
    if len(sequences) and bool((lengths == lengths[0]).all()):  # a length bucket: one tensor call
        return torch.tensor([list(s) for s in sequences], dtype=torch.long), lengths  # (B, L), (B,)
    padded = torch.full((len(sequences), int(lengths.max()) if len(sequences) else 0), PAD_IDX, dtype=torch.long)
    for row, sequence in enumerate(sequences):
        padded[row, : len(sequence)] = torch.tensor(sequence, dtype=torch.long)
    return padded, lengths  # (B, L), (B,)


class Batch(NamedTuple):
    """A padded batch, for translation (a target sequence) and classification (a label).

    Shapes:
        source: (B, S) long, padded with `PAD_IDX`.
        lengths: (B,) long, the real source lengths.
        source_mask: (B, S) bool, True on real source positions (`lengths_to_mask`).
        target: (B, T) long padded target sequences, or (B,) float labels.
        target_lengths: (B,) long for target sequences; None for labels.
    """

    source: torch.Tensor
    lengths: torch.Tensor
    source_mask: torch.Tensor
    target: torch.Tensor
    target_lengths: torch.Tensor | None = None

    def to(self, device: torch.device | str) -> "Batch":
        return Batch(*(None if t is None else t.to(device) for t in self))


# --8<-- [end:pad]


def _is_indices(value: object) -> bool:
    return (
        isinstance(value, Sequence)
        and not isinstance(value, str | bytes)
        and all(isinstance(i, int) and not isinstance(i, bool) for i in value)
    )


class BucketBatchSampler(Sampler[list[int]]):
    """Batches of examples with equal lengths where possible, in random order.

    Examples are shuffled, sorted (stably) by their lengths, cut into batches of
    `batch_size`, and the batches are shuffled: most batches need no padding at all, and
    the order still changes every epoch. The order depends only on `seed` and the epoch
    (`set_epoch`), so a resumed run sees the same batches as an uninterrupted one.

    Args:
        lengths: one sortable length key per example, e.g. (source length, target length).
        batch_size: examples per batch (the last batch of a length group may be smaller).
        shuffle: shuffle examples and batches; False keeps the sorted order.
        seed: seeds the shuffling.
    """

    def __init__(self, lengths: Sequence[object], batch_size: int, shuffle: bool = True, seed: int = 0):
        check_count("batch_size", batch_size)
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
