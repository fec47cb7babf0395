"""Checkpoints: what is saved and loaded, what is refused, and a run resumed from one.

* a checkpoint is safetensors and JSON (no pickle); a write that fails half way (at any of its three files)
  leaves no temporary file and the previous checkpoint intact; a run interrupted in the middle of an epoch and
  resumed gives the same losses (bitwise) and weights as a run that was never interrupted;
* a non-finite value in any tensor of either task's checkpoint is refused at save and at load, naming the tensor;
  tensors of another dtype, malformed or non-strict JSON, a path that is a file are each one `InputError`;
* a config that contradicts its saved tensors (``tie_embeddings: true`` over untied weights) is refused, and files
  of an older version load under the current names;
* a training state that does not fit the optimizer it is restored into (another model's, another hidden size, a
  renamed or retyped tensor, malformed groups or scalars, a file of the wrong kind) is one `InputError` before
  anything is set;
* a run resumed from its checkpoint gives the losses of an uninterrupted one; a changed config, or a directory
  without `checkpoint.json`, refuses to resume, and training never overwrites an existing checkpoint unasked;
* each kind of missing, corrupted, truncated or mismatched checkpoint gives one clear line and exit code 2 from the
  CLI, and nothing on disk changes; so does a file on stdin that is not UTF-8, whichever error handler Python gave
  stdin.

Covered elsewhere: the same seed gives bitwise-identical losses over two epochs
(`test_train.py::test_same_seed_same_losses_bitwise`, every decoder); values read from checkpoints and writes that
destroy nothing (`test_writing_commands.py`).
"""

import hashlib
import io
import json
import math
import pickle
import re
import shutil
import sys
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from safetensors.torch import load as load_tensors
from safetensors.torch import save as save_tensors
from support import files_of, refused, tiny_classifier, tiny_config, tiny_translator, tiny_vocabs
from torch import nn

from seq2seq_attention import DECODERS, Vocabulary, build_classifier, build_model
from seq2seq_attention.cli import main
from seq2seq_attention.core import checkpoint as checkpoint_module
from seq2seq_attention.core.checkpoint import (
    JSON_NAME,
    READABLE_VERSIONS,
    RENAMED,
    load_checkpoint,
    restore_training_state,
    save_checkpoint,
)
from seq2seq_attention.core.errors import ECHO_LIMIT, InputError
from seq2seq_attention.core.vocabulary import Vocabularies
from seq2seq_attention.translation import train as train_module
from seq2seq_attention.translation.corpus import Pair, TranslationDataset, build_vocabularies, collate
from seq2seq_attention.translation.pretrained import PRETRAINED_DIR
from seq2seq_attention.translation.train import TrainConfig, train, train_step

pytestmark = pytest.mark.usefixtures("one_thread")

VOCABS = tiny_vocabs()
SIZES = len(VOCABS.source), len(VOCABS.target)
SENTIMENT_VOCAB = Vocabulary.from_counts("words", [["good", "bad", "movie"]] * 2)


# Save, load, resume ----------------------------------------------------------------------------------------------

SUBJECTS = [("je suis", "i am"), ("il est", "he is"), ("elle est", "she is"), ("nous sommes", "we are")]
ADJECTIVES = [("fatigue", "tired"), ("content", "happy"), ("grand", "tall"), ("petit", "small"), ("malade", "sick")]
PAIRS = [Pair(f"{fr} {adj_fr} .", f"{en} {adj_en} .") for fr, en in SUBJECTS for adj_fr, adj_en in ADJECTIVES]
GOOD_SENTENCE = "Je suis fatigué."


def run(config: TrainConfig, **kwargs):
    return train(config, pairs=PAIRS, progress=False, log=lambda line: None, **kwargs)


def losses(history: list[dict]) -> list[tuple[int, float, float]]:
    return [(h["epoch"], h["loss"], h["test_loss"]) for h in history]


def same_weights(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checkpoint of a tiny model trained for one epoch (weights, optimizer and RNG state)."""
    directory = tmp_path_factory.mktemp("trained") / "checkpoint"
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as `one_thread` does for the tests (a module fixture is set up before it)
    try:
        run(tiny_config("bahdanau", epochs=1), checkpoint=directory)
    finally:
        torch.set_num_threads(threads)
    return directory


@pytest.fixture
def checkpoint_copy(trained: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(trained, tmp_path / "checkpoint"))


@pytest.mark.slow
def test_an_interrupted_run_resumes_with_the_same_losses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    config = tiny_config("bahdanau", epochs=3)
    real_step = train_module.train_step
    calls = 0
    interrupt_at = None

    def counted_step(*args, **kwargs):
        nonlocal calls
        calls += 1
        if calls == interrupt_at:
            raise KeyboardInterrupt
        return real_step(*args, **kwargs)

    monkeypatch.setattr(train_module, "train_step", counted_step)
    straight = run(config, checkpoint=tmp_path / "straight")
    steps_per_epoch, calls = calls // config.epochs, 0
    interrupt_at = steps_per_epoch + steps_per_epoch // 2 + 1  # in the middle of epoch 2
    with pytest.raises(KeyboardInterrupt):
        run(config, checkpoint=tmp_path / "interrupted")
    assert load_checkpoint(tmp_path / "interrupted").training["epoch"] == 1

    interrupt_at, calls = None, 0
    resumed = run(config, checkpoint=tmp_path / "interrupted", resume=True)
    assert calls == 2 * steps_per_epoch, "the resumed run must train epochs 2 and 3 only"
    assert losses(resumed.history) == losses(straight.history)
    assert same_weights(resumed.model, straight.model)


@pytest.mark.parametrize("failing_write", [1, 2, 3], ids=["weights", "training-state", "json"])
def test_a_failed_checkpoint_write_keeps_the_previous_checkpoint(
    checkpoint_copy: Path, failing_write: int, monkeypatch: pytest.MonkeyPatch
):
    before = load_checkpoint(checkpoint_copy)
    newer = run(tiny_config("bahdanau", epochs=1, seed=11))
    assert not same_weights(newer.model, before.model)
    optimizer = torch.optim.Adam(newer.model.parameters())
    real_fsync = checkpoint_module.os.fsync
    writes = 0

    def failing_fsync(fd: int) -> None:
        nonlocal writes
        writes += 1
        if writes == failing_write:
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(checkpoint_module.os, "fsync", failing_fsync)
    with pytest.raises(OSError, match="No space left"):
        save_checkpoint(
            checkpoint_copy, newer.model, newer.vocabs, training={"epoch": 7}, optimizer=optimizer, save_rng=True
        )
    monkeypatch.undo()
    assert not [p.name for p in checkpoint_copy.iterdir() if p.name.endswith(".tmp")], "a temporary file was left"
    after = load_checkpoint(checkpoint_copy)
    assert same_weights(after.model, before.model) and after.training["epoch"] == 1


def test_checkpoints_are_safetensors_and_json_and_load_without_pickle(trained: Path, monkeypatch: pytest.MonkeyPatch):
    assert {p.suffix for p in trained.iterdir()} == {".json", ".safetensors"}

    def refuse(*args, **kwargs):
        raise AssertionError("a checkpoint must not be unpickled")

    for module, name in ((torch, "load"), (pickle, "load"), (pickle, "loads"), (pickle, "Unpickler")):
        monkeypatch.setattr(module, name, refuse)
    checkpoint = load_checkpoint(trained)
    assert checkpoint.training["epoch"] == 1


def _break(kind: str, directory: Path) -> None:
    document = json.loads((directory / "checkpoint.json").read_text(encoding="utf-8"))
    weights = directory / document["files"]["model"]["name"]
    if kind == "missing-directory":
        shutil.rmtree(directory)
    elif kind == "missing-json":
        (directory / "checkpoint.json").unlink()
    elif kind == "corrupted-json":
        (directory / "checkpoint.json").write_bytes(b"\x00\xff not json")
    elif kind == "not-a-checkpoint":
        (directory / "checkpoint.json").write_text('{"hello": "world"}', encoding="utf-8")
    elif kind == "truncated-weights":
        weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    elif kind == "corrupted-weights":
        data = bytearray(weights.read_bytes())
        data[-5] ^= 0xFF
        weights.write_bytes(bytes(data))
    elif kind == "missing-weights":
        weights.unlink()
    elif kind == "mismatched-size":
        document["config"]["hidden_size"] = 16
        (directory / "checkpoint.json").write_text(json.dumps(document), encoding="utf-8")
    elif kind == "mismatched-vocabulary":
        document["config"]["tgt_vocab_size"] += 1
        (directory / "checkpoint.json").write_text(json.dumps(document), encoding="utf-8")
    else:
        raise AssertionError(kind)


BROKEN = {
    "missing-directory": r"no checkpoint at .*: the directory does not exist",
    "missing-json": r"no checkpoint at .*: checkpoint\.json is missing",
    "corrupted-json": r"checkpoint file .*checkpoint\.json is corrupted \(not valid JSON: .*\)",
    "not-a-checkpoint": r".*checkpoint\.json is not a seq2seq-attention checkpoint.*",
    "truncated-weights": r"checkpoint file .*model-\w+\.safetensors is corrupted or truncated.*",
    "corrupted-weights": r"checkpoint file .*model-\w+\.safetensors is corrupted or truncated.*",
    "missing-weights": r"checkpoint .* is incomplete: model-\w+\.safetensors \(weights\) is missing",
    "mismatched-size": r"checkpoint .* does not match its config .*'hidden_size': 16.*: .*wrong tensors.*",
    "mismatched-vocabulary": r"checkpoint .* is mismatched: the model has a target vocabulary of \d+ but .* has \d+",
}


def _cli(argv: list[str], capsys: pytest.CaptureFixture) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _one_error_line(err: str, command: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got {lines}"
    prefix = f"seq2seq-attention {command}: error: "
    assert lines[0].startswith(prefix), lines[0]
    return lines[0].removeprefix(prefix)


@pytest.mark.parametrize("kind", BROKEN)
def test_a_bad_checkpoint_gives_one_line_and_exit_2(kind: str, checkpoint_copy: Path, capsys: pytest.CaptureFixture):
    _break(kind, checkpoint_copy)
    before = files_of(checkpoint_copy) if checkpoint_copy.exists() else None
    with pytest.raises(InputError):
        load_checkpoint(checkpoint_copy)
    code, out, err = _cli(["translate", "--checkpoint", str(checkpoint_copy), GOOD_SENTENCE], capsys)
    assert code == 2 and out == ""
    message = _one_error_line(err, "translate")
    assert re.fullmatch(BROKEN[kind], message), message
    assert (files_of(checkpoint_copy) if checkpoint_copy.exists() else None) == before, "the checkpoint changed"


def test_resuming_from_a_corrupted_checkpoint_is_a_user_error(checkpoint_copy: Path):
    _break("truncated-weights", checkpoint_copy)
    before = files_of(checkpoint_copy)
    with pytest.raises(InputError, match="corrupted or truncated"):
        run(tiny_config("bahdanau"), checkpoint=checkpoint_copy, resume=True)
    assert files_of(checkpoint_copy) == before, "a failed resume must not overwrite the checkpoint"


def test_a_good_sentence_translates(trained: Path, capsys: pytest.CaptureFixture):
    code, out, err = _cli(["translate", "--checkpoint", str(trained), GOOD_SENTENCE, "il est grand ."], capsys)
    assert code == 0 and err == ""
    assert len(out.splitlines()) == 2


@pytest.mark.parametrize(
    "errors",
    [
        pytest.param("strict", id="utf8-locale"),
        # Under LC_ALL=C (or python -X utf8) sys.stdin decodes with surrogateescape: the CLI must read the bytes.
        pytest.param("surrogateescape", id="c-locale-or-utf8-mode"),
    ],
)
def test_non_utf8_input_gives_one_line_and_exit_2(
    errors: str, trained: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
):
    """stdin as Python sets it up: strict in a UTF-8 locale, surrogateescape in the C locale."""
    latin1 = "je suis fatigué .\n".encode("latin-1")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(latin1), encoding="utf-8", errors=errors))
    code, out, err = _cli(["translate", "--checkpoint", str(trained)], capsys)
    assert code == 2 and out == ""
    assert "utf-8" in _one_error_line(err, "translate").lower()


# Tensors: non-finite values, dtypes ---------------------------------------------------------------------


MODELS = {
    "translation-bahdanau": (lambda: tiny_translator("bahdanau"), VOCABS),
    "translation-luong": (lambda: tiny_translator("luong"), VOCABS),
    "translation-gru": (lambda: tiny_translator("gru"), VOCABS),
    "sentiment-attention": (lambda: tiny_classifier("attention", len(SENTIMENT_VOCAB)), Vocabularies(SENTIMENT_VOCAB)),
    "sentiment-mean": (lambda: tiny_classifier("mean", len(SENTIMENT_VOCAB)), Vocabularies(SENTIMENT_VOCAB)),
}


@pytest.fixture(scope="module")
def saved_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("finite")
    return {name: save_checkpoint(root / name, build(), vocabs) for name, (build, vocabs) in MODELS.items()}


def _poison(directory: Path, tensor: str, position: float, value: float) -> None:
    """Put `value` into one element of `tensor` in the saved weights, with a correct hash (a well-formed file)."""
    document = json.loads((directory / "checkpoint.json").read_text(encoding="utf-8"))
    entry = document["files"]["model"]
    weights = dict(load_tensors((directory / entry["name"]).read_bytes()))
    flat = weights[tensor].clone().reshape(-1)
    flat[int(position * (flat.numel() - 1))] = value
    weights[tensor] = flat.reshape(weights[tensor].shape)
    data = save_tensors(weights)
    (directory / entry["name"]).write_bytes(data)
    entry["sha256"] = __import__("hashlib").sha256(data).hexdigest()
    entry["bytes"] = len(data)
    (directory / "checkpoint.json").write_text(json.dumps(document), encoding="utf-8")


NON_FINITE = st.sampled_from([math.nan, math.inf, -math.inf])


QUICK = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@QUICK
@given(name=st.sampled_from(sorted(MODELS)), pick=st.integers(0, 10_000), where=st.floats(0, 1), value=NON_FINITE)
def test_a_non_finite_value_in_any_tensor_is_refused_at_load(saved_models, tmp_path_factory, name, pick, where, value):
    directory = tmp_path_factory.mktemp("poisoned") / name
    directory.mkdir()
    for path in saved_models[name].iterdir():
        (directory / path.name).write_bytes(path.read_bytes())
    floating = [k for k, t in MODELS[name][0]().state_dict().items() if t.is_floating_point()]
    tensor = floating[pick % len(floating)]
    _poison(directory, tensor, where, value)
    with pytest.raises(InputError, match=f"tensor {tensor} .*non-finite"):
        load_checkpoint(directory)


@QUICK
@given(name=st.sampled_from(sorted(MODELS)), pick=st.integers(0, 10_000), where=st.floats(0, 1), value=NON_FINITE)
def test_a_non_finite_value_in_any_tensor_is_refused_at_save(saved_models, name, pick, where, value):
    build, vocabs = MODELS[name]
    model = build()
    floating = [(k, t) for k, t in model.state_dict().items() if t.is_floating_point()]
    tensor_name, tensor = floating[pick % len(floating)]
    with torch.no_grad():
        tensor.view(-1)[int(where * (tensor.numel() - 1))] = value
    before = files_of(saved_models[name])
    with pytest.raises(InputError, match=f"tensor {tensor_name} .*non-finite"):
        save_checkpoint(saved_models[name], model, vocabs)
    assert files_of(saved_models[name]) == before


def test_a_non_finite_optimizer_state_is_refused_at_save(tmp_path):
    model = tiny_translator()
    optimizer = torch.optim.Adam(model.parameters())
    model(torch.tensor([[4, 2]]), torch.tensor([2]), torch.tensor([[4, 2]]))[0].sum().backward()
    optimizer.step()
    next(iter(optimizer.state.values()))["exp_avg"].fill_(math.nan)
    with pytest.raises(InputError, match="training state: tensor optimizer.0.exp_avg"):
        save_checkpoint(tmp_path / "c", model, VOCABS, optimizer=optimizer)
    assert not (tmp_path / "c").exists()


def test_the_cli_refuses_a_nan_checkpoint_instead_of_printing_nothing(saved_models, tmp_path, capsys):
    for name, command in (("translation-bahdanau", ["translate", "je suis la ."]), ("sentiment-mean", None)):
        directory = tmp_path / name
        directory.mkdir()
        for path in saved_models[name].iterdir():
            (directory / path.name).write_bytes(path.read_bytes())
        _poison(directory, next(iter(MODELS[name][0]().state_dict())), 0.5, math.nan)
        argv = command or ["sentiment-predict", "good movie"]
        assert main([*argv[:1], "--checkpoint", str(directory), *argv[1:]]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "non-finite" in err and "Traceback" not in err


@pytest.mark.parametrize("dtype", [torch.bool, torch.int64, torch.float64])
def test_checkpoint_tensors_of_another_dtype_are_refused(tmp_path, dtype):
    translator = tiny_translator()
    save_checkpoint(tmp_path, translator, VOCABS)
    document = json.loads((tmp_path / "checkpoint.json").read_text())
    from safetensors.torch import load_file, save_file

    weights_file = tmp_path / document["files"]["model"]["name"]
    weights = load_file(str(weights_file))
    weights["decoder.out.bias"] = weights["decoder.out.bias"].to(dtype)
    save_file(weights, str(weights_file))

    data = weights_file.read_bytes()
    document["files"]["model"]["sha256"] = hashlib.sha256(data).hexdigest()
    (tmp_path / "checkpoint.json").write_text(json.dumps(document))
    refused(lambda: load_checkpoint(tmp_path), "decoder.out.bias", str(dtype))


# The checkpoint's JSON -----------------------------------------------------------------------------------


def _edit(directory: Path, change) -> None:
    document = json.loads((directory / "checkpoint.json").read_text())
    change(document)
    (directory / "checkpoint.json").write_text(json.dumps(document))


def _set(path: list, value):
    def change(document):
        node = document
        for key in path[:-1]:
            node = node[key]
        if value is _DELETE:
            del node[path[-1]]
        else:
            node[path[-1]] = value

    return change


_DELETE = object()


BROKEN_JSON = {
    "missing-hidden-size": (_set(["config", "hidden_size"], _DELETE), "hidden_size"),
    "hidden-size-a-string": (_set(["config", "hidden_size"], "8"), "hidden_size"),
    "config-a-list": (_set(["config"], [1, 2]), "config"),
    "training-a-list": (_set(["training"], [1]), "training"),
    "extra-key": (_set(["config", "colour"], "blue"), "colour"),
    "absurd-size": (_set(["config", "hidden_size"], 1 << 20), "parameters"),
    "unknown-task": (_set(["config", "task"], "speech"), "speech"),
    "vocabulary-not-an-object": (_set(["vocabularies", "source"], "abc"), "source vocabulary"),
    "bad-score": (_set(["config", "score"], "cosine"), "cosine"),
}


@pytest.mark.parametrize("kind", sorted(BROKEN_JSON))
def test_malformed_checkpoint_json_is_one_input_error(tmp_path, kind):
    save_checkpoint(tmp_path, tiny_translator(), VOCABS)
    change, word = BROKEN_JSON[kind]
    _edit(tmp_path, change)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    message = refused(lambda: load_checkpoint(tmp_path), word)
    assert len(message) < 2 * ECHO_LIMIT + 300
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # nothing on disk changed


def test_deeply_nested_or_non_strict_json_is_refused(tmp_path):
    save_checkpoint(tmp_path, tiny_translator(), VOCABS)
    (tmp_path / "checkpoint.json").write_text("[" * 100_000 + "]" * 100_000)
    refused(lambda: load_checkpoint(tmp_path), "not valid JSON")
    save_checkpoint(tmp_path, tiny_translator(), VOCABS)
    text = (tmp_path / "checkpoint.json").read_text().replace('"epoch"', '"x": NaN, "epoch"', 1)
    (tmp_path / "checkpoint.json").write_text(text.replace('"training": {}', '"training": {"x": NaN}'))
    refused(lambda: load_checkpoint(tmp_path), "NaN")


def test_a_nan_in_the_training_record_is_saved_as_null_and_unsaveable_values_change_nothing(tmp_path):
    save_checkpoint(tmp_path, tiny_translator(), VOCABS, training={"history": [{"test_loss": math.nan}]})
    text = (tmp_path / "checkpoint.json").read_text()
    assert "NaN" not in text and json.loads(text)["training"]["history"][0]["test_loss"] is None
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(ValueError, match="cannot be saved as JSON"):
        save_checkpoint(tmp_path, tiny_translator(), VOCABS, training={"when": object()})
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no stray model-*.safetensors


def test_a_checkpoint_path_that_is_a_file_is_called_a_file(tmp_path):
    (tmp_path / "file").write_text("x")
    refused(lambda: load_checkpoint(tmp_path / "file"), "is a file")


def test_vocabularies_round_trip_without_target(tmp_path):
    classifier = build_classifier("mean", 10, embedding_size=4, dense_size=3)
    vocab = Vocabulary("words")
    for i in range(6):
        vocab.add_word(f"w{i}")
    save_checkpoint(tmp_path, classifier, Vocabularies(vocab))
    loaded = load_checkpoint(tmp_path)
    assert loaded.vocabs.target is None and loaded.vocabs.source == vocab
    shutil.rmtree(tmp_path)


# A config that contradicts its tensors; older versions ---------------------------------------------------


def _edit_config(directory, **changes):
    path = directory / JSON_NAME
    document = json.loads(path.read_text(encoding="utf-8"))
    document["config"].update(changes)
    path.write_text(json.dumps(document), encoding="utf-8")


@settings(max_examples=6, deadline=None)
@given(decoder=st.sampled_from(sorted(DECODERS)), seed=st.integers(0, 1000))
def test_a_config_that_ties_untied_weights_is_refused(tmp_path_factory, decoder, seed):
    directory = tmp_path_factory.mktemp("untied")
    torch.manual_seed(seed)
    save_checkpoint(directory, build_model(decoder, *SIZES, hidden_size=8), VOCABS)
    _edit_config(directory, tie_embeddings=True)
    with pytest.raises(
        InputError, match=r"contradicts its config.*decoder\.(embedding|out)\.weight.*saved tensors differ"
    ):
        load_checkpoint(directory)


@pytest.mark.parametrize("decoder", sorted(DECODERS))
def test_tied_weights_load_tied_and_an_untied_config_over_equal_tensors_loads_untied(tmp_path, decoder):
    torch.manual_seed(0)
    tied = build_model(decoder, *SIZES, hidden_size=8, tie_embeddings=True)
    save_checkpoint(tmp_path / "tied", tied, VOCABS)
    loaded = load_checkpoint(tmp_path / "tied").model
    assert loaded.decoder.out.weight is loaded.decoder.embedding.weight
    torch.testing.assert_close(loaded.decoder.out.weight, tied.decoder.out.weight)
    _edit_config(tmp_path / "tied", tie_embeddings=False)  # no contradiction: two equal matrices, now free
    untied = load_checkpoint(tmp_path / "tied").model
    assert untied.decoder.out.weight is not untied.decoder.embedding.weight
    torch.testing.assert_close(untied.decoder.out.weight, untied.decoder.embedding.weight)


@pytest.mark.parametrize("name", sorted(path.name for path in PRETRAINED_DIR.iterdir() if path.is_dir()))
def test_the_packaged_version_2_checkpoints_load_under_the_current_names(name):
    document = json.loads((PRETRAINED_DIR / name / JSON_NAME).read_text(encoding="utf-8"))
    assert document["version"] in READABLE_VERSIONS
    model = load_checkpoint(PRETRAINED_DIR / name).model
    names = set(model.state_dict())
    assert not any(".score." in n for n in names)
    if model.decoder.attention is not None:
        assert {"decoder.attention.Wa.weight", "decoder.attention.Ua.weight", "decoder.attention.Va.weight"} <= names


def test_a_version_2_file_with_attention_score_names_loads_into_the_same_model(tmp_path):
    torch.manual_seed(0)
    model = build_model("luong", *SIZES, hidden_size=8, score="general").eval()
    save_checkpoint(tmp_path, model, VOCABS)
    from safetensors.torch import load_file, save_file

    path = tmp_path / JSON_NAME
    document = json.loads(path.read_text(encoding="utf-8"))
    tensors = tmp_path / document["files"]["model"]["name"]
    ((old, new),) = RENAMED[2]
    save_file({n.replace(new, old): t for n, t in load_file(str(tensors)).items()}, str(tensors))

    data = tensors.read_bytes()
    document["files"]["model"].update(sha256=hashlib.sha256(data).hexdigest(), bytes=len(data))
    document["version"] = 2
    path.write_text(json.dumps(document), encoding="utf-8")
    assert "decoder.attention.score.W.weight" in load_file(str(tensors))
    loaded = load_checkpoint(tmp_path).model
    torch.testing.assert_close(loaded.decoder.attention.W.weight, model.decoder.attention.W.weight)


# A saved training state is checked against the optimizer before anything is set (torch checks no tensor, and a
# fused Adam step on moments of other shapes reads past their memory: a segmentation fault) ------------------------


def stepped(model: torch.nn.Module) -> torch.optim.Optimizer:
    """Adam over `model`'s parameters after one step (every parameter has its moments)."""
    optimizer = torch.optim.Adam(model.parameters())
    for parameter in model.parameters():
        parameter.grad = torch.ones_like(parameter)
    optimizer.step()
    return optimizer


@pytest.fixture
def resumable(tmp_path: Path) -> Path:
    model = tiny_translator("bahdanau")
    return save_checkpoint(
        tmp_path / "run", model, VOCABS, training={"epoch": 1}, optimizer=stepped(model), save_rng=True
    )


def rewrite_training(path: Path, change_tensors=None, change_document=None, *, stem: str = "training") -> None:
    """Change a checkpoint's training-state tensors and JSON, writing the tensors under a matching name and hash."""
    document = json.loads((path / JSON_NAME).read_text())
    entry = document["files"]["training"]
    tensors = load_tensors((path / entry["name"]).read_bytes())
    if change_tensors is not None:
        tensors = change_tensors(tensors)
        data = save_tensors(tensors)
        digest = hashlib.sha256(data).hexdigest()
        name = f"{stem}-{digest[:16]}.safetensors"
        (path / name).write_bytes(data)
        document["files"]["training"] = {"name": name, "sha256": digest, "bytes": len(data)}
    if change_document is not None:
        change_document(document)
    (path / JSON_NAME).write_text(json.dumps(document))


def resume_into_a_fresh_optimizer(path: Path) -> torch.optim.Optimizer:
    loaded = load_checkpoint(path)
    optimizer = torch.optim.Adam(loaded.model.parameters())
    checkpoint_module.restore_training_state(loaded, optimizer)
    return optimizer


def test_an_optimizer_of_another_model_is_refused_at_save(tmp_path: Path):
    other = tiny_translator("bahdanau", hidden_size=16)
    with pytest.raises(InputError, match=r"the optimizer updates \d+ tensor\(s\) that are not parameters of this"):
        save_checkpoint(tmp_path / "run", tiny_translator("bahdanau"), VOCABS, optimizer=stepped(other))
    assert not (tmp_path / "run").exists()


def test_the_training_state_of_another_hidden_size_is_refused_before_anything_is_set(resumable: Path, tmp_path):
    model = tiny_translator("bahdanau", hidden_size=16)
    other = save_checkpoint(tmp_path / "other", model, VOCABS, optimizer=stepped(model), save_rng=True)
    other_entry = json.loads((other / JSON_NAME).read_text())["files"]["training"]
    shutil.copy(other / other_entry["name"], resumable / other_entry["name"])

    def take_the_others(document):
        document["files"]["training"] = other_entry
        document["training"]["optimizer"] = json.loads((other / JSON_NAME).read_text())["training"]["optimizer"]

    rewrite_training(resumable, change_document=take_the_others)
    loaded = load_checkpoint(resumable)
    optimizer = torch.optim.Adam(loaded.model.parameters(), fused=True)  # whose step would read past the moments
    rng = torch.get_rng_state()
    with pytest.raises(InputError, match=r"does not fit this model: parameter 0 \(.*\) has exp_avg \(\d+, 16\)"):
        checkpoint_module.restore_training_state(loaded, optimizer)
    assert torch.equal(torch.get_rng_state(), rng) and not optimizer.state  # nothing was set


def swap_first_moment(tensors, replacement):
    name = next(n for n in sorted(tensors) if n.endswith(".exp_avg"))
    return {**tensors, name: replacement(tensors[name])}


@pytest.mark.parametrize(
    ("change_tensors", "change_document", "message"),
    [
        (lambda t: swap_first_moment(t, lambda m: m.double()), None, r"has exp_avg \(.*\) torch.float64, expected"),
        (lambda t: swap_first_moment(t, lambda m: m[:1]), None, r"has exp_avg \(1, .*\) torch.float32, expected"),
        (
            lambda t: {k: v for k, v in t.items() if not k.endswith(".exp_avg_sq")},
            None,
            r"holds \['exp_avg', 'step'\], the optimizer keeps \['exp_avg', 'exp_avg_sq', 'step'\]",
        ),
        (
            lambda t: {**t, "optimizer.999.exp_avg": torch.zeros(2)},
            None,
            "it holds a state for parameter 999, the optimizer has",
        ),
        (
            lambda t: {("optimizer.broken" if k == "optimizer.0.step" else k): v for k, v in t.items()},
            None,
            r"holds tensors that are no training state: \['optimizer.broken'\]",
        ),
        (lambda t: {**t, "rng.cpu": t["rng.cpu"][:100]}, None, r"the generator state rng.cpu is \(100,\) torch.uint8"),
        (None, lambda d: d["training"]["optimizer"].update(scalars=[]), "'scalars' must be an object of objects"),
        (None, lambda d: d["training"]["optimizer"].update(param_groups=3), "'param_groups' must be a list of objects"),
        (None, lambda d: d["training"]["optimizer"].update(param_groups=[]), "0 parameter group\\(s\\) saved"),
        (
            None,
            lambda d: d["training"]["optimizer"]["param_groups"][0].update(lr="fast"),
            "setting 'lr' of group 0 is 'fast' \\(text\\), expected a number",
        ),
        (
            None,
            lambda d: d["training"]["optimizer"]["param_groups"][0].update(betas=[0.9]),
            "setting 'betas' of group 0 holds 1 values, expected 2",
        ),
        (
            None,
            lambda d: d["training"]["optimizer"]["param_groups"][0]["params"].pop(),
            r"parameter group 0 saved \d+ parameter\(s\), the optimizer has",
        ),
        (
            None,
            lambda d: d["training"]["optimizer"].update(scalars={"0": {"step": 1}}),
            r"parameter 0 \(.*\) has step 1, expected \(\) torch.float32",
        ),
    ],
)
def test_a_training_state_that_does_not_fit_is_one_clear_error(resumable, change_tensors, change_document, message):
    rewrite_training(resumable, change_tensors, change_document)
    with pytest.raises(InputError, match=message):
        resume_into_a_fresh_optimizer(resumable)


def test_the_files_a_checkpoint_names_must_be_of_their_kind(resumable: Path):
    document = json.loads((resumable / JSON_NAME).read_text())
    weights, training = document["files"]["model"], document["files"]["training"]
    rewrite_training(resumable, change_document=lambda d: d["files"].update(training=weights))
    with pytest.raises(InputError, match=r"its training state entry names 'model-.*', not a training-<hash>\.safe"):
        resume_into_a_fresh_optimizer(resumable)
    rewrite_training(resumable, change_document=lambda d: d["files"].update(model=training, training=training))
    with pytest.raises(InputError, match=r"its weights entry names 'training-.*', not a model-<hash>\.safetensors"):
        load_checkpoint(resumable)


def test_a_training_state_that_fits_is_restored_exactly(resumable: Path):
    saved = load_tensors(
        (resumable / json.loads((resumable / JSON_NAME).read_text())["files"]["training"]["name"]).read_bytes()
    )
    optimizer = resume_into_a_fresh_optimizer(resumable)
    state = optimizer.state_dict()["state"]
    assert all(
        torch.equal(state[int(n.split(".")[1])][n.split(".")[2]], t) for n, t in saved.items() if n[:4] == "opti"
    )
    assert torch.equal(torch.get_rng_state(), saved["rng.cpu"])


# Save, load and resume through `train` and the checkpoint functions --------------------------------------


def test_resume_gives_the_losses_of_an_uninterrupted_run(tmp_path: Path):
    whole = run(tiny_config("bahdanau", epochs=3))
    run(tiny_config("bahdanau", epochs=1), checkpoint=tmp_path)
    resumed = run(tiny_config("bahdanau", epochs=3), checkpoint=tmp_path, resume=True)
    assert [h["loss"] for h in resumed.history] == [h["loss"] for h in whole.history]
    with pytest.raises(InputError, match="config changed.*hidden_size"):
        run(tiny_config("bahdanau", hidden_size=16), checkpoint=tmp_path, resume=True)


@pytest.fixture
def saved(tmp_path: Path):
    torch.manual_seed(0)
    vocabs = build_vocabularies(PAIRS)
    model = build_model("bahdanau", len(vocabs.source), len(vocabs.target), hidden_size=8)
    optimizer = torch.optim.Adam(model.parameters())
    train_step(model, collate(TranslationDataset(PAIRS[:4], vocabs).examples), optimizer, nn.NLLLoss())
    path = save_checkpoint(tmp_path / "ckpt", model, vocabs, training={"epoch": 1}, optimizer=optimizer, save_rng=True)
    return path, model.eval(), vocabs, optimizer


def test_checkpoint_roundtrip(saved):
    path, model, vocabs, optimizer = saved
    loaded = load_checkpoint(path)
    assert loaded.vocabs.source.index2word == vocabs.source.index2word
    assert loaded.training["epoch"] == 1 and not loaded.model.training
    for name, tensor in model.state_dict().items():
        assert torch.equal(tensor, loaded.model.state_dict()[name])
    fresh = torch.optim.Adam(loaded.model.parameters())
    restore_training_state(loaded, fresh)
    before, after = optimizer.state_dict()["state"], fresh.state_dict()["state"]
    assert sorted(before) == sorted(after)
    for param_id, values in before.items():
        assert all(torch.equal(values[key], after[param_id][key]) for key in values)
    assert not list(path.glob(".*tmp")), "temporary files were left behind"
    assert not any(p.suffix in {".pt", ".pth", ".pkl", ".bin"} for p in path.iterdir())


def test_checkpoint_replaced_atomically_keeps_one_set(saved):
    path, model, vocabs, _ = saved
    save_checkpoint(path, model, vocabs)  # weights only now
    assert len(list(path.glob("*.safetensors"))) == 1
    with pytest.raises(InputError, match="weights only"):
        restore_training_state(load_checkpoint(path), None)


def test_checkpoint_errors(saved, tmp_path: Path):
    path, *_ = saved
    with pytest.raises(InputError, match="does not exist"):
        load_checkpoint(tmp_path / "nowhere")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="checkpoint.json is missing"):
        load_checkpoint(empty)
    document = json.loads((path / "checkpoint.json").read_text())
    weights = path / document["files"]["model"]["name"]
    data = weights.read_bytes()
    weights.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="corrupted or truncated"):
        load_checkpoint(path)
    weights.write_bytes(data)
    load_checkpoint(path)
    mismatched = dict(document, config={**document["config"], "hidden_size": 16})
    (path / "checkpoint.json").write_text(json.dumps(mismatched))
    with pytest.raises(InputError, match="does not match its config.*'hidden_size': 16"):
        load_checkpoint(path)
    (path / "checkpoint.json").write_text("{not json")
    with pytest.raises(InputError, match="not valid JSON"):
        load_checkpoint(path)


def test_training_never_loses_an_existing_checkpoint(tmp_path: Path):
    run(tiny_config(epochs=1), checkpoint=tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    with pytest.raises(InputError, match="already holds a checkpoint"):
        run(tiny_config(epochs=1), checkpoint=tmp_path)
    (tmp_path / "checkpoint.json").unlink()
    del before["checkpoint.json"]
    with pytest.raises(InputError, match="checkpoint.json is missing"):
        run(tiny_config(epochs=2), checkpoint=tmp_path, resume=True)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    result = run(tiny_config(epochs=1), checkpoint=tmp_path / "new", resume=True)
    assert len(result.history) == 1  # resuming from nothing starts afresh
    run(tiny_config(epochs=1), checkpoint=tmp_path / "new", overwrite=True)
