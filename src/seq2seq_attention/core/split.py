"""A split of a data set into training and held-out parts by a checksum of each item (both tasks)."""

import zlib
from collections.abc import Callable, Iterable
from typing import TypeVar

from .checks import Call, checked
from .errors import InputError

Item = TypeVar("Item")


def _check_split(call: Call) -> None:
    held_out, modulus = call.held_out, call.modulus
    if not 0 < held_out < modulus:
        raise InputError(f"held_out must lie in (0, {modulus}), got {held_out}")


@checked(_check_split)
# --8<-- [start:split]
def checksum_split(
    items: Iterable[Item], key: Callable[[Item], str], held_out: int, modulus: int = 100, salt: str = ""
) -> tuple[list[Item], list[Item]]:
    """Split into (train, test) by a checksum of each item's key, not by a random draw.

    An item is held out when ``crc32(salt + key(item)) % modulus < held_out``: the split is the
    same on every machine and Python version, and items with the same key always land on the
    same side. A different `salt` gives an independent split.

    Raises:
        InputError: `held_out` outside (0, modulus).
    """
    train, test = [], []
    for item in items:
        bucket = zlib.crc32((salt + key(item)).encode("utf-8")) % modulus
        (test if bucket < held_out else train).append(item)
    return train, test


# --8<-- [end:split]
