"""Checkpoints: safetensors for tensors, JSON for everything else, no pickle anywhere.

A checkpoint is a directory:

* `checkpoint.json`: the model config (its `task` and its builder's arguments), the vocabularies, the
  training state (config, finished epochs, loss history, the optimizer's non-tensor
  settings) and, for every tensor file, its name and SHA-256;
* `model-<hash>.safetensors`: the model's weights;
* `training-<hash>.safetensors` (optional): the optimizer's tensors and the RNG states, so
  that an interrupted run resumes with the same losses as an uninterrupted one.

Every file is written to a staging folder in the same directory and renamed into place only
when all were written (`core.files.staged_writes`), by one writer at a time
(`core.files.folder_lock`). The tensor files are named after their content and the JSON is
renamed last, so a crash at any moment leaves either the old checkpoint or the new one, never a
mix, and two writers leave the last one whole. Saving and loading refuse a tensor that holds NaN or infinity (a
model that cannot compute), naming it. Loading checks the hashes, the config and every tensor's
name, shape and dtype, and raises one `InputError` that says what is wrong; resuming checks the training
state against the optimizer the same way before setting anything (`restore_training_state`). Both tasks use this
one format: a model follows the `Checkpointable` protocol, and its config's `task` names the
builder that rebuilds it (`TASKS`: this layer imports the model's builders, never the reverse).
"""

import hashlib
import inspect
import json
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import torch
from safetensors import SafetensorError
from safetensors.torch import load as load_tensors
from safetensors.torch import save as save_tensors
from torch import nn

from ..model.classifier import build_classifier
from ..model.seq2seq import build_model
from .checks import is_int
from .errors import InputError, echo
from .files import check_destination, folder_lock, staged_writes
from .vocabulary import Vocabularies, Vocabulary

FORMAT = "seq2seq-attention/checkpoint"
VERSION = 3
"""Version 3: an attention's layers are its own (`attention.Wa`). Version 2 (one format for both
tasks, the config naming its `task`) kept them under `attention.score` and is read with the names
of `RENAMED`; version 1 checkpoints are converted by `scripts/convert_checkpoints.py`."""
READABLE_VERSIONS = (2, 3)
JSON_NAME = "checkpoint.json"

RENAMED = {2: (("attention.score.", "attention."),)}
"""Tensor names of older versions and what they are called now (prefix, replacement), by version."""


@runtime_checkable
class Checkpointable(Protocol):
    """What a model must have to be saved by `save_checkpoint` and rebuilt by `load_checkpoint`.

    Attributes:
        config: the model's `task` (a key of `model_builders()`) and its builder's keyword
            arguments: ``model_builders()[config["task"]](**rest)`` builds the same model, untrained.
            The builders (`build_model`, `build_classifier`) set it.
        vocabulary_sizes: the size of each vocabulary the model was built for, by side
            (``"source"``, and ``"target"`` for a translator), checked against the saved vocabularies.
    """

    config: dict[str, Any]

    @property
    def vocabulary_sizes(self) -> dict[str, int]: ...

    def state_dict(self) -> Mapping[str, torch.Tensor]: ...

    def load_state_dict(self, state_dict: Mapping[str, torch.Tensor]) -> object: ...


TASKS: dict[str, tuple[Callable[..., Checkpointable], str]] = {
    "translation": (build_model, "a translator"),
    "sentiment": (build_classifier, "a sentiment classifier"),
}
"""Each task's builder (``builder(**config)`` rebuilds a model of it) and what its model is called in messages."""

TASK_NAMES = {task: name for task, (_, name) in TASKS.items()}
"""What a model of each task is called in messages (`load_checkpoint`'s `task`), by task."""


def model_builders() -> dict[str, Callable[..., Checkpointable]]:
    """The builder of each task's models, by the `task` their config names."""
    return {task: builder for task, (builder, _) in TASKS.items()}


@dataclass
class Checkpoint:
    """A loaded checkpoint.

    Attributes:
        model: the rebuilt model, on the requested device, in eval mode.
        vocabs: its vocabularies (a classifier has a source vocabulary only).
        config: the model's config: its `task` and the builder's arguments.
        training: the training state saved with it (empty for a weights-only checkpoint).
        path: the checkpoint directory.
        files: the name and SHA-256 of each of its tensor files (`model`, and `training` when saved).
    """

    model: nn.Module
    vocabs: Vocabularies
    config: dict
    training: dict = field(default_factory=dict)
    path: Path | None = None
    files: dict = field(default_factory=dict)


def _check_finite(tensors: dict[str, torch.Tensor], where: str) -> None:
    """Refuse a floating-point tensor that holds NaN or infinity, naming it (one pass over each tensor)."""
    for name, tensor in tensors.items():
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            bad = int((~torch.isfinite(tensor)).sum())
            raise InputError(
                f"{where}: tensor {name} {tuple(tensor.shape)} holds {bad} non-finite value(s) (NaN or infinity); "
                "a model with such weights cannot compute"
            )


def _serialize(stem: str, tensors: dict[str, torch.Tensor]) -> tuple[dict, bytes]:
    data = save_tensors(_unshared({name: t.detach().cpu().contiguous() for name, t in tensors.items()}))
    digest = hashlib.sha256(data).hexdigest()
    name = f"{stem}-{digest[:16]}.safetensors"
    return {"name": name, "sha256": digest, "bytes": len(data)}, data


def _unshared(tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """`tensors` with a copy of each one whose memory an earlier one uses (tied weights): safetensors
    refuses shared memory, and each name is loaded back into the module's one parameter."""
    seen: set[int] = set()
    result = {}
    for name, tensor in tensors.items():
        pointer = tensor.untyped_storage().data_ptr()
        result[name] = tensor.clone() if pointer in seen else tensor
        seen.add(pointer)
    return result


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


def _json_ready(value: object) -> object:
    """`value` with every non-finite float replaced by None: strict JSON has no NaN or Infinity."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _json_ready(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json_ready(item) for item in value]
    return value


def save_checkpoint(
    path: str | Path,
    model: nn.Module,
    vocabs: Vocabularies,
    *,
    training: dict | None = None,
    optimizer: torch.optim.Optimizer | None = None,
    save_rng: bool = False,
) -> Path:
    """Save a model (and optionally what resuming its training needs) to the directory `path`.

    The JSON document is built (and checked to be strict JSON) before any file is written, so
    a value that cannot be saved leaves the directory as it was.

    Args:
        path: the checkpoint directory; created if missing, its old checkpoint replaced (a
            checkpoint of another task, an ONNX export or a file there is refused).
        model: a model whose `config` (with its `task`) rebuilds it, as `build_model` and
            `build_classifier` set it.
        vocabs: the vocabularies the model was trained with.
        training: JSON-ready training state (config, epoch, history); non-finite floats are
            stored as null.
        optimizer: its state is saved for resuming.
        save_rng: save the CPU (and CUDA) random generator states for resuming.

    Returns:
        The checkpoint directory.

    Raises:
        InputError: the model does not follow `Checkpointable`, the training state is not JSON,
            a tensor holds NaN or infinity, `optimizer` updates tensors that are not the model's, or `path`
            holds an artifact of another kind.
    """
    config = model.config if isinstance(model, Checkpointable) else None
    if not isinstance(config, dict) or config.get("task") not in TASK_NAMES:
        raise InputError("the model has no config with a known task; build it with build_model or build_classifier")
    _check_save_arguments(model, vocabs, training, optimizer)
    state = dict(training or {})
    extra: dict[str, torch.Tensor] = {}
    if optimizer is not None:
        optimizer_tensors, optimizer_rest = _optimizer_tensors(optimizer)
        extra.update(optimizer_tensors)
        state["optimizer"] = optimizer_rest
    if save_rng:
        extra.update(_rng_tensors())
    vocabularies = {side: vocab.to_dict() for side, vocab in vocabs._asdict().items() if vocab is not None}
    document = {"format": FORMAT, "version": VERSION, "config": config, "vocabularies": vocabularies}
    document["training"] = _json_ready(state)
    try:
        json.dumps(document, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise InputError(f"the checkpoint cannot be saved as JSON: {error}") from error
    directory = _check_path(path)
    check_destination(directory, f"a {config['task']} checkpoint", overwrite=True, what="checkpoint directory")
    weights = model.state_dict()
    _check_finite(weights, f"refusing to save the {config['task']} model")
    _check_finite(extra, "refusing to save the training state")
    files, contents = {}, []
    for key, stem, tensors in (("model", "model", weights), ("training", "training", extra)):
        if tensors:
            files[key], data = _serialize(stem, tensors)
            contents.append((directory / files[key]["name"], data))
    document["files"] = files
    text = json.dumps(document, ensure_ascii=False, indent=1, allow_nan=False)
    contents.append((directory / JSON_NAME, text.encode("utf-8")))
    with folder_lock(directory, "checkpoint directory", wait=True):  # one writer: its files and JSON match
        with staged_writes(*(target for target, _ in contents)) as staged:
            for staged_path, (_, data) in zip(staged, contents, strict=True):
                staged_path.write_bytes(data)
        keep = {entry["name"] for entry in files.values()}
        for stale in directory.glob("*.safetensors"):
            if stale.name not in keep and stale.name.startswith(("model-", "training-")):
                stale.unlink(missing_ok=True)
    return directory


def _check_save_arguments(model: nn.Module, vocabs: object, training: object, optimizer: object) -> None:
    if not isinstance(vocabs, Vocabularies) or not isinstance(vocabs.source, Vocabulary):
        raise InputError(f"vocabs must be the model's Vocabularies, got {echo(vocabs, 80)}")
    if training is not None and not isinstance(training, dict):
        raise InputError(f"training must be a dict (JSON-ready), got {type(training).__name__}")
    if optimizer is not None and not isinstance(optimizer, torch.optim.Optimizer):
        raise InputError(f"optimizer must be a torch.optim.Optimizer, got {type(optimizer).__name__}")
    if optimizer is not None:
        own = {id(parameter) for parameter in model.parameters()}
        foreign = sum(id(p) not in own for group in optimizer.param_groups for p in group["params"])
        if foreign:
            raise InputError(
                f"the optimizer updates {foreign} tensor(s) that are not parameters of this model: its state would "
                "not fit the model when resumed; save the optimizer built on this model's parameters"
            )


def _check_path(path: object) -> Path:
    if not isinstance(path, str | os.PathLike) or isinstance(path, bytes) or path == "":
        raise InputError(f"the checkpoint path must be a directory name (str or Path), got {echo(path, 80)}")
    return Path(path)


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON")


def _read_document(directory: Path) -> dict:
    json_path = directory / JSON_NAME
    if not directory.exists():
        raise InputError(f"no checkpoint at {directory}: the directory does not exist")
    if not directory.is_dir():
        raise InputError(f"no checkpoint at {directory}: it is a file, expected a checkpoint directory")
    if not json_path.is_file():
        raise InputError(f"no checkpoint at {directory}: {JSON_NAME} is missing")
    try:
        document = json.loads(json_path.read_text(encoding="utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise InputError(f"checkpoint file {json_path} is corrupted (not valid JSON: {echo(error)})") from error
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise InputError(f"{json_path} is not a seq2seq-attention checkpoint (format is not {FORMAT!r})")
    if document.get("version") not in READABLE_VERSIONS:
        raise InputError(
            f"{json_path} has checkpoint version {echo(document.get('version'))}, this code reads "
            f"{' and '.join(map(str, READABLE_VERSIONS))}"
            + (" (convert it with scripts/convert_checkpoints.py)" if document.get("version") == 1 else "")
        )
    for key in ("config", "vocabularies", "files"):
        if not isinstance(document.get(key), dict):
            raise InputError(f"checkpoint file {json_path} is corrupted: {key!r} is missing or not an object")
    if not isinstance(document.get("training", {}), dict):
        raise InputError(f"checkpoint file {json_path} is corrupted: 'training' is not an object")
    _check_training_record(json_path, document.get("training", {}))
    return document


def _check_training_record(json_path: Path, training: dict) -> None:
    """The finished epochs (an int >= 0) and the history (a list of objects) that resuming reads."""
    epoch = training.get("epoch", 0)
    if not is_int(epoch) or epoch < 0:
        raise InputError(f"checkpoint file {json_path} is corrupted: 'epoch' must be an int >= 0, got {echo(epoch)}")
    history = training.get("history", [])
    if not isinstance(history, list) or not all(isinstance(record, dict) for record in history):
        raise InputError(f"checkpoint file {json_path} is corrupted: 'history' must be a list of objects")


def _read_tensors(directory: Path, entry: object, what: str, stem: str) -> dict[str, torch.Tensor]:
    """The tensors of the file `entry` names, which must be a ``<stem>-<hash>.safetensors`` file with that hash."""
    name = entry.get("name") if isinstance(entry, dict) else None
    if not isinstance(name, str) or "/" in name or os.path.basename(name) != name or name in ("", ".", ".."):
        raise InputError(f"checkpoint {directory} is corrupted: the entry for the {what} file is malformed")
    if not (name.startswith(f"{stem}-") and name.endswith(".safetensors")):
        raise InputError(
            f"checkpoint {directory} is corrupted: its {what} entry names {echo(name, 80)}, "
            f"not a {stem}-<hash>.safetensors file"
        )
    path = directory / entry["name"]
    if not path.is_file():
        raise InputError(f"checkpoint {directory} is incomplete: {entry['name']} ({what}) is missing")
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != entry.get("sha256"):
        raise InputError(
            f"checkpoint file {path} is corrupted or truncated: its SHA-256 does not match {JSON_NAME} "
            f"({len(data)} bytes, expected {echo(entry.get('bytes'))})"
        )
    try:
        return load_tensors(data)
    except (SafetensorError, ValueError, RuntimeError) as error:
        raise InputError(f"checkpoint file {path} is not a valid safetensors file: {echo(error)}") from error


def _required(parameter: inspect.Parameter) -> bool:
    """Whether a builder's config must name `parameter`: all but **kwargs and keyword-only switches with a
    default (added after checkpoints were saved without them: absent, the model they describe had them off)."""
    if parameter.kind is parameter.VAR_KEYWORD:
        return False
    return not (parameter.kind is parameter.KEYWORD_ONLY and parameter.default is not parameter.empty)


def _rebuild(directory: Path, config: dict) -> Checkpointable:
    builders = model_builders()
    task = config.get("task")
    if task not in builders:
        raise InputError(f"checkpoint {directory} names task {echo(task)}; expected one of {sorted(builders)}")
    options = {key: value for key, value in config.items() if key != "task"}
    parameters = inspect.signature(builders[task]).parameters.values()
    missing = [p.name for p in parameters if _required(p) and p.name not in options]
    if missing:
        raise InputError(f"checkpoint {directory} has an incomplete {task} config: {', '.join(missing)} missing")
    bad = [key for key, value in options.items() if not isinstance(value, str | int | float | bool | type(None))]
    if bad:
        raise InputError(f"checkpoint {directory} has a malformed config: {echo(bad)} must be plain values")
    try:
        return builders[task](**options)
    except (TypeError, ValueError) as error:
        raise InputError(
            f"checkpoint {directory} has an unusable {task} config {echo(config)}: {echo(error)}"
        ) from error


def _read_vocabularies(directory: Path, saved: dict) -> Vocabularies:
    if not isinstance(saved.get("source"), dict):
        raise InputError(f"checkpoint {directory} is corrupted: the source vocabulary is missing")
    return Vocabularies(
        Vocabulary.from_dict(saved["source"]),
        Vocabulary.from_dict(saved["target"]) if saved.get("target") is not None else None,
    )


def _check_vocabulary_sizes(directory: Path, model: Checkpointable, vocabs: Vocabularies) -> None:
    for side, size in model.vocabulary_sizes.items():
        vocab = getattr(vocabs, side)
        if vocab is None or len(vocab) != size:
            raise InputError(
                f"checkpoint {directory} is mismatched: the model has a {side} vocabulary of {size} "
                f"but the saved one has {None if vocab is None else len(vocab)}"
            )


def _renamed(weights: dict[str, torch.Tensor], version: int) -> dict[str, torch.Tensor]:
    """`weights` under the names this version of the code gives them (`RENAMED`)."""
    for old, new in RENAMED.get(version, ()):
        weights = {name.replace(old, new): tensor for name, tensor in weights.items()}
    return weights


def _check_tied(directory: Path, config: dict, model: Checkpointable, weights: dict[str, torch.Tensor]) -> None:
    """The model its config builds shares some tensors (a tied output embedding): the saved ones must be equal.

    Loading would otherwise keep one of them and silently drop the other, a model the checkpoint never held.
    """
    shared: dict[int, list[str]] = {}
    for name, tensor in model.state_dict(keep_vars=True).items():
        if tensor.numel() == 0:
            continue  # an empty tensor holds nothing to share
        shared.setdefault(tensor.untyped_storage().data_ptr(), []).append(name)
    for names in shared.values():
        first, *others = names
        different = [name for name in others if not torch.equal(weights[name], weights[first])]
        if different:
            raise InputError(
                f"checkpoint {directory} contradicts its config {echo(config)}: the model it describes uses one "
                f"tensor for {first} and {', '.join(different)} (tie_embeddings), but the saved tensors differ; "
                "restore the config the weights were trained with"
            )


def _check_weights(directory: Path, config: dict, model: Checkpointable, weights: dict[str, torch.Tensor]) -> None:
    """The saved weights are those of the model its config builds: the same names, shapes and dtypes."""
    expected = model.state_dict()
    missing = sorted(set(expected) - set(weights))
    unexpected = sorted(set(weights) - set(expected))
    wrong = [
        f"{name} {tuple(weights[name].shape)} {weights[name].dtype} (expected {tuple(t.shape)} {t.dtype})"
        for name, t in expected.items()
        if name in weights and (weights[name].shape != t.shape or weights[name].dtype != t.dtype)
    ]
    if missing or unexpected or wrong:
        parts = [
            f"missing {missing[:3]}" if missing else "",
            f"unexpected {unexpected[:3]}" if unexpected else "",
            f"wrong tensors {wrong[:3]}" if wrong else "",
        ]
        raise InputError(
            f"checkpoint {directory} does not match its config {echo(config)}: " + "; ".join(p for p in parts if p)
        )


def load_checkpoint(path: str | Path, device: torch.device | str = "cpu", task: str | None = None) -> Checkpoint:
    """Load a checkpoint saved by `save_checkpoint` and rebuild its model.

    Args:
        path: the checkpoint directory.
        device: where to put the model.
        task: the task the model must be of (a key of `TASK_NAMES`); any task when None.

    Raises:
        InputError: the directory or a file is missing, a file is corrupted or truncated, the
            weights do not match the config (names, shapes or dtypes), with what was expected,
            or the model is not of `task`.
    """
    directory = _check_path(path)
    document = _read_document(directory)
    config = document["config"]
    if task is not None and config.get("task") != task:
        raise InputError(f"{path} holds a {echo(config.get('task'))} model, not {TASK_NAMES[task]}")
    vocabs = _read_vocabularies(directory, document["vocabularies"])
    model = _rebuild(directory, config)
    _check_vocabulary_sizes(directory, model, vocabs)
    weights = _renamed(
        _read_tensors(directory, document["files"].get("model"), "weights", "model"), document["version"]
    )
    _check_weights(directory, config, model, weights)
    _check_finite(weights, f"checkpoint {directory} cannot be used")
    _check_tied(directory, config, model, weights)
    model.load_state_dict(weights)
    model.to(device).eval()
    return Checkpoint(model, vocabs, config, document.get("training") or {}, directory, document["files"])


def restore_training_state(checkpoint: Checkpoint, optimizer: torch.optim.Optimizer | None) -> None:
    """Put the saved optimizer state and RNG states back, to resume training where it stopped.

    Everything is checked before anything is set (torch's `load_state_dict` checks no tensor, and an
    optimizer step on a state of other shapes reads past its memory): the file `files.training` names
    is a training-state file; each of its tensors is an optimizer value or a generator state; the saved
    parameter groups name the optimizer's parameters, in the same count, with settings of the same
    kinds; and each parameter's state holds the values `optimizer` keeps, with the shape and dtype they
    have for that parameter.

    Raises:
        InputError: the checkpoint holds no training state, or it does not fit `optimizer` (saying which
            parameter, value, shape and dtype), or a file or value is not of its kind.
    """
    entry = checkpoint.files.get("training")
    if checkpoint.path is None or entry is None:
        raise InputError(f"checkpoint {checkpoint.path} holds weights only, no training state to resume from")
    where = f"checkpoint {checkpoint.path}"
    tensors = _read_tensors(checkpoint.path, entry, "training state", "training")
    _check_finite(tensors, f"{where} cannot be resumed")
    optimizer_values, generators = _split_training_tensors(where, tensors)
    if optimizer is not None:
        state = _saved_optimizer_state(where, checkpoint, optimizer, optimizer_values)
        try:
            optimizer.load_state_dict(state)
        except (KeyError, ValueError, TypeError) as error:
            raise InputError(f"{where}: the optimizer state does not fit: {echo(error)}") from error
    if "rng.cpu" in generators:
        torch.set_rng_state(generators["rng.cpu"])
    for name, tensor in generators.items():
        if name != "rng.cpu" and _generator_state(name) is not None:
            torch.cuda.set_rng_state(tensor, int(name.rsplit(".", 1)[1]))


_OPTIMIZER_TENSOR = re.compile(r"optimizer\.(0|[1-9][0-9]{0,8})\.([A-Za-z_][A-Za-z0-9_]*)")
_GENERATOR_TENSOR = re.compile(r"rng\.cpu|rng\.cuda\.(0|[1-9][0-9]{0,3})")


def _split_training_tensors(
    where: str, tensors: dict[str, torch.Tensor]
) -> tuple[dict[int, dict[str, torch.Tensor]], dict[str, torch.Tensor]]:
    """The optimizer's tensors by parameter id and value name, and the generator states (each checked against
    this machine's generator: a byte tensor of its length); any other name is refused."""
    values: dict[int, dict[str, torch.Tensor]] = {}
    generators = {}
    strangers = []
    for name, tensor in tensors.items():
        if match := _OPTIMIZER_TENSOR.fullmatch(name):
            values.setdefault(int(match[1]), {})[match[2]] = tensor
        elif _GENERATOR_TENSOR.fullmatch(name):
            generators[name] = tensor
        else:
            strangers.append(name)
    if strangers:
        raise InputError(
            f"{where} is corrupted: its training-state file holds tensors that are no training state: "
            f"{echo(sorted(strangers)[:3], 120)} (expected optimizer.<parameter>.<value> and rng.*)"
        )
    for name, tensor in generators.items():
        expected = _generator_state(name)
        if expected is not None and (tensor.shape != expected.shape or tensor.dtype != expected.dtype):
            raise InputError(
                f"{where} is corrupted: the generator state {name} is {tuple(tensor.shape)} {tensor.dtype}, "
                f"expected {tuple(expected.shape)} {expected.dtype}"
            )
    return values, generators


def _generator_state(name: str) -> torch.Tensor | None:
    """This machine's state of the generator `name` (``rng.cpu``, ``rng.cuda.<i>``); None for a GPU it lacks."""
    if name == "rng.cpu":
        return torch.get_rng_state()
    index = int(name.rsplit(".", 1)[1])
    return torch.cuda.get_rng_state(index) if torch.cuda.is_available() and index < torch.cuda.device_count() else None


def _saved_optimizer_state(
    where: str, checkpoint: Checkpoint, optimizer: torch.optim.Optimizer, tensors: dict[int, dict[str, torch.Tensor]]
) -> dict:
    """The optimizer state dict the checkpoint saved (its JSON part and `tensors`), checked against `optimizer`."""
    saved = checkpoint.training.get("optimizer")
    if not isinstance(saved, dict):
        raise InputError(f"{where} holds no optimizer state")
    current = optimizer.state_dict()["param_groups"]
    groups = _saved_groups(where, saved.get("param_groups"), current)
    scalars = saved.get("scalars", {})
    if not isinstance(scalars, dict) or not all(isinstance(v, dict) for v in scalars.values()):
        raise InputError(f"{where} is corrupted: the optimizer's 'scalars' must be an object of objects")
    state: dict[int, dict] = {param_id: dict(values) for param_id, values in tensors.items()}
    for param_id, values in scalars.items():
        if not (isinstance(param_id, str) and param_id.isdigit() and len(param_id) < 10):
            raise InputError(f"{where} is corrupted: the optimizer's scalars name parameter {echo(param_id, 40)}")
        state.setdefault(int(param_id), {}).update(values)
    _check_optimizer_state(where, checkpoint, optimizer, state)
    return {"state": state, "param_groups": groups}


def _kind(value: object) -> str:
    """What JSON makes of a setting: ``bool``, ``number``, ``none``, ``text`` or ``list of <kind>``."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number" if math.isfinite(value) else "non-finite number"
    if value is None:
        return "none"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list | tuple):
        return f"list of {', '.join(sorted({_kind(item) for item in value})) or 'nothing'}"
    return type(value).__name__


def _saved_groups(where: str, saved: object, current: list[dict]) -> list[dict]:
    """The saved parameter groups, each over the same parameters as the optimizer's and with settings of the kinds
    the optimizer's have (a switch may be true, false or None); a setting the save did not know keeps the
    optimizer's value."""
    if not isinstance(saved, list) or not all(isinstance(group, dict) for group in saved):
        raise InputError(f"{where} is corrupted: the optimizer's 'param_groups' must be a list of objects")
    if len(saved) != len(current):
        raise InputError(
            f"{where}: the optimizer state does not fit: {len(saved)} parameter group(s) saved, the optimizer has "
            f"{len(current)}"
        )
    groups = []
    for index, (group, own) in enumerate(zip(saved, current, strict=True)):
        if group.get("params") != own["params"]:
            count = len(group["params"]) if isinstance(group.get("params"), list) else echo(group.get("params"), 40)
            raise InputError(
                f"{where}: the optimizer state does not fit this model: parameter group {index} saved {count} "
                f"parameter(s), the optimizer has {len(own['params'])}"
            )
        for key, value in group.items():
            want = own.get(key, value)
            flag = {_kind(value), _kind(want)} <= {"bool", "none"}  # a switch: None lets torch choose (fused, foreach)
            if key != "params" and _kind(value) != _kind(want) and not flag:
                raise InputError(
                    f"{where} is corrupted: the optimizer's setting {key!r} of group {index} is "
                    f"{echo(value, 60)} ({_kind(value)}), expected a {_kind(want)} like {echo(want, 60)}"
                )
            if isinstance(want, list | tuple) and len(value) != len(want):
                raise InputError(
                    f"{where} is corrupted: the optimizer's setting {key!r} of group {index} holds {len(value)} "
                    f"values, expected {len(want)}"
                )
        groups.append({**own, **group})
    return groups


def _expected_state(optimizer: torch.optim.Optimizer) -> list[dict[str, object]]:
    """What `optimizer` keeps for each of its parameters (in its state dict's order) once it has stepped: the state
    of an optimizer of its kind and settings after one step of zero gradients on zero tensors like its parameters."""
    probes, groups = [], []
    for group in optimizer.param_groups:
        params = [torch.zeros_like(p, requires_grad=True) for p in group["params"]]
        for probe in params:
            probe.grad = torch.zeros_like(probe)
        probes.extend(params)
        groups.append({**{key: value for key, value in group.items() if key != "params"}, "params": params})
    stepped = type(optimizer)(groups)
    stepped.step()
    return [stepped.state[probe] for probe in probes]


def _check_optimizer_state(
    where: str, checkpoint: Checkpoint, optimizer: torch.optim.Optimizer, state: dict[int, dict]
) -> None:
    """Each saved parameter's state holds the values `optimizer` keeps for that parameter: the same names, and
    tensors of the shape and dtype they have there (a moment of a (16, 8) weight is (16, 8) float32)."""
    parameters = [p for group in optimizer.param_groups for p in group["params"]]
    names = {id(p): name for name, p in checkpoint.model.named_parameters()}
    expected = _expected_state(optimizer)
    for param_id, values in sorted(state.items()):
        if param_id >= len(parameters):
            raise InputError(
                f"{where}: the optimizer state does not fit this model: it holds a state for parameter {param_id}, "
                f"the optimizer has {len(parameters)} parameters"
            )
        parameter = f"parameter {param_id} ({names.get(id(parameters[param_id]), 'unnamed')})"
        want = expected[param_id]
        if set(values) != set(want):
            raise InputError(
                f"{where}: the optimizer state does not fit: {parameter} holds {sorted(values)}, the optimizer "
                f"keeps {sorted(want)}"
            )
        for key, wanted in want.items():
            got = values[key]
            if isinstance(wanted, torch.Tensor):
                fits = isinstance(got, torch.Tensor) and got.shape == wanted.shape and got.dtype == wanted.dtype
                shown = f"{tuple(got.shape)} {got.dtype}" if isinstance(got, torch.Tensor) else echo(got, 40)
                expected_shown = f"{tuple(wanted.shape)} {wanted.dtype}"
            else:
                fits = _kind(got) == _kind(wanted)
                shown, expected_shown = f"{echo(got, 40)} ({_kind(got)})", f"a {_kind(wanted)}"
            if not fits:
                raise InputError(
                    f"{where}: the optimizer state does not fit this model: {parameter} has {key} {shown}, "
                    f"expected {expected_shown} (a state saved for another model?)"
                )
