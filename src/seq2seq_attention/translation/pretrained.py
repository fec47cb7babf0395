"""The translators shipped inside the package (trained by `scripts/train_seq2seq.sh`), found by name.

This module imports neither torch nor the checkpoint format: `models`, `--help` and the choices of
`--model` read the checkpoints' JSON records (and check the weights file against the SHA-256 its
record holds), so they answer at once.
"""

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import InputError, echo

JSON_NAME = "checkpoint.json"
"""The record of a checkpoint directory (`core.checkpoint.JSON_NAME`, which a test keeps equal)."""

PRETRAINED_DIR = Path(__file__).resolve().parent.parent / "pretrained"
"""The folder of the packaged checkpoints: `bahdanau` (the walkthrough's translator), `bahdanau-bi` (the same
decoder after a bidirectional encoder: the best recipe found) and `gru` (no attention)."""

DEFAULT_PRETRAINED = "bahdanau"
"""The packaged checkpoint that `translate` and `plot-attention` load when none is named."""


def packaged_names(*, attention: bool = False) -> tuple[str, ...]:
    """The names of the packaged checkpoints (the folders of `PRETRAINED_DIR` that hold one), sorted;
    with `attention`, only those whose decoder has an attention (what `plot-attention` can draw)."""
    names = sorted(p.name for p in PRETRAINED_DIR.iterdir() if (p / JSON_NAME).is_file())
    if attention:
        names = [name for name in names if _record(name).get("config", {}).get("decoder") != "gru"]
    return tuple(names)


def packaged_max_words() -> int:
    """The longest sentence (in words, punctuation counted) that every packaged model takes: their training limit."""
    limits = []
    for name in packaged_names():
        training = _record(name).get("training")
        saved = training.get("config") if isinstance(training, dict) else None
        limit = saved.get("max_words") if isinstance(saved, dict) else None
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise InputError(f"packaged checkpoint {name}: its record holds no max_words; reinstall the package")
        limits.append(limit)
    return min(limits)


def _record(name: str) -> dict:
    """The JSON record of the packaged checkpoint `name`.

    Raises:
        InputError: it is not readable JSON.
    """
    path = PRETRAINED_DIR / name / JSON_NAME
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise InputError(f"packaged checkpoint {path} is unreadable ({echo(error)}); reinstall the package") from None
    if not isinstance(record, dict) or not isinstance(record.get("config"), dict):
        raise InputError(f"packaged checkpoint {path} is not a checkpoint record; reinstall the package")
    return record


def _check_weights_file(name: str, record: dict) -> None:
    """The weights file the record names is there with the SHA-256 the record holds."""
    entry = record.get("files", {}).get("model") if isinstance(record.get("files"), dict) else None
    file_name = entry.get("name") if isinstance(entry, dict) else None
    if not isinstance(file_name, str) or Path(file_name).name != file_name:
        raise InputError(f"packaged checkpoint {name}: its record names no weights file; reinstall the package")
    path = PRETRAINED_DIR / name / file_name
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        raise InputError(f"packaged checkpoint {name}: {file_name} is missing; reinstall the package") from None
    if digest != entry.get("sha256"):
        raise InputError(
            f"packaged checkpoint {name}: {file_name} is corrupted or truncated (its SHA-256 does not match "
            f"{JSON_NAME}); reinstall the package"
        )


def packaged_checkpoint(name: str) -> Path:
    """The folder of the packaged checkpoint `name`, wherever the command runs from.

    Raises:
        InputError: no packaged checkpoint has that name.
    """
    if name not in packaged_names():
        raise InputError(f"no packaged model named {echo(name)}; choose one of {', '.join(packaged_names())}")
    return PRETRAINED_DIR / name


def default_checkpoint() -> Path:
    """The packaged checkpoint that the command line loads when neither `--model` nor `--checkpoint` is given."""
    return PRETRAINED_DIR / DEFAULT_PRETRAINED


@dataclass(frozen=True)
class PackagedModel:
    """What `seq2seq-attention models` says of one packaged checkpoint, read from its own record.

    Attributes:
        name: the name `--model` takes.
        summary: what it is: decoder, attention score, encoder, hidden size and epochs trained.
        bleu: the BLEU measured when it was trained, on `split`, with its 95% bootstrap interval.
        split: the evaluation split and its size, e.g. ``by_english test, 465 pairs``.
        exact_match: the share of held-out sentences translated exactly.
        max_words: the most words (punctuation counted) of a sentence it translates: its training limit.
    """

    name: str
    summary: str
    bleu: float | None
    bleu_interval: tuple[float, float] | None
    split: str
    exact_match: float | None
    max_words: int | None


def describe_packaged(name: str) -> PackagedModel:
    """Describe the packaged checkpoint `name` from its record (its weights file checked against the SHA-256 the
    record holds, so a broken one is reported), without loading the model."""
    packaged_checkpoint(name)
    record = _record(name)
    _check_weights_file(name, record)
    config = record["config"]
    training = record.get("training") if isinstance(record.get("training"), dict) else {}
    saved = training.get("config") if isinstance(training.get("config"), dict) else {}
    decoder = config.get("decoder")
    if decoder == "gru":
        kind = "no attention (plain GRU decoder)"
    else:
        kind = f"{str(decoder).capitalize()} attention, {config.get('score')} score"
    encoder = "bidirectional encoder" if config.get("bidirectional") else "one-way encoder"
    summary = f"{kind}, {encoder}, H={config.get('hidden_size')}, {training.get('epoch', '?')} epochs"
    evaluation = training.get("evaluation") or {}
    interval = evaluation.get("bleu_interval")
    split_name = str(evaluation.get("split", saved.get("split", "?")))  # "by_english", or "by_english:dev"
    split = f"{split_name.replace(':', ' ') if ':' in split_name else split_name + ' test'}, "
    split += f"{evaluation.get('pairs', '?')} pairs"
    return PackagedModel(
        name=name,
        summary=summary,
        bleu=evaluation.get("bleu"),
        bleu_interval=tuple(interval) if isinstance(interval, list) and len(interval) == 2 else None,
        split=split,
        exact_match=evaluation.get("exact_match"),
        max_words=saved.get("max_words") if isinstance(saved.get("max_words"), int) else None,
    )


def model_title(config: dict) -> str:
    """A translator's name as `models` names the packaged ones: its decoder, with ``-bi`` after a bidirectional
    encoder (``bahdanau``, ``bahdanau-bi``, ``gru``)."""
    return f"{config.get('decoder')}" + ("-bi" if config.get("bidirectional") else "")
