"""Every bad input gets one clear answer: the one input-error type, or a correct result; never NaN.

One table per class of bad input (empty batches, devices, dtypes, numbers, checkpoint JSON, files,
data, messages, non-finite padding). A case passes when the call raises `InputError` whose
message names the argument and echoes at most 200 characters of the input, or returns a finite,
correct result. The command-line side of the same classes is in `test_cli_bad_input.py`.
"""

import json
import math
import shutil
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from seq2seq_attention import (
    BahdanauAttention,
    EncoderRNN,
    GeneralAttention,
    InputError,
    Vocabulary,
    build_classifier,
    build_model,
    greedy_decode,
    load_checkpoint,
    save_checkpoint,
    scaled_dot_score,
    translate,
)
from seq2seq_attention.core.checks import MAX_PARAMETERS
from seq2seq_attention.core.device import parse_device
from seq2seq_attention.core.errors import ECHO_LIMIT
from seq2seq_attention.core.vocabulary import Vocabularies
from seq2seq_attention.translation.corpus import Pair, build_vocabularies, load_pairs, read_lines, split_pairs
from seq2seq_attention.translation.evaluate import evaluate
from seq2seq_attention.translation.search import beam_search_decode

pytestmark = pytest.mark.usefixtures("one_thread")

VOCABS = build_vocabularies([Pair("je suis la .", "i am here ."), Pair("il est grand .", "he is tall .")])


def model(decoder: str = "bahdanau"):
    torch.manual_seed(0)
    return build_model(decoder, len(VOCABS.source), len(VOCABS.target), hidden_size=8).eval()


def refused(call, *words: str) -> str:
    """Run `call`, expect one InputError naming all `words`; return its message."""
    with pytest.raises(InputError) as error:
        call()
    message = str(error.value)
    for word in words:
        assert word in message, (word, message)
    return message


# --- empty batches -------------------------------------------------------------------------------


def test_empty_batches_and_sequences_are_refused():
    refused(lambda: EncoderRNN(10, 8)(torch.zeros(0, 3, dtype=torch.long), torch.zeros(0, dtype=torch.long)), "input")
    refused(lambda: EncoderRNN(10, 8)(torch.zeros(2, 0, dtype=torch.long)), "input", "(2, 0)")
    empty = torch.zeros(0, 3, dtype=torch.long)
    refused(lambda: greedy_decode(model(), empty, torch.zeros(0, dtype=torch.long)), "source", "B=0")
    classifier = build_classifier("attention", 10, embedding_size=4, hidden_size=2, attention_size=2)
    refused(lambda: classifier(empty, torch.zeros(0, dtype=torch.long)), "input")


# --- devices -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["mps", "meta", "xla", "cuda:99", "gpu0", "cpu:x"])
def test_devices_this_package_cannot_use_are_named(name):
    message = refused(lambda: parse_device(name), "--device", name)
    assert "Traceback" not in message


def test_lengths_on_the_meta_device_are_refused():
    lengths = torch.tensor([3, 2], device="meta")
    refused(lambda: EncoderRNN(10, 8)(torch.ones(2, 3, dtype=torch.long), lengths), "lengths", "meta")


# --- dtypes --------------------------------------------------------------------------------------


def test_float64_inputs_to_float32_modules_are_named():
    query, keys = torch.randn(2, 1, 8, dtype=torch.float64), torch.randn(2, 5, 8, dtype=torch.float64)
    for attention in (GeneralAttention(8), BahdanauAttention(8)):
        refused(lambda attention=attention: attention(query, keys), "query", "float64", "float32")
    attention = BahdanauAttention(8)
    q32, k32 = query.float(), keys.float()
    refused(lambda: attention(q32, k32, proj_keys=attention.project_keys(k32).double()), "proj_keys", "float64")


@pytest.mark.parametrize("dtype", [torch.bool, torch.int64, torch.float64])
def test_checkpoint_tensors_of_another_dtype_are_refused(tmp_path, dtype):
    translator = model()
    save_checkpoint(tmp_path, translator, VOCABS)
    document = json.loads((tmp_path / "checkpoint.json").read_text())
    from safetensors.torch import load_file, save_file

    weights_file = tmp_path / document["files"]["model"]["name"]
    weights = load_file(str(weights_file))
    weights["decoder.out.bias"] = weights["decoder.out.bias"].to(dtype)
    save_file(weights, str(weights_file))
    import hashlib

    data = weights_file.read_bytes()
    document["files"]["model"]["sha256"] = hashlib.sha256(data).hexdigest()
    (tmp_path / "checkpoint.json").write_text(json.dumps(document))
    refused(lambda: load_checkpoint(tmp_path), "decoder.out.bias", str(dtype))


# --- numbers -------------------------------------------------------------------------------------


@pytest.mark.parametrize("penalty", [math.nan, math.inf, -math.inf, 1e300, "1", True])
def test_length_penalty_must_be_a_finite_number(penalty):
    refused(lambda: translate(model(), VOCABS, ["je suis la ."], beam_size=2, length_penalty=penalty), "length_penalty")
    refused(lambda: translate(model(), VOCABS, ["je suis la ."], length_penalty=penalty), "length_penalty")


@pytest.mark.parametrize(
    ("name", "value"), [("max_length", 10**12), ("max_length", 2.0), ("beam_size", 2.0), ("beam_size", 0)]
)
def test_search_sizes_are_ints_in_range(name, value):
    source, lengths = torch.tensor([[4, 2]]), torch.tensor([2])
    options = {"max_length": 5, "beam_size": 2, name: value}
    refused(lambda: beam_search_decode(model(), source, lengths, **options), name)


def test_scaled_dot_score_without_features_is_refused():
    refused(lambda: scaled_dot_score(torch.randn(2, 1, 0), torch.randn(2, 3, 0)), "H=0")


def test_configs_refuse_non_finite_and_out_of_range_numbers():
    from seq2seq_attention.sentiment.train import SentimentConfig
    from seq2seq_attention.translation.train import TrainConfig

    for field, value in [("weight_decay", math.nan), ("learning_rate", math.inf), ("batch_size", 0), ("dropout", 1.0)]:
        refused(lambda field=field, value=value: TrainConfig(**{field: value}), field)
    refused(lambda: TrainConfig(epochs=2.5), "epochs", "integer")
    refused(lambda: SentimentConfig(batch_size=0), "batch_size")
    refused(lambda: SentimentConfig(sources=()), "sources")


# --- checkpoint JSON -----------------------------------------------------------------------------


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
    save_checkpoint(tmp_path, model(), VOCABS)
    change, word = BROKEN_JSON[kind]
    _edit(tmp_path, change)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    message = refused(lambda: load_checkpoint(tmp_path), word)
    assert len(message) < 2 * ECHO_LIMIT + 300
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # nothing on disk changed


def test_deeply_nested_or_non_strict_json_is_refused(tmp_path):
    save_checkpoint(tmp_path, model(), VOCABS)
    (tmp_path / "checkpoint.json").write_text("[" * 100_000 + "]" * 100_000)
    refused(lambda: load_checkpoint(tmp_path), "not valid JSON")
    save_checkpoint(tmp_path, model(), VOCABS)
    text = (tmp_path / "checkpoint.json").read_text().replace('"epoch"', '"x": NaN, "epoch"', 1)
    (tmp_path / "checkpoint.json").write_text(text.replace('"training": {}', '"training": {"x": NaN}'))
    refused(lambda: load_checkpoint(tmp_path), "NaN")


def test_a_nan_in_the_training_record_is_saved_as_null_and_unsaveable_values_change_nothing(tmp_path):
    save_checkpoint(tmp_path, model(), VOCABS, training={"history": [{"test_loss": math.nan}]})
    text = (tmp_path / "checkpoint.json").read_text()
    assert "NaN" not in text and json.loads(text)["training"]["history"][0]["test_loss"] is None
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(ValueError, match="cannot be saved as JSON"):
        save_checkpoint(tmp_path, model(), VOCABS, training={"when": object()})
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no stray model-*.safetensors


def test_a_checkpoint_path_that_is_a_file_is_called_a_file(tmp_path):
    (tmp_path / "file").write_text("x")
    refused(lambda: load_checkpoint(tmp_path / "file"), "is a file")


def test_a_model_too_large_for_the_budget_is_refused_before_allocation():
    refused(lambda: build_model("gru", 10, 10, hidden_size=1 << 16), "parameters", f"{MAX_PARAMETERS:,}")
    refused(lambda: build_classifier("mean", 1 << 20, embedding_size=1 << 12), "parameters")


# --- files and data ------------------------------------------------------------------------------


def test_corpus_files(tmp_path):
    refused(lambda: read_lines(tmp_path), "is a directory")
    bom = tmp_path / "bom.txt"
    bom.write_bytes("\ufeffI am here.\tJe suis là.\nGo.\tVa !\n".encode())
    assert read_lines(bom) == [("I am here.", "Je suis là."), ("Go.", "Va !")]  # the first pair is kept
    assert load_pairs(path=bom) == [Pair("je suis la .", "i am here .")]


def test_decoding_indices_outside_the_vocabulary_is_refused():
    vocab = Vocabulary.from_sentences("eng", ["i am here ."])
    assert vocab.decode([4, 5, 2, 6]) == "i am"
    refused(lambda: vocab.decode([-1]), "-1", "eng")
    refused(lambda: vocab.decode([len(vocab)]), str(len(vocab)))


def test_a_one_shot_iterator_is_refused_where_a_check_reads_the_argument_before_the_function():
    vocab = Vocabulary.from_sentences("eng", ["i am here ."])
    refused(lambda: vocab.decode(iter([4, 5, 2])), "indices must be a list", "list_iterator")
    assert vocab.decode([4, 5, 2]) == vocab.decode((4, 5, 2)) == vocab.decode(torch.tensor([4, 5, 2])) == "i am"
    pairs = [Pair("je suis la .", "i am here .")]
    refused(lambda: split_pairs(p for p in pairs), "pairs must be a list", "generator")
    refused(lambda: load_pairs(prefixes=(p for p in ["i am "])), "prefixes must be a list")


def test_what_a_checked_function_hands_on_is_still_checked_where_its_own_check_does_not_cover_it():
    """A call made inside a checked function skips the callee's check; these callers check for it."""
    refused(lambda: evaluate(model(), VOCABS, [Pair("je suis la .", "i am here .")], beam_size=0), "beam_size")
    refused(lambda: evaluate(model(), VOCABS, [Pair("je suis la .", "i am here .")], batch_size=True), "batch_size")
    refused(lambda: translate(model(), VOCABS, ["je suis petit ."]), "sentence 1 has unknown fra word(s) 'petit'")


# --- messages ------------------------------------------------------------------------------------


def test_echoed_input_is_capped():
    word = "x" * 100_000
    message = refused(lambda: translate(model(), VOCABS, [f"je suis {word} ."], max_words=10), "sentence 1")
    assert len(message) < 3 * ECHO_LIMIT + 200


@settings(max_examples=25, deadline=None)
@given(st.text(min_size=1, max_size=3000))
def test_any_text_is_translated_or_refused_with_a_short_message(text):
    try:
        (translation,) = translate(model(), VOCABS, [text], unknown="unk")
    except InputError as error:
        assert len(str(error)) < 3 * ECHO_LIMIT + 200 and str(error).startswith("sentence 1 ")
    else:
        assert isinstance(translation, str)


# --- non-finite values at padded positions -------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 6), min_size=1, max_size=4),
    poison=st.sampled_from([math.nan, math.inf, -math.inf, 1e38]),
    score=st.sampled_from(["additive", "dot", "scaled_dot", "general"]),
)
def test_padding_never_leaks_into_the_context(lengths, poison, score):
    from seq2seq_attention import build_attention, lengths_to_mask

    torch.manual_seed(0)
    attention = build_attention(score, 8)
    S = max(lengths + [1])
    keys = torch.randn(len(lengths), S, 8)
    mask = lengths_to_mask(torch.tensor(lengths), S)  # (B, S)
    keys = keys.masked_fill(~mask.unsqueeze(2), poison)  # padded positions hold garbage
    query = torch.randn(len(lengths), 1, 8)
    with torch.no_grad():
        context, weights = attention(query, keys, mask)
    assert torch.isfinite(context).all() and torch.isfinite(weights).all()
    assert torch.equal(weights[~mask.unsqueeze(1)], torch.zeros_like(weights[~mask.unsqueeze(1)]))
    clean = keys.masked_fill(~mask.unsqueeze(2), 0.0)
    with torch.no_grad():
        expected, _ = attention(query, clean, mask)
    torch.testing.assert_close(context, expected)
    for b, n in enumerate(lengths):
        if n == 0:  # a fully padded row: zero weights, zero context
            assert torch.equal(context[b], torch.zeros_like(context[b]))


def test_vocabularies_round_trip_without_target(tmp_path):
    classifier = build_classifier("mean", 10, embedding_size=4, dense_size=3)
    vocab = Vocabulary("words")
    for i in range(6):
        vocab.add_word(f"w{i}")
    save_checkpoint(tmp_path, classifier, Vocabularies(vocab))
    loaded = load_checkpoint(tmp_path)
    assert loaded.vocabs.target is None and loaded.vocabs.source == vocab
    shutil.rmtree(tmp_path)
