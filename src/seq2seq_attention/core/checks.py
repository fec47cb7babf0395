"""Input checks for public entry points, and `checked`, the one way a public function gets its check.

Each check raises one `InputError` (a `ValueError`) that names the argument, what was expected and what
came, e.g. ``keys must be (B, S, H) with H=256, got (4, 7, 128)``. Helpers inside a module
trust their callers; only the boundary a user calls (public functions and `forward`s through
`checked`, data loading, the CLI and checkpoint loading) calls these.
"""

import contextvars
import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

import torch

from .config import is_int
from .errors import InputError, echo

Dim = str | int

F = TypeVar("F", bound=Callable[..., object])

_INSIDE = contextvars.ContextVar("seq2seq_attention_inside_a_checked_call", default=False)
"""True while a `checked` function runs: the calls it makes are the package's own."""


class Call:
    """The arguments of one call of a `checked` function, bound to that function's own signature with its
    defaults applied: ``call.beam_size`` (or ``call["beam_size"]``) is what the function will see, passed or
    defaulted (``call.self`` for a method); ``"beam_size" in call`` says whether the function has that
    parameter. A check reads its function's arguments here and never restates their names or defaults.
    (Only dunder methods: ``call.keys`` is the argument named ``keys``.)"""

    __slots__ = ("__arguments", "__function")

    def __init__(self, function: Callable[..., object], arguments: Mapping[str, object]) -> None:
        self.__function = function
        self.__arguments = dict(arguments)

    def __getattr__(self, name: str) -> object:
        try:
            return self.__arguments[name]
        except KeyError:
            raise AttributeError(f"{self.__function.__qualname__}() has no parameter {name!r}") from None

    def __getitem__(self, name: str) -> object:
        return self.__arguments[name]

    def __contains__(self, name: object) -> bool:
        return name in self.__arguments

    def __repr__(self) -> str:
        return f"Call({self.__function.__qualname__}, {self.__arguments!r})"


def checked(check: Callable[[Call], object] | str) -> Callable[[F], F]:
    """Run `check` on a public function's arguments when a user calls it, not when the package does.

    The decorated function is the code a page shows, with no check in it. `check` takes one `Call`:
    the call's arguments bound to the decorated function's own signature, defaults applied (a string
    names a method of ``self`` that takes that `Call`), and raises an `InputError` for what does not
    fit. A call with arguments the signature cannot bind (a missing or unknown one) goes to the
    function unchecked, so that Python's own `TypeError` names it.

    A call made while another checked function runs comes from the package, whose tensors that outer
    check vouched for or the package made itself, so it runs without a second check: `source` is
    checked once on its way from `translate` to the encoder, and a decoder step is not re-checked at
    every word. An outer check therefore covers every argument its function passes on unchanged; a
    check that must cover what its function computes and passes on calls that function's check
    itself (`checks_of`). A graph being traced (`torch.export`, `torch.jit.trace`) holds symbolic
    sizes: no check runs there either.
    """

    def decorate(function: F) -> F:
        signature = inspect.signature(function)

        @functools.wraps(function)
        def boundary(*args: object, **kwargs: object) -> object:
            if _INSIDE.get() or torch.compiler.is_compiling() or torch.jit.is_tracing():
                return function(*args, **kwargs)  # the package's own call, or a graph being traced for export
            try:
                _run_check(boundary, args, kwargs)
            except _Unbound:
                return function(*args, **kwargs)  # Python's own TypeError names the missing or unknown argument
            token = _INSIDE.set(True)
            try:
                return function(*args, **kwargs)
            finally:
                _INSIDE.reset(token)

        boundary.__checked_by__ = check  # type: ignore[attr-defined]  # tests/workbench/test_checks.py reads it
        boundary.__checked_signature__ = signature  # type: ignore[attr-defined]  # read once, at decoration
        return boundary  # type: ignore[return-value]

    return decorate


def checks_of(function: Callable[..., object], *args: object, **kwargs: object) -> None:
    """Run the check of the `checked` `function` (a bound method too) on these arguments, as a user's call would,
    and nothing else.

    For a check that must cover what its own function computes and passes on, e.g. the words that
    `prepare_sentences` encodes: the nested call itself runs unchecked."""
    if inspect.ismethod(function):
        function, args = function.__func__, (function.__self__, *args)
    try:
        _run_check(function, args, kwargs)
    except _Unbound as error:
        raise TypeError(str(error)) from None


class _Unbound(TypeError):
    """The arguments do not fit the function's signature (`_run_check`)."""


def _run_check(boundary: Callable[..., object], args: tuple, kwargs: dict) -> None:
    """Bind `args` and `kwargs` to the `checked` function's own signature, defaults applied, and run its check."""
    try:
        bound = boundary.__checked_signature__.bind(*args, **kwargs)  # type: ignore[attr-defined]
    except TypeError as error:
        raise _Unbound(str(error)) from None
    bound.apply_defaults()
    check = boundary.__checked_by__  # type: ignore[attr-defined]
    (getattr(args[0], check) if isinstance(check, str) else check)(Call(boundary.__wrapped__, bound.arguments))


def _describe(dims: Sequence[Dim], known: Mapping[str, int]) -> str:
    names = ", ".join(str(d) for d in dims)
    fixed = [f"{d}={known[d]}" for d in dims if isinstance(d, str) and d in known]
    return f"({names})" + (f" with {', '.join(fixed)}" if fixed else "")


def check_tensor(
    name: str,
    tensor: object,
    dims: Sequence[Dim],
    known: Mapping[str, int] | None = None,
    *,
    dtype: str | None = None,
) -> dict[str, int]:
    """Check a tensor's rank, sizes and dtype kind, and bind the named sizes.

    Args:
        name: the argument's name, used in the message.
        tensor: the value to check.
        dims: one entry per dimension: a letter such as ``"B"`` (bound on first sight,
            then checked), or an int that the size must equal.
        known: sizes already bound, e.g. ``{"H": 256, "B": 4}``.
        dtype: ``"float"`` (any floating dtype), ``"long"`` (int64), ``"bool"``, or None.

    Returns:
        ``known`` extended with the sizes this tensor bound.

    Raises:
        InputError: naming what was expected and what came.
    """
    sizes = dict(known or {})
    if not isinstance(tensor, torch.Tensor):
        raise InputError(f"{name} must be a torch.Tensor {_describe(dims, sizes)}, got {type(tensor).__name__}")
    got = tuple(tensor.shape)
    ok = len(got) == len(dims)
    if ok:
        for dim, size in zip(dims, got, strict=True):
            if isinstance(dim, int):
                ok = ok and size == dim
            elif dim in sizes:
                ok = ok and size == sizes[dim]
            else:
                sizes[dim] = size
    if not ok:
        raise InputError(f"{name} must be {_describe(dims, known or {})}, got {got}")
    if dtype == "float" and not tensor.is_floating_point():
        raise InputError(f"{name} must be a floating-point tensor, got {tensor.dtype}")
    if dtype == "long" and tensor.dtype != torch.long:
        raise InputError(f"{name} must hold token indices as torch.long, got {tensor.dtype}")
    if dtype == "bool" and tensor.dtype != torch.bool:
        raise InputError(f"{name} must be a torch.bool mask (True = real token), got {tensor.dtype}")
    return sizes


def check_same_device(**tensors: torch.Tensor | None) -> torch.device:
    """Check that all given tensors live on one device and return it.

    Raises:
        InputError: listing each tensor's device when they differ.
    """
    present = {name: t for name, t in tensors.items() if t is not None}
    devices = {t.device for t in present.values()}
    if len(devices) > 1:
        where = ", ".join(f"{name} on {t.device}" for name, t in present.items())
        raise InputError(f"all inputs must be on one device, got {where}")
    return devices.pop()


def check_module_device(module: torch.nn.Module, device: torch.device, what: str) -> None:
    """Check that a module's parameters are on the device of its inputs."""
    param = next(module.parameters(), None)
    if param is not None and param.device != device:
        raise InputError(
            f"{what} are on {device} but {type(module).__name__}'s parameters are on {param.device}; "
            f"move one of them (module.to({str(device)!r}))"
        )


def check_module_dtype(module: torch.nn.Module, tensor: torch.Tensor, name: str) -> None:
    """Check that a floating-point input has the dtype of the module's parameters.

    Skipped under autocast, where mixed dtypes are the point.
    """
    param = next(module.parameters(), None)
    if param is None or torch.is_autocast_enabled(tensor.device.type):
        return
    if tensor.dtype != param.dtype:
        raise InputError(
            f"{name} is {tensor.dtype} but {type(module).__name__}'s parameters are {param.dtype}; "
            f"convert one of them (module.to({tensor.dtype}) or {name}.to({param.dtype}))"
        )


def check_indices(name: str, tensor: torch.Tensor, vocab_size: int) -> None:
    """Check that every token index is in ``[0, vocab_size)`` (one reduction, one read of two numbers)."""
    if not tensor.numel():
        return
    low, high = torch.stack(torch.aminmax(tensor)).tolist()
    if low < 0 or high >= vocab_size:
        raise InputError(
            f"{name} holds token indices in [{low}, {high}], "
            f"expected [0, {vocab_size - 1}] for a vocabulary of {vocab_size}"
        )


def check_tokens(module: torch.nn.Module, input: object, lengths: object, vocab_size: int) -> dict[str, int]:
    """Check a batch of token indices (B, S) for `module`'s embedding, and its lengths when given.

    Returns:
        the sizes ``{"B": ..., "S": ...}``.

    Raises:
        InputError: not a (B, S) long tensor, an empty batch, an index outside the vocabulary,
            bad lengths, or a module on another device.
    """
    sizes = check_tensor("input", input, ("B", "S"), dtype="long")
    if sizes["B"] == 0 or sizes["S"] == 0:
        raise InputError(f"input must hold at least one sentence of at least one token, got {tuple(input.shape)}")
    check_indices("input", input, vocab_size)
    check_module_device(module, check_same_device(input=input), "the inputs")
    if lengths is not None:
        check_lengths(lengths, sizes["B"], sizes["S"])
    return sizes


def check_count(name: str, value: object, high: int | None = None) -> None:
    """The one rule of a count (a number of words, steps, beams, sentences per batch): an int, not a bool, of at
    least 1, and at most `high` when one is given."""
    if not is_int(value) or value < 1:
        raise InputError(f"{name} must be an int of at least 1, got {echo(value)}")
    if high is not None and value > high:
        raise InputError(f"{name} must be at most {high}, got {value}")


def check_lengths(lengths: object, batch_size: int, max_length: int) -> None:
    """Check real sequence lengths: (B,) long, every one in [1, S].

    Raises:
        InputError: a wrong shape or dtype, or a length outside [1, S].
    """
    check_tensor("lengths", lengths, ("B",), {"B": batch_size}, dtype="long")
    if lengths.device.type == "meta":
        raise InputError("lengths must hold real values (on cpu or cuda), got a tensor on the meta device")
    if lengths.numel() and (int(lengths.min()) < 1 or int(lengths.max()) > max_length):
        raise InputError(f"lengths must lie in [1, S={max_length}], got {lengths.tolist()}")
