"""The encoder and the decoders: input contracts, devices, and the state a step takes.

A wrong rank, size, dtype or device raises one `ValueError` that names the argument, what was expected and what
came, before any torch operation can fail with its own message; mixed devices are checked on the `meta` device
everywhere and with real CUDA tensors where CUDA is present, as is CPU/GPU parity of the outputs. `forward_step`
names a state that does not fit the decoder (issue 32, item 5): a feeding decoder given a `DecoderState` without
`feed`, or a fed vector of the wrong width, used to end in a `TypeError` or a `RuntimeError` from `torch.cat`.
"""

import copy
from collections.abc import Callable
from dataclasses import replace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from support import (
    mixed_device_tests,
    module_on,
    raises_exactly,
    random_tokens,
    refused,
    tiny_classifier,
    tiny_translator,
)

from seq2seq_attention import (
    DECODERS,
    AttnDecoderRNN,
    BahdanauAttention,
    DecoderRNN,
    DecoderState,
    EncoderRNN,
    InputError,
    LuongAttnDecoderRNN,
    greedy_decode,
)

pytestmark = pytest.mark.usefixtures("one_thread")
B, S, T, H, V = 2, 5, 3, 8, 11
requires_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA is not available on this machine")


def _mask(device: str = "cpu") -> torch.Tensor:
    return torch.tensor([[True] * S, [True, True, False, False, False]], device=device)  # (B, S)


def _decoder_inputs(device: str = "cpu") -> dict[str, torch.Tensor]:
    return {
        "encoder_outputs": torch.randn(B, S, H, device=device),
        "encoder_hidden": torch.randn(1, B, H, device=device),
        "target_tensor": random_tokens(B, T, device=device),
        "source_mask": _mask(device),
    }


def _encoder() -> EncoderRNN:
    return EncoderRNN(V, H)


DECODER_CLASSES: dict[str, Callable[[], torch.nn.Module]] = {
    "AttnDecoderRNN": lambda: AttnDecoderRNN(H, V),
    "LuongAttnDecoderRNN": lambda: LuongAttnDecoderRNN(H, V),
    "DecoderRNN": lambda: DecoderRNN(H, V),
}

# (id, call, a regular expression the whole message must match)
CASES: list[tuple[str, Callable[[], object], str]] = [
    ("encoder-not-a-tensor", lambda: _encoder()([[4, 5]]), r"input must be a torch\.Tensor \(B, S\), got list"),
    ("encoder-rank", lambda: _encoder()(random_tokens(B, S, 1)), r"input must be \(B, S\), got \(2, 5, 1\)"),
    (
        "encoder-dtype",
        lambda: _encoder()(torch.ones(B, S)),
        r"input must hold token indices as torch\.long, got torch\.float32",
    ),
    (
        "encoder-vocabulary",
        lambda: _encoder()(torch.full((B, S), V)),
        r"input holds token indices in \[11, 11\], expected \[0, 10\] for a vocabulary of 11",
    ),
    (
        "encoder-lengths-size",
        lambda: _encoder()(random_tokens(B, S), torch.tensor([5, 4, 3])),
        r"lengths must be \(B\) with B=2, got \(3,\)",
    ),
    (
        "encoder-lengths-range",
        lambda: _encoder()(random_tokens(B, S), torch.tensor([6, 0])),
        r"lengths must lie in \[1, S=5\], got \[6, 0\]",
    ),
    (
        "encoder-lengths-dtype",
        lambda: _encoder()(random_tokens(B, S), torch.tensor([4.5, 2.0])),
        r"lengths must hold token indices as torch\.long, got torch\.float32",
    ),
]

for _name, _make in DECODER_CLASSES.items():

    def _call(make=_make, **change):
        return make()(**{**_decoder_inputs(), **change})

    CASES += [
        (
            f"{_name}-outputs-size",
            lambda c=_call: c(encoder_outputs=torch.randn(B, S, H + 1)),
            r"encoder_outputs must be \(B, S, H\) with H=8, got \(2, 5, 9\)",
        ),
        (
            f"{_name}-hidden-rank",
            lambda c=_call: c(encoder_hidden=torch.randn(B, H)),
            r"encoder_hidden must be \(1, B, H\) with B=2, H=8, got \(2, 8\)",
        ),
        (
            f"{_name}-hidden-batch",
            lambda c=_call: c(encoder_hidden=torch.randn(1, B + 1, H)),
            r"encoder_hidden must be \(1, B, H\) with B=2, H=8, got \(1, 3, 8\)",
        ),
        (
            f"{_name}-outputs-dtype",
            lambda c=_call: c(encoder_outputs=torch.ones(B, S, H, dtype=torch.long)),
            r"encoder_outputs must be a floating-point tensor, got torch\.int64",
        ),
        (
            f"{_name}-target-dtype",
            lambda c=_call: c(target_tensor=torch.ones(B, T)),
            r"target_tensor must hold token indices as torch\.long, got torch\.float32",
        ),
        (
            f"{_name}-target-empty",
            lambda c=_call: c(target_tensor=torch.ones(B, 0, dtype=torch.long)),
            r"target_tensor must have at least one step, got T=0",
        ),
        (
            f"{_name}-target-vocabulary",
            lambda c=_call: c(target_tensor=torch.full((B, T), -1)),
            r"target_tensor holds token indices in \[-1, -1\], expected \[0, 10\] for a vocabulary of 11",
        ),
        (
            f"{_name}-mask-size",
            lambda c=_call: c(source_mask=torch.ones(B, S + 1, dtype=torch.bool)),
            r"source_mask must be \(B, S\) with B=2, S=5, got \(2, 6\)",
        ),
        (
            f"{_name}-target-missing",
            lambda c=_call: c(target_tensor=None),
            r"target_tensor is required: a decoder's forward is the training loop; decode without a target .*",
        ),
        (
            f"{_name}-teacher-forcing",
            lambda c=_call: c(teacher_forcing_ratio=1.5),
            r"teacher_forcing_ratio must lie in \[0, 1\], got 1\.5",
        ),
    ]


@pytest.mark.parametrize(("call", "message"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_bad_input_raises_one_clear_value_error(call: Callable[[], object], message: str):
    raises_exactly(call, message)


# Mixed devices: each call puts exactly one thing (an input, or the module) on `other`.
def _device_cases(other: str) -> list[tuple[str, Callable[[], object], str]]:
    cases = [
        (
            "encoder-module",
            lambda: module_on(_encoder, other)(random_tokens(B, S)),
            rf"the inputs are on cpu but EncoderRNN's parameters are on {other}\S*; .*",
        ),
    ]
    for name, make in DECODER_CLASSES.items():
        cases += [
            (
                f"{name}-hidden",
                lambda make=make: make()(
                    **{**_decoder_inputs(), "target_tensor": None, "encoder_hidden": torch.randn(1, B, H, device=other)}
                ),
                rf"all inputs must be on one device, got encoder_outputs on cpu, encoder_hidden on {other}\S*, .*",
            ),
            (
                f"{name}-mask",
                lambda make=make: make()(**{**_decoder_inputs(), "target_tensor": None, "source_mask": _mask(other)}),
                rf"all inputs must be on one device, got .*source_mask on {other}\S*",
            ),
            (
                f"{name}-module",
                lambda make=make: module_on(make, other)(**{**_decoder_inputs(), "target_tensor": None}),
                rf"the encoder outputs are on cpu but {name}'s parameters are on {other}\S*; .*",
            ),
        ]
    if other == "cuda":  # a meta tensor's values cannot be read, so these mixes are CUDA-only
        cases += [
            (
                "encoder-input",
                lambda: _encoder()(random_tokens(B, S, device=other)),
                rf"the inputs are on {other}\S* but EncoderRNN's parameters are on cpu; .*",
            ),
            *[
                (
                    f"{name}-target",
                    lambda make=make: make()(
                        **{**_decoder_inputs(), "target_tensor": random_tokens(B, T, device=other)}
                    ),
                    rf"all inputs must be on one device, got .*target_tensor on {other}\S*.*",
                )
                for name, make in DECODER_CLASSES.items()
            ],
        ]
    return cases


test_mixed_devices_are_caught_before_torch, test_mixing_cpu_and_cuda_is_caught_before_torch = mixed_device_tests(
    _device_cases
)


@pytest.fixture
def full_fp32():
    """Full float32 on CUDA: TF32 (on by default for cuDNN RNNs) rounds to 10 mantissa bits."""
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def _translate(encoder: EncoderRNN, decoder: torch.nn.Module, device: str) -> list[torch.Tensor]:
    torch.manual_seed(1)
    tokens = random_tokens(B, S).masked_fill(~_mask(), 0)  # (B, S), row 1 padded after 2 tokens
    lengths = torch.tensor([S, 2])  # (B,)
    target = random_tokens(B, T)  # (B, T)
    encoder, decoder = copy.deepcopy(encoder).to(device), copy.deepcopy(decoder).to(device)
    outputs, hidden = encoder(tokens.to(device), lengths)  # (B, S, H), (1, B, H)
    log_probs, last, attentions = decoder(outputs, hidden, target.to(device), _mask(device))
    return [t.cpu() for t in (outputs, hidden, log_probs, last) + (() if attentions is None else (attentions,))]


@requires_cuda
@pytest.mark.parametrize("kind", DECODER_CLASSES)
def test_cpu_and_cuda_give_the_same_outputs(kind: str, full_fp32):
    torch.manual_seed(0)
    encoder, decoder = _encoder().eval(), DECODER_CLASSES[kind]().eval()
    on_cpu = _translate(encoder, decoder, "cpu")
    on_cuda = _translate(encoder, decoder, "cuda")
    names = ("outputs", "hidden", "log_probs", "decoder_hidden", "attentions")[: len(on_cpu)]
    for name, a, b in zip(names, on_cpu, on_cuda, strict=True):
        assert (a - b).abs().max().item() <= 1e-5, f"{name}: CPU and CUDA differ by {(a - b).abs().max().item():.2e}"


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=requires_cuda)])
@pytest.mark.parametrize("kind", DECODER_CLASSES)
def test_a_strided_encoder_hidden_is_taken_as_its_values(kind: str, device: str):
    """A view such as `outputs[:, -1].unsqueeze(0)` is a fine hidden state (cuDNN's GRU alone refuses strides)."""
    torch.manual_seed(0)
    decoder = DECODER_CLASSES[kind]().eval().to(device)
    outputs = torch.randn(B, S, H).to(device)  # (B, S, H)
    strided = outputs[:, -1].unsqueeze(0)  # (1, B, H), not contiguous
    assert not strided.is_contiguous()
    target = random_tokens(B, T).to(device)  # (B, T)
    log_probs, _, _ = decoder(outputs, strided, target)
    expected, _, _ = decoder(outputs, strided.contiguous(), target)
    assert torch.equal(log_probs, expected)
    assert decoder.init_state(outputs, strided).hidden.is_contiguous()


@pytest.mark.parametrize("kind", ["attention", "bahdanau", "luong", "gru"])
def test_a_float64_input_to_a_float32_module_is_one_clear_value_error(kind: str):
    keys = torch.randn(B, S, H, dtype=torch.float64)
    if kind == "attention":
        call = lambda: BahdanauAttention(H)(torch.randn(B, 1, H, dtype=torch.float64), keys)  # noqa: E731
        name = "query"
    else:
        decoder = {"bahdanau": AttnDecoderRNN, "luong": LuongAttnDecoderRNN, "gru": DecoderRNN}[kind](H, V)
        call = lambda: decoder(keys, torch.randn(1, B, H, dtype=torch.float64), random_tokens(B, T))  # noqa: E731
        name = "encoder_outputs"
    with pytest.raises(ValueError, match=rf"^{name} is torch.float64 but \w+'s parameters are torch.float32"):
        call()


def test_empty_batches_and_sequences_are_refused():
    refused(lambda: EncoderRNN(10, 8)(torch.zeros(0, 3, dtype=torch.long), torch.zeros(0, dtype=torch.long)), "input")
    refused(lambda: EncoderRNN(10, 8)(torch.zeros(2, 0, dtype=torch.long)), "input", "(2, 0)")
    empty = torch.zeros(0, 3, dtype=torch.long)
    refused(lambda: greedy_decode(tiny_translator(), empty, torch.zeros(0, dtype=torch.long)), "source", "B=0")
    classifier = tiny_classifier("attention", 10)
    refused(lambda: classifier(empty, torch.zeros(0, dtype=torch.long)), "input")


def test_lengths_on_the_meta_device_are_refused():
    lengths = torch.tensor([3, 2], device="meta")
    refused(lambda: EncoderRNN(10, 8)(torch.ones(2, 3, dtype=torch.long), lengths), "lengths", "meta")


# forward_step and the state it takes -------------------------------------------------------------------


def decoder_and_state(name: str, input_feeding: bool):
    torch.manual_seed(0)
    options = {"input_feeding": True} if input_feeding else {}  # only a feeding decoder takes the switch
    decoder = DECODERS[name].decoder(H, V, **options).eval()
    state = decoder.init_state(torch.randn(B, S, H), torch.randn(1, B, H))
    return decoder, state


KINDS = [(name, False) for name in DECODERS] + [(name, True) for name, kind in DECODERS.items() if kind.feeds_input]


TOKENS = torch.full((B, 1), 4)


@pytest.mark.parametrize(("name", "feeding"), KINDS)
def test_a_good_state_steps(name, feeding):
    decoder, state = decoder_and_state(name, feeding)
    logits, state, _ = decoder.forward_step(TOKENS, state)
    assert logits.shape == (B, 1, V)
    decoder.forward_step(TOKENS, state)  # the state a step returns is a good state


@pytest.mark.parametrize("name", [name for name, kind in DECODERS.items() if kind.feeds_input])
def test_a_feeding_decoder_names_a_missing_feed(name):
    decoder, state = decoder_and_state(name, True)
    with pytest.raises(InputError, match=r"state.feed must be \(2, 1, 8\): the previous attentional vector"):
        decoder.forward_step(TOKENS, replace(state, feed=None))


@settings(max_examples=40, deadline=None)
@given(
    kind=st.sampled_from(KINDS),
    part=st.sampled_from(["hidden", "keys", "proj_keys", "feed", "mask"]),
    wrong=st.integers(1, 12),
    axis=st.integers(0, 2),
)
def test_a_part_of_the_wrong_shape_is_named_with_its_expected_shape(kind, part, wrong, axis):
    decoder, state = decoder_and_state(*kind)
    value = getattr(state, part)
    if value is None:
        value = torch.ones(B, S, dtype=torch.bool) if part == "mask" else torch.zeros(B, 1, H)
    shape = list(value.shape)
    axis = min(axis, len(shape) - 1)
    batch_axis = 1 if part == "hidden" else 0
    if part == "keys" and axis == 1:
        axis = 2  # S is the keys' own: any S is a state; its H and B are the decoder's and the batch's
    if shape[axis] == wrong:
        wrong += 1
    shape[axis] = wrong
    bad = torch.ones(shape, dtype=torch.bool) if part == "mask" else torch.randn(shape)
    broken = replace(state, **{part: bad})
    needed = {"hidden": True, "keys": True, "mask": True}
    needed["proj_keys"] = decoder.attention is not None
    needed["feed"] = decoder.input_feeding
    if not needed[part]:
        decoder.forward_step(TOKENS, broken)  # a part this decoder never reads is not its business
        return
    named = r"state\.\w+" if axis == batch_axis else rf"state\.{part}"  # a batch mismatch: one of the two
    with pytest.raises(InputError, match=rf"{named} must be \("):
        decoder.forward_step(TOKENS, broken)


@pytest.mark.parametrize(("name", "feeding"), KINDS)
def test_tokens_and_the_state_type_are_named(name, feeding):
    decoder, state = decoder_and_state(name, feeding)
    with pytest.raises(InputError, match="state must be a DecoderState"):
        decoder.forward_step(TOKENS, (state.hidden, state.keys))
    with pytest.raises(InputError, match=r"input must be \(B, 1\) with B=2"):
        decoder.forward_step(torch.full((B + 1, 1), 4), state)
    with pytest.raises(InputError, match=r"input holds token indices in \[4, 11\]"):
        decoder.forward_step(torch.tensor([[4], [V]]), state)
    assert isinstance(state, DecoderState)
