"""`checked`: a check reads its function's own signature (a `Call` of bound arguments, defaults applied), so no
check restates a parameter or a default; the outermost call checks, nested ones do not, and `checks_of` is the one
explicit way to check what a function computes and passes on."""

import importlib
import inspect
import pkgutil

import pytest

import seq2seq_attention
from seq2seq_attention.core.checks import Call, checked, checks_of
from seq2seq_attention.core.errors import InputError


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
    assert len(CHECKED) >= 25, sorted(CHECKED)
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
