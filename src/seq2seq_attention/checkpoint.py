"""Checkpoints: safetensors for tensors, JSON for everything else, no pickle anywhere.

A checkpoint is a directory:

* `checkpoint.json`: the model config (`build_model`'s arguments), both vocabularies, the
  training state (config, finished epochs, loss history, the optimizer's non-tensor
  settings) and, for every tensor file, its name and SHA-256;
* `model-<hash>.safetensors`: the model's weights;
* `training-<hash>.safetensors` (optional): the optimizer's tensors and the RNG states, so
  that an interrupted run resumes with the same losses as an uninterrupted one.

Every file is written to a temporary file in the same directory and renamed into place
(`os.replace`, atomic on POSIX). The tensor files are named after their content and the
JSON is renamed last, so a crash at any moment leaves either the old checkpoint or the new
one, never a mix. Loading checks the hashes, the config and every tensor's name and shape,
and raises one `UserError` that says what is wrong.
"""

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load as load_tensors
from safetensors.torch import save as save_tensors

from .data import Vocabularies, Vocabulary
from .errors import UserError
from .models import Seq2Seq, build_model

FORMAT = "seq2seq-attention/checkpoint"
VERSION = 1
JSON_NAME = "checkpoint.json"


@dataclass
class Checkpoint:
    """A loaded checkpoint.

    Attributes:
        model: the rebuilt `Seq2Seq`, on the requested device, in eval mode.
        vocabs: the source and target vocabularies.
        config: `build_model`'s arguments.
        training: the training state saved with it (empty for a weights-only checkpoint).
        path: the checkpoint directory.
    """

    model: Seq2Seq
    vocabs: Vocabularies
    config: dict
    training: dict = field(default_factory=dict)
    path: Path | None = None


def _write_atomic(path: Path, data: bytes) -> None:
    """Write `data` to a temporary file next to `path`, flush it to disk, then rename it over `path`."""
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.chmod(temp, 0o644)  # mkstemp makes it private; a checkpoint is meant to be shared
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _store(directory: Path, stem: str, tensors: dict[str, torch.Tensor]) -> dict:
    data = save_tensors({name: t.detach().cpu().contiguous() for name, t in tensors.items()})
    digest = hashlib.sha256(data).hexdigest()
    name = f"{stem}-{digest[:16]}.safetensors"
    _write_atomic(directory / name, data)
    return {"name": name, "sha256": digest, "bytes": len(data)}


def _optimizer_tensors(optimizer: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], dict]:
    """Split an optimizer's state dict into tensors (for safetensors) and the rest (for JSON)."""
    state = optimizer.state_dict()
    tensors: dict[str, torch.Tensor] = {}
    scalars: dict[str, dict[str, float | int | bool | None]] = {}
    for param_id, values in state["state"].items():
        for key, value in values.items():
            if isinstance(value, torch.Tensor):
                tensors[f"optimizer.{param_id}.{key}"] = value
            else:
                scalars.setdefault(str(param_id), {})[key] = value
    return tensors, {"param_groups": state["param_groups"], "scalars": scalars}


def _rng_tensors() -> dict[str, torch.Tensor]:
    tensors = {"rng.cpu": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        for index, rng in enumerate(torch.cuda.get_rng_state_all()):
            tensors[f"rng.cuda.{index}"] = rng
    return tensors


def save_checkpoint(
    path: str | Path,
    model: Seq2Seq,
    vocabs: Vocabularies,
    *,
    training: dict | None = None,
    optimizer: torch.optim.Optimizer | None = None,
    save_rng: bool = False,
) -> Path:
    """Save a model (and optionally what resuming its training needs) to the directory `path`.

    Args:
        path: the checkpoint directory; created if missing, its old checkpoint replaced.
        model: a model made by `build_model` (its `config` rebuilds it).
        vocabs: the vocabularies the model was trained with.
        training: JSON-ready training state (config, epoch, history).
        optimizer: its state is saved for resuming.
        save_rng: save the CPU (and CUDA) random generator states for resuming.

    Returns:
        The checkpoint directory.
    """
    if model.config is None:
        raise ValueError("the model has no config; build it with build_model so that it can be rebuilt")
    directory = Path(path)
    directory.mkdir(parents=True, exist_ok=True)
    files = {"model": _store(directory, "model", model.state_dict())}
    state = dict(training or {})
    extra: dict[str, torch.Tensor] = {}
    if optimizer is not None:
        optimizer_tensors, optimizer_rest = _optimizer_tensors(optimizer)
        extra.update(optimizer_tensors)
        state["optimizer"] = optimizer_rest
    if save_rng:
        extra.update(_rng_tensors())
    if extra:
        files["training"] = _store(directory, "training", extra)
    document = {
        "format": FORMAT,
        "version": VERSION,
        "config": model.config,
        "vocabularies": {"source": vocabs.source.to_dict(), "target": vocabs.target.to_dict()},
        "training": state,
        "files": files,
    }
    _write_atomic(directory / JSON_NAME, json.dumps(document, ensure_ascii=False, indent=1).encode("utf-8"))
    keep = {entry["name"] for entry in files.values()}
    for stale in directory.glob("*.safetensors"):
        if stale.name not in keep and stale.name.startswith(("model-", "training-")):
            stale.unlink(missing_ok=True)
    return directory


def _read_document(directory: Path) -> dict:
    json_path = directory / JSON_NAME
    if not directory.exists():
        raise UserError(f"no checkpoint at {directory}: the directory does not exist")
    if not json_path.is_file():
        raise UserError(f"no checkpoint at {directory}: {JSON_NAME} is missing")
    try:
        document = json.loads(json_path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise UserError(f"checkpoint file {json_path} is corrupted (not valid JSON: {error})") from error
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise UserError(f"{json_path} is not a seq2seq-attention checkpoint (format is not {FORMAT!r})")
    if document.get("version") != VERSION:
        raise UserError(f"{json_path} has checkpoint version {document.get('version')!r}, this code reads {VERSION}")
    for key in ("config", "vocabularies", "files"):
        if not isinstance(document.get(key), dict):
            raise UserError(f"checkpoint file {json_path} is corrupted: {key!r} is missing")
    return document


def _read_tensors(directory: Path, entry: object, what: str) -> dict[str, torch.Tensor]:
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or "/" in entry["name"]:
        raise UserError(f"checkpoint {directory} is corrupted: the entry for the {what} file is malformed")
    path = directory / entry["name"]
    if not path.is_file():
        raise UserError(f"checkpoint {directory} is incomplete: {entry['name']} ({what}) is missing")
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != entry.get("sha256"):
        raise UserError(
            f"checkpoint file {path} is corrupted or truncated: its SHA-256 does not match {JSON_NAME} "
            f"({len(data)} bytes, expected {entry.get('bytes')})"
        )
    try:
        return load_tensors(data)
    except (SafetensorError, ValueError, RuntimeError) as error:
        raise UserError(f"checkpoint file {path} is not a valid safetensors file: {error}") from error


def load_checkpoint(path: str | Path, device: torch.device | str = "cpu") -> Checkpoint:
    """Load a checkpoint saved by `save_checkpoint` and rebuild its model.

    Args:
        path: the checkpoint directory.
        device: where to put the model.

    Raises:
        UserError: the directory or a file is missing, a file is corrupted or truncated, or
            the weights do not match the config (names or shapes), with what was expected.
    """
    directory = Path(path)
    document = _read_document(directory)
    config = document["config"]
    try:
        vocabs = Vocabularies(
            Vocabulary.from_dict(document["vocabularies"]["source"]),
            Vocabulary.from_dict(document["vocabularies"]["target"]),
        )
    except (KeyError, TypeError) as error:
        raise UserError(f"checkpoint {directory} is corrupted: the vocabularies are missing ({error!r})") from error
    try:
        model = build_model(**config)
    except (TypeError, ValueError) as error:
        raise UserError(f"checkpoint {directory} has an unusable model config {config}: {error}") from error
    for size, vocab in (("src_vocab_size", vocabs.source), ("tgt_vocab_size", vocabs.target)):
        if config[size] != len(vocab):
            raise UserError(
                f"checkpoint {directory} is mismatched: {size}={config[size]} but the saved vocabulary has {len(vocab)}"
            )
    weights = _read_tensors(directory, document["files"].get("model"), "weights")
    expected = model.state_dict()
    missing = sorted(set(expected) - set(weights))
    unexpected = sorted(set(weights) - set(expected))
    wrong = [
        f"{name} {tuple(weights[name].shape)} (expected {tuple(t.shape)})"
        for name, t in expected.items()
        if name in weights and weights[name].shape != t.shape
    ]
    if missing or unexpected or wrong:
        parts = [
            f"missing {missing[:3]}" if missing else "",
            f"unexpected {unexpected[:3]}" if unexpected else "",
            f"wrong shapes {wrong[:3]}" if wrong else "",
        ]
        raise UserError(
            f"checkpoint {directory} does not match a {config['decoder']!r} model with H={config['hidden_size']}: "
            + "; ".join(p for p in parts if p)
        )
    model.load_state_dict(weights)
    model.to(device).eval()
    return Checkpoint(model, vocabs, config, document.get("training") or {}, directory)


def restore_training_state(checkpoint: Checkpoint, optimizer: torch.optim.Optimizer | None) -> None:
    """Put the saved optimizer state and RNG states back, to resume training where it stopped.

    Raises:
        UserError: the checkpoint holds no training state, or it does not fit `optimizer`.
    """
    assert checkpoint.path is not None
    document = _read_document(checkpoint.path)
    entry = document["files"].get("training")
    if entry is None:
        raise UserError(f"checkpoint {checkpoint.path} holds weights only, no training state to resume from")
    tensors = _read_tensors(checkpoint.path, entry, "training state")
    if optimizer is not None:
        saved = checkpoint.training.get("optimizer")
        if not isinstance(saved, dict):
            raise UserError(f"checkpoint {checkpoint.path} holds no optimizer state")
        state: dict[int, dict] = {}
        for name, tensor in tensors.items():
            if name.startswith("optimizer."):
                _, param_id, key = name.split(".", 2)
                state.setdefault(int(param_id), {})[key] = tensor
        for param_id, values in saved.get("scalars", {}).items():
            state.setdefault(int(param_id), {}).update(values)
        try:
            optimizer.load_state_dict({"state": state, "param_groups": saved["param_groups"]})
        except (KeyError, ValueError) as error:
            raise UserError(f"checkpoint {checkpoint.path}: the optimizer state does not fit: {error}") from error
    if "rng.cpu" in tensors:
        torch.set_rng_state(tensors["rng.cpu"])
    cuda_states = [tensors[f"rng.cuda.{i}"] for i in range(torch.cuda.device_count()) if f"rng.cuda.{i}" in tensors]
    if cuda_states and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(cuda_states)
