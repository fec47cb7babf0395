"""Input at the public entry points: nothing wrong is loaded, reported or overwritten silently.

One section per class of the issue, each a property over the whole class rather than its examples:

1. a non-finite value in any tensor of either task's checkpoint is refused at save and at load,
   naming the tensor;
2. every evaluation function checks its lists (non-empty, one length, strings), the bootstrap
   interval never truncates, and a comparison in which nothing varies is a tie with p = 1;
5. a line of standard input ends at ``\\n`` (``\\r\\n``) only, whatever Unicode line separator it holds;
6. random Python types at each public entry point give an `InputError` or a result, never a
   `TypeError` or `AttributeError` from deep inside;
7. messages: ``unknown="skip"``, bytes, invisible characters, an empty attention row, and every
   ``--help`` states the ranges its command enforces.

Writes (class 3) and values read from checkpoints (class 4) are in `test_writing_commands.py`.
"""

import io
import json
import math
import re
import sys
import unicodedata
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from safetensors.torch import load as load_tensors
from safetensors.torch import save as save_tensors
from support import files_of

from seq2seq_attention import (
    EncoderRNN,
    InputError,
    MeanEmbeddingClassifier,
    SentimentClassifier,
    Vocabulary,
    build_attention,
    build_classifier,
    build_model,
    collate,
    lengths_to_mask,
    load_checkpoint,
    load_pairs,
    normalize_string,
    save_checkpoint,
    split_pairs,
    translate,
)
from seq2seq_attention.cli import main
from seq2seq_attention.core.vocabulary import Vocabularies
from seq2seq_attention.sentiment.data import tokenize
from seq2seq_attention.sentiment.figures import plot_word_attention
from seq2seq_attention.sentiment.train import predict
from seq2seq_attention.translation.corpus import Pair, build_vocabularies, split_lines
from seq2seq_attention.translation.evaluate import Evaluation, bootstrap_interval, compare, evaluate
from seq2seq_attention.translation.plotting import plot_attention, sentence_attention

pytestmark = pytest.mark.usefixtures("one_thread")

PAIRS = [
    Pair("je suis la .", "i am here ."),
    Pair("il est grand .", "he is tall ."),
    Pair("je suis grand .", "i am tall ."),
]
VOCABS = build_vocabularies(PAIRS)
SENTIMENT_VOCAB = Vocabulary.from_counts("words", [["good", "bad", "movie"]] * 2)
QUICK = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def translator(decoder: str = "bahdanau") -> torch.nn.Module:
    torch.manual_seed(0)
    return build_model(decoder, len(VOCABS.source), len(VOCABS.target), hidden_size=8).eval()


def classifier(kind: str = "attention") -> torch.nn.Module:
    torch.manual_seed(0)
    options = {"mean": {"embedding_size": 8, "dense_size": 4}}.get(kind, {"embedding_size": 8, "hidden_size": 4})
    return build_classifier(kind, len(SENTIMENT_VOCAB), **options).eval()


MODELS = {
    "translation-bahdanau": (lambda: translator("bahdanau"), VOCABS),
    "translation-luong": (lambda: translator("luong"), VOCABS),
    "translation-gru": (lambda: translator("gru"), VOCABS),
    "sentiment-attention": (lambda: classifier("attention"), Vocabularies(SENTIMENT_VOCAB)),
    "sentiment-mean": (lambda: classifier("mean"), Vocabularies(SENTIMENT_VOCAB)),
}


# 1. Non-finite weights ---------------------------------------------------------------------------


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
    model = translator()
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


# 2. Statistics -----------------------------------------------------------------------------------

WORDS = ["i", "am", "he", "is", "tall", "here", "tired", "."]
SENTENCE = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)


def evaluation(hypotheses: list[str], references: list[str]) -> Evaluation:
    return Evaluation(0.0, 0.0, 0.0, 0.0, "", None, list(references), list(references), list(hypotheses))


@settings(max_examples=60, deadline=None)
@given(hypotheses=st.lists(SENTENCE, max_size=6), references=st.lists(SENTENCE, max_size=6))
def test_the_bootstrap_interval_pairs_lists_of_one_length_or_refuses(hypotheses, references):
    if not hypotheses or not references or len(hypotheses) != len(references):
        with pytest.raises(InputError, match="hypotheses|references"):
            bootstrap_interval(hypotheses, references)
        return
    low, high = bootstrap_interval(hypotheses, references)
    assert 0 <= low <= high <= 100


@settings(max_examples=40, deadline=None)
@given(
    sentences=st.lists(SENTENCE, min_size=1, max_size=5),
    index=st.integers(0, 4),
    bad=st.sampled_from([math.nan, None, 3, b"i am", ["i", "am"]]),
    side=st.sampled_from(["hypotheses", "references"]),
)
def test_a_missing_cell_among_the_sentences_is_named(sentences, index, bad, side):
    broken = list(sentences)
    broken[index % len(broken)] = bad
    lists = {"hypotheses": list(sentences), "references": list(sentences), side: broken}
    with pytest.raises(InputError, match=rf"{side}\[{index % len(broken)}\] must be a string"):
        bootstrap_interval(lists["hypotheses"], lists["references"])
    with pytest.raises(InputError, match=rf"{side}\[{index % len(broken)}\] must be a string"):
        compare(evaluation(lists["hypotheses"], lists["references"]), evaluation(sentences, lists["references"]))


@settings(max_examples=30, deadline=None)
@given(hypotheses=st.lists(SENTENCE, min_size=1, max_size=8), references=st.lists(SENTENCE, min_size=1, max_size=8))
def test_a_system_against_itself_is_a_tie_with_p_1(hypotheses, references):
    n = min(len(hypotheses), len(references))
    same = evaluation(hypotheses[:n], references[:n])
    result = compare(same, same)
    assert result.p_value == 1.0 and not result.significant and result.difference == 0


@settings(max_examples=30, deadline=None)
@given(first=SENTENCE, second=SENTENCE, reference=SENTENCE, n=st.integers(1, 12))
def test_one_sentence_is_a_tie_and_a_constant_difference_is_significant(first, second, reference, n):
    """One sentence: p = 1, a tie. n >= 2 copies: no resample moves the difference; non-zero, it is the
    strongest evidence, p = 1/(N+1) (issue 32: the old "a tie" read a constant difference as none)."""
    result = compare(evaluation([first] * n, [reference] * n), evaluation([second] * n, [reference] * n))
    if n == 1 or result.difference == 0:
        assert result.p_value == 1.0 and not result.significant
    else:
        assert result.p_value == 1 / 1001 and result.significant


def test_compare_and_evaluate_refuse_what_is_not_theirs():
    good = evaluation(["i am here ."], ["i am here ."])
    for bad in (None, "i am here .", {"hypotheses": []}, [good]):
        with pytest.raises(InputError, match="must be an Evaluation"):
            compare(bad, good)
    for pairs in (None, "je suis la .", [("je suis la .", math.nan)], [None], b"x", 3):
        with pytest.raises(InputError, match="pair"):
            evaluate(translator(), VOCABS, pairs)
    with pytest.raises(InputError, match="must pair up one to one, got 3 hypotheses and 5 references"):
        bootstrap_interval(["i am ."] * 3, ["i am ."] * 5)


# 5. Lines of standard input ----------------------------------------------------------------------

LINE_BREAKS = sorted(c for c in map(chr, range(sys.maxunicode + 1)) if len(f"a{c}b".splitlines()) == 2)
"""Every character `str.splitlines` breaks at: \\n, \\r, VT, FF, FS, GS, RS, NEL, LS, PS."""
INSIDE = [c for c in LINE_BREAKS if c not in "\n\r"]
"""The separators that stay inside a line: all but \\n and \\r (a lone \\r ends a line, as in old Mac files)."""


def test_the_separator_table_is_the_whole_class():
    assert set(LINE_BREAKS) == set("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(st.text(st.characters(blacklist_characters="\n\r"), max_size=12), min_size=1, max_size=5),
    end=st.sampled_from(["\n", "\r\n", "\r"]),  # one kind per text: "\r" then an empty "\n" line reads as "\r\n"
    last_newline=st.booleans(),
)
def test_a_line_ends_at_newline_crlf_or_a_lone_cr_only(lines, end, last_newline):
    text = end.join(lines) + (end if last_newline else "")
    expected = lines if last_newline or lines[-1] else lines[:-1]  # "a\n" is one line, with or without a last ""
    assert split_lines(text) == expected


@pytest.mark.parametrize("end", ["\r", "\r\n", "\n"], ids=["lone CR", "CRLF", "LF"])
def test_old_mac_line_ends_translate_line_by_line_and_refusals_keep_their_line_number(end, capsys, monkeypatch):
    text = end.join(["je suis fatigue .", "il est grand .", "je suis un xylophoniste .", "", "nous sommes en retard ."])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO((text + end).encode("utf-8")), encoding="utf-8"))
    code = main(["translate"])
    out, err = capsys.readouterr()
    lines = out.split("\n")
    assert code == 2 and len(lines) == 6 and lines[5] == "", out  # five output lines, one per input line
    assert lines[0].startswith("i ") and lines[1].startswith("he ") and lines[2:4] == ["", ""] and lines[4]
    assert err.count("\n") == 1 and "line 3 of standard input" in err and "xylophoniste" in err


def test_translate_help_says_which_line_ends_it_reads(capsys):
    with pytest.raises(SystemExit):
        main(["translate", "--help"])
    assert "(a line ends at \\n, \\r\\n or a lone \\r)" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("separator", INSIDE, ids=[unicodedata.name(c, f"U+{ord(c):04X}") for c in INSIDE])
def test_every_unicode_line_separator_stays_inside_its_line(separator, capsys, monkeypatch):
    text = f"je suis{separator}la .\nil est grand .\r\n"
    assert split_lines(text) == [f"je suis{separator}la .", "il est grand ."]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8"))
    code = main(["translate", "--json"])
    captured = capsys.readouterr()
    if code == 0:  # normalised like any other non-letter: one translation per input line
        assert [row["source"] for row in json.loads(captured.out)] == [f"je suis{separator}la .", "il est grand ."]
    else:  # or refused with the line it is on
        assert code == 2 and captured.err.count("\n") == 1 and "line 1 of standard input" in captured.err


# 6. Wrong Python types at the public entry points --------------------------------------------------

ODD_VALUES = st.one_of(
    st.none(),
    st.binary(max_size=8),
    st.integers(-5, 5),
    st.floats(allow_nan=True),
    st.booleans(),
    st.lists(st.integers(0, 3), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.text(max_size=8),
    st.just(object()),
    st.just([None]),
    st.just(["je", b"suis"]),
)


def _entry_points():
    model, sentiment = translator(), classifier()
    weights = torch.full((2, 3), 1 / 3)
    good_eval = evaluation(["i am here ."], ["i am here ."])
    return {
        "translate": (translate, {"model": model, "vocabs": VOCABS, "sentences": ["je suis la ."]}),
        "translate-options": (
            lambda **kw: translate(model, VOCABS, ["je suis la ."], **kw),
            {
                "max_words": 6,
                "max_length": 5,
                "unknown": "error",
                "batch_size": 4,
                "beam_size": 1,
                "length_penalty": 1.0,
            },
        ),
        "sentence_attention": (sentence_attention, {"model": model, "vocabs": VOCABS, "sentence": "je suis la ."}),
        "evaluate": (lambda **kw: evaluate(model, VOCABS, **kw), {"pairs": PAIRS}),
        "bootstrap_interval": (bootstrap_interval, {"hypotheses": ["i am ."], "references": ["i am ."]}),
        "compare": (compare, {"baseline": good_eval, "system": good_eval}),
        "encode": (VOCABS.source.encode, {"sentence": "je suis la ."}),
        "decode": (VOCABS.target.decode, {"indices": [4, 5, 2]}),
        "normalize_string": (normalize_string, {"s": "Je suis là."}),
        "split_pairs": (split_pairs, {"pairs": PAIRS, "split": "by_english"}),
        "plot_attention": (
            plot_attention,
            {"weights": weights, "source_words": ["a", "b", "c"], "output_words": ["x", "y"]},
        ),
        "plot_word_attention": (
            lambda **kw: plot_word_attention(**kw, path=Path(__file__) / "never.png"),  # under a file: OSError
            {"words": [["a", "b"]], "weights": [[0.5, 0.5]], "titles": ["t"]},
        ),
        "predict": (lambda **kw: predict(sentiment, **kw), {"sequences": [[4, 5]]}),
        "tokenize": (tokenize, {"text": "a good movie"}),
        "load_checkpoint": (load_checkpoint, {"path": "/nonexistent-checkpoint"}),
        "load_pairs": (load_pairs, {"max_words": 3, "prefixes": ("i am ",), "path": "/nonexistent-corpus.txt"}),
        "build_model": (build_model, dict(decoder="gru", src_vocab_size=5, tgt_vocab_size=5, hidden_size=4)),
        "collate": (collate, {"examples": [([4, 2], [5, 2]), ([4], 1)]}),
        "lengths_to_mask": (lengths_to_mask, {"lengths": torch.tensor([2, 1]), "max_length": 2}),
        "EncoderRNN": (EncoderRNN, {"input_size": 5, "hidden_size": 4}),
        "SentimentClassifier": (SentimentClassifier, dict(vocab_size=5, embedding_size=4, hidden_size=2, dense_size=2)),
        "MeanEmbeddingClassifier": (MeanEmbeddingClassifier, dict(vocab_size=5, embedding_size=4, dense_size=2)),
        "build_attention": (build_attention, {"name": "dot", "hidden_size": 4}),
    }


ENTRY_POINTS = _entry_points()


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(sorted(ENTRY_POINTS)), data=st.data())
def test_random_types_at_each_public_entry_point_give_an_input_error(name, data):
    function, arguments = ENTRY_POINTS[name]
    argument = data.draw(st.sampled_from(sorted(arguments)), label="argument")
    value = data.draw(ODD_VALUES, label="value")
    try:
        function(**{**arguments, argument: value})
    except InputError as error:
        assert str(error) and len(str(error)) < 700
    except OSError:
        assert name == "plot_word_attention"  # a well-typed call reached the folder (a file)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(argument=st.sampled_from(["model", "vocabs", "training", "optimizer"]), value=ODD_VALUES)
def test_random_types_into_save_checkpoint_give_an_input_error(tmp_path_factory, argument, value):
    directory = tmp_path_factory.mktemp("save") / "checkpoint"
    arguments = {"model": translator(), "vocabs": VOCABS, "training": {}, "optimizer": None}
    try:
        save_checkpoint(directory, **{**arguments, argument: value})
    except InputError as error:
        assert str(error) and not directory.exists()


# 7. Messages -------------------------------------------------------------------------------------


def test_messages_say_what_is_wrong_in_words():
    model = translator()
    with pytest.raises(InputError) as error:
        translate(model, VOCABS, ["je suis la ."], unknown="skip")
    assert str(error.value).startswith("unknown must be 'error' or 'unk'") and "sentence" not in str(error.value)
    with pytest.raises(InputError, match=r"got bytes b'je suis'; decode it"):
        translate(model, VOCABS, [b"je suis"])
    with pytest.raises(InputError, match="got bytes"):
        VOCABS.source.encode(b"je suis")
    # invisible format characters are removed in both tasks (issue 32), not read as a word break
    assert translate(model, VOCABS, ["je su\u200bis la ."]) == translate(model, VOCABS, ["je suis la ."])
    with pytest.raises(InputError, match="U\\+2060 WORD JOINER"):
        translate(model, VOCABS, ["\u2060"])


@pytest.mark.parametrize("rows", [[[], []], [["a"], []], [[], ["a"]]])
def test_an_empty_attention_row_is_named(rows, tmp_path):
    words, weights = ([rows[0]], [[]]) if rows[0] == [] else ([rows[0]], [rows[1]])
    with pytest.raises(InputError, match="sentence 1|1 words but 0 weights"):
        plot_word_attention(words, weights, ["title"], tmp_path / "x.png")
    assert not list(tmp_path.iterdir())


COMMANDS = ["train", "translate", "export-onnx", "plot-attention", "sentiment-train", "sentiment-predict"]
COMMANDS += ["sentiment-attention-figure", "models"]


def test_the_command_list_is_every_command(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    listed = re.findall(r"^ {4}([a-z][a-z-]+)(?: |$)", capsys.readouterr().out, re.M)
    assert sorted(listed) == sorted(COMMANDS)


def _refusal(argv: list[str], capsys: pytest.CaptureFixture) -> str:
    """The error argparse gives for `argv`; "--help" after it stops a valid value from running anything."""
    with pytest.raises(SystemExit):
        main([*argv, "--help"])
    return capsys.readouterr().err


@pytest.mark.parametrize("command", COMMANDS)
def test_every_help_states_the_ranges_its_command_enforces(command, capsys):
    """Each numeric option (one that refuses "abc" as a number) is given a huge and a hugely
    negative number: the range it refuses them with must be written in the command's --help."""
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    options = sorted(set(re.findall(r"(--[a-z][a-z-]*) [A-Z_]+", text)))
    not_a_number = re.compile(r"expected (an integer|a number)")
    numeric = [o for o in options if not_a_number.search(_refusal([command, o, "abc"], capsys))]
    for option in numeric:
        for value in ("99999999999999999999", "-99999999999999999999"):
            err = _refusal([command, option, value], capsys)
            found = re.search(r"must lie in ([\[(][^\])]*[\])])", err)
            assert found, (command, option, value, err)  # a number must not pass unbounded
            assert found.group(1) in text, (command, option, found.group(1))
    assert numeric or command in ("export-onnx", "models"), f"{command}: no numeric option found"
