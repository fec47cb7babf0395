"""`checked`: a check reads its function's own signature (a `Call` of bound arguments, defaults applied), so no
check restates a parameter or a default; the outermost call checks, nested ones do not, and `checks_of` is the one
explicit way to check what a function computes and passes on.

At the boundary: random Python types at each public entry point give an `InputError` or a result, never a
`TypeError` or `AttributeError` from deep inside; an argument a check reads before its function (a one-shot
iterator) is refused, and what a checked function hands on is checked where its own check does not cover it.
"""

import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import TINY_PAIRS, evaluation, refused, tiny_classifier, tiny_translator, tiny_vocabs

import seq2seq_attention
from seq2seq_attention import (
    EncoderRNN,
    MeanEmbeddingClassifier,
    SentimentClassifier,
    Vocabulary,
    build_attention,
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
from seq2seq_attention.core.checks import Call, checked, checks_of
from seq2seq_attention.core.errors import InputError
from seq2seq_attention.sentiment.data import tokenize
from seq2seq_attention.sentiment.figures import plot_word_attention
from seq2seq_attention.sentiment.train import predict
from seq2seq_attention.translation.corpus import Pair
from seq2seq_attention.translation.evaluate import bootstrap_interval, compare, evaluate
from seq2seq_attention.translation.plotting import plot_attention, sentence_attention

pytestmark = pytest.mark.usefixtures("one_thread")

VOCABS = tiny_vocabs()
PAIRS = [Pair(*pair) for pair in TINY_PAIRS]


def _checked_functions():
    """Every `checked` function and method of the package, with its check resolved to a callable."""
    found = {}
    for module_info in pkgutil.walk_packages(seq2seq_attention.__path__, "seq2seq_attention."):
        if ".cli" in module_info.name:
            continue
        module = importlib.import_module(module_info.name)
        for name, value in vars(module).items():
            candidates = [(name, value, None)]
            if inspect.isclass(value) and value.__module__ == module.__name__:
                candidates += [(f"{name}.{n}", v, value) for n, v in vars(value).items()]
            for qualname, function, owner in candidates:
                check = getattr(function, "__checked_by__", None)
                if check is None or getattr(function, "__module__", None) != module.__name__:
                    continue
                resolved = getattr(owner, check) if isinstance(check, str) else check
                found[f"{module.__name__}.{qualname}"] = (function, resolved, isinstance(check, str))
    return found


CHECKED = _checked_functions()


def test_the_package_has_its_checked_functions():
    """The workbench's boundaries (the model's are its annotations, `test_attention.py` and `test_decoders.py`)."""
    assert len(CHECKED) >= 10, sorted(CHECKED)
    assert not [name for name in CHECKED if name.startswith("seq2seq_attention.model.")]
    assert "seq2seq_attention.translation.translator.translate" in CHECKED


@pytest.mark.parametrize("name", sorted(CHECKED))
def test_no_check_restates_its_functions_parameters(name):
    function, check, is_method = CHECKED[name]
    parameters = list(inspect.signature(check).parameters)
    expected = ["self", "call"] if is_method else ["call"]
    assert parameters == expected, f"{name}: its check {check.__qualname__} takes {parameters}, not one Call"
    own = set(inspect.signature(function).parameters) - {"self"}
    assert not own.intersection(parameters), f"{check.__qualname__} copies {own.intersection(parameters)}"


def test_a_check_sees_the_functions_own_defaults():
    seen = []

    @checked(lambda call: seen.append((call.beam_size, call.length_penalty, "beam_size" in call, "other" in call)))
    def search(sentence: str, *, beam_size: int = 5, length_penalty: float = 1.0) -> str:
        return sentence

    assert search("je suis .") == "je suis ." and search("x", length_penalty=0.5) == "x"
    assert seen == [(5, 1.0, True, False), (5, 0.5, True, False)]


def test_a_call_the_signature_cannot_bind_gets_pythons_own_type_error():
    @checked(lambda call: (_ for _ in ()).throw(AssertionError("the check must not run")))
    def one(a: int) -> int:
        return a

    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        one()
    with pytest.raises(TypeError, match="unexpected keyword argument 'b'"):
        one(1, b=2)


def test_nested_calls_are_not_checked_and_checks_of_runs_a_check_explicitly():
    def refuse_negative(call: Call) -> None:
        if call.n < 0:
            raise InputError(f"n must be at least 0, got {call.n}")

    @checked(refuse_negative)
    def inner(n: int) -> int:
        return n

    @checked(lambda call: None)
    def outer(n: int) -> int:
        return inner(-n)  # the package's own call: inner's check does not run

    assert outer(3) == -3
    with pytest.raises(InputError, match="n must be at least 0, got -1"):
        inner(-1)
    with pytest.raises(InputError, match="got -2"):
        checks_of(inner, -2)


def test_a_call_names_a_missing_parameter_and_reads_an_argument_named_keys():
    call = Call(test_a_call_names_a_missing_parameter_and_reads_an_argument_named_keys, {"keys": 1})
    assert call.keys == 1 and call["keys"] == 1 and "keys" in call
    with pytest.raises(AttributeError, match="has no parameter 'query'"):
        _ = call.query


def _defined_checks(tree_path):
    """The line of each function of the file whose name starts with `_check` (a check), by name."""
    import ast

    tree = ast.parse(tree_path.read_text(encoding="utf-8"))
    return {
        node.lineno: node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("_check")
    }


@pytest.mark.parametrize("name", sorted(CHECKED))
def test_each_check_sits_just_above_what_it_guards(name):
    """One place for checks, the same in every module: a check named by `checked` is defined above its function in
    the same file, with no other check between them (no check trails a class body or lives in a module of its own)."""
    from pathlib import Path

    function, check, _ = CHECKED[name]
    if check.__name__ == "<lambda>":
        return  # written on the decorator itself
    check_file, function_file = inspect.getsourcefile(check), inspect.getsourcefile(inspect.unwrap(function))
    assert check_file == function_file, f"{name}: its check {check.__qualname__} lives in {check.__module__}"
    check_line = inspect.getsourcelines(check)[1]
    function_line = inspect.getsourcelines(inspect.unwrap(function))[1]
    between = [n for line, n in _defined_checks(Path(check_file)).items() if check_line < line < function_line]
    assert check_line < function_line and not between, f"{name}: {check.__qualname__} is not just above it {between}"


def test_checked_is_the_one_decorator_that_checks():
    """No module makes a checking decorator of its own (`functools.wraps` around a check): `checked` is the
    workbench's, `annotations_checked` (jaxtyping with beartype) the model's."""
    from support import ROOT

    wrappers = [
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "src").rglob("*.py")
        if "functools.wraps" in path.read_text(encoding="utf-8") and path.name not in ("checks.py", "tensors.py")
    ]
    assert wrappers == []


def test_build_model_resolves_the_score_once(monkeypatch):
    """`choose_score` turns None into the decoder's default once per `build_model`, and the decoders take the name it
    returned; `TrainConfig` validates the name with the same function."""
    from seq2seq_attention.model import decoders, seq2seq
    from seq2seq_attention.model.scores import SCORES

    calls = []
    real = decoders.choose_score

    def counting(decoder, score):
        calls.append((decoder, score))
        return real(decoder, score)

    monkeypatch.setattr(seq2seq, "choose_score", counting)
    for name, kind in decoders.DECODERS.items():
        calls.clear()
        built = seq2seq.build_model(name, 5, 6, hidden_size=4)
        assert calls == [(name, None)]
        assert built.config["score"] == (kind.scores[0] if kind.scores else None)
        if kind.scores:
            assert type(built.decoder.attention) is SCORES[kind.scores[0]]  # the resolved name reached the decoder


def test_each_decoder_takes_only_what_it_uses():
    """The decoder without attention takes no dropout and no score; only a feeding decoder takes `input_feeding`;
    a constructor's default score is its table's first, the one `choose_score` picks."""
    from seq2seq_attention.model.decoders import DECODERS

    for name, kind in DECODERS.items():
        parameters = inspect.signature(kind.decoder).parameters
        assert list(parameters)[:2] == ["hidden_size", "output_size"]
        assert ("score" in parameters) == bool(kind.scores), name
        assert ("dropout_p" in parameters) == bool(kind.scores), name  # the gru decoder has no dropout
        if kind.scores:
            assert parameters["score"].default == kind.scores[0], name
    assert [name for name, kind in DECODERS.items() if kind.feeds_input] == ["luong"]
    with pytest.raises(TypeError):
        DECODERS["gru"].decoder(4, 5, score="dot")


# Arguments a check reads before its function runs, and what a checked function hands on --------------------


def test_a_one_shot_iterator_is_refused_where_a_check_reads_the_argument_before_the_function():
    vocab = Vocabulary.from_sentences("eng", ["i am here ."])
    refused(lambda: vocab.decode(iter([4, 5, 2])), "indices must be a list", "list_iterator")
    assert vocab.decode([4, 5, 2]) == vocab.decode((4, 5, 2)) == vocab.decode(torch.tensor([4, 5, 2])) == "i am"
    pairs = [Pair("je suis la .", "i am here .")]
    refused(lambda: split_pairs(p for p in pairs), "pairs must be a list", "generator")
    refused(lambda: load_pairs(prefixes=(p for p in ["i am "])), "prefixes must be a list")


def test_what_a_checked_function_hands_on_is_still_checked_where_its_own_check_does_not_cover_it():
    """A call made inside a checked function skips the callee's check; these callers check for it."""
    refused(
        lambda: evaluate(tiny_translator(), VOCABS, [Pair("je suis la .", "i am here .")], beam_size=0), "beam_size"
    )
    refused(
        lambda: evaluate(tiny_translator(), VOCABS, [Pair("je suis la .", "i am here .")], batch_size=True),
        "batch_size",
    )
    refused(
        lambda: translate(tiny_translator(), VOCABS, ["je suis petit ."]), "sentence 1 has unknown fra word(s) 'petit'"
    )


# Random Python types at each public entry point give an InputError or a result, never a TypeError or an
# AttributeError from deep inside --------------------------------------------------------------------------


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
    model, sentiment = tiny_translator(), tiny_classifier()
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
    arguments = {"model": tiny_translator(), "vocabs": VOCABS, "training": {}, "optimizer": None}
    try:
        save_checkpoint(directory, **{**arguments, argument: value})
    except InputError as error:
        assert str(error) and not directory.exists()
