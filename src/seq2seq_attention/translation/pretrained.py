"""The translators shipped inside the package (trained by `scripts/train_seq2seq.sh`), found by name."""

from dataclasses import dataclass
from pathlib import Path

from ..core.checkpoint import JSON_NAME, load_checkpoint
from ..core.errors import InputError, echo

PRETRAINED_DIR = Path(__file__).resolve().parent.parent / "pretrained"
"""The folder of the packaged checkpoints: `bahdanau` (the walkthrough's translator), `bahdanau-bi` (the same
decoder after a bidirectional encoder: the best recipe found) and `gru` (no attention)."""

DEFAULT_PRETRAINED = "bahdanau"
"""The packaged checkpoint that `translate` and `plot-attention` load when none is named."""


def packaged_names() -> tuple[str, ...]:
    """The names of the packaged checkpoints (the folders of `PRETRAINED_DIR` that hold one), sorted."""
    return tuple(sorted(p.name for p in PRETRAINED_DIR.iterdir() if (p / JSON_NAME).is_file()))


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
    """

    name: str
    summary: str
    bleu: float | None
    bleu_interval: tuple[float, float] | None
    split: str
    exact_match: float | None


def describe_packaged(name: str) -> PackagedModel:
    """Read the packaged checkpoint `name` (weights included, so a broken one is reported) and describe it."""
    checkpoint = load_checkpoint(packaged_checkpoint(name), "cpu", task="translation")
    config, training = checkpoint.config, checkpoint.training
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
    )
