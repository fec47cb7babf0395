"""The encoder and the decoders: input contracts, devices, and the state a step takes.

A wrong rank, size or dtype, or a number outside its range, against the annotations of the signature raises one
`ArgumentError` (an `InputError`, so a `ValueError`) of one line naming the function, the argument, the annotation
with the sizes already bound and what came. What only the weights or the values know (a token outside the
vocabulary, a length longer than the batch, another device, float64 for float32 weights) is torch's own error: the
model trusts its tensors. CPU/GPU parity of the outputs is checked where CUDA is present. `forward_step` checks its
tokens and that its state is a `DecoderState`; the state's parts are `init_state`'s, trusted.
"""

import copy
from collections.abc import Callable

import pytest
import torch
from support import raises_exactly, random_tokens

from seq2seq_attention import (
    DECODERS,
    AttnDecoderRNN,
    DecoderRNN,
    DecoderState,
    EncoderRNN,
    InputError,
    LuongAttnDecoderRNN,
)
from seq2seq_attention.model.tensors import ArgumentError

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
    (
        "encoder-not-a-tensor",
        lambda: _encoder()([[4, 5]]),
        r"EncoderRNN\.forward: input must be Int64\[Tensor, 'B S'\], got \[\[4, 5\]\]",
    ),
    (
        "encoder-rank",
        lambda: _encoder()(random_tokens(B, S, 1)),
        r"EncoderRNN\.forward: input must be Int64\[Tensor, 'B S'\], got i64\[2,5,1\]",
    ),
    (
        "encoder-dtype",
        lambda: _encoder()(torch.ones(B, S)),
        r"EncoderRNN\.forward: input must be Int64\[Tensor, 'B S'\], got f32\[2,5\]",
    ),
    (
        "encoder-lengths-size",
        lambda: _encoder()(random_tokens(B, S), torch.tensor([5, 4, 3])),
        r"EncoderRNN\.forward: lengths must be Int64\[Tensor, 'B'\] \| None with B=2, S=5, got i64\[3\]",
    ),
    (
        "encoder-lengths-dtype",
        lambda: _encoder()(random_tokens(B, S), torch.tensor([4.5, 2.0])),
        r"EncoderRNN\.forward: lengths must be Int64\[Tensor, 'B'\] \| None with B=2, S=5, got f32\[2\]",
    ),
]

for _name, _make in DECODER_CLASSES.items():

    def _call(make=_make, **change):
        return make()(**{**_decoder_inputs(), **change})

    CASES += [
        (
            f"{_name}-hidden-size",
            lambda c=_call: c(encoder_outputs=torch.randn(B, S, H + 1)),
            r"StepDecoder\.forward: encoder_hidden must be Float\[Tensor, '1 B H'\] with B=2, S=5, H=9, "
            r"got f32\[1,2,8\]",
        ),
        (
            f"{_name}-hidden-rank",
            lambda c=_call: c(encoder_hidden=torch.randn(B, H)),
            r"StepDecoder\.forward: encoder_hidden must be Float\[Tensor, '1 B H'\] with B=2, S=5, H=8, got f32\[2,8\]",
        ),
        (
            f"{_name}-hidden-batch",
            lambda c=_call: c(encoder_hidden=torch.randn(1, B + 1, H)),
            r"StepDecoder\.forward: encoder_hidden must be .* with B=2, S=5, H=8, got f32\[1,3,8\]",
        ),
        (
            f"{_name}-outputs-dtype",
            lambda c=_call: c(encoder_outputs=torch.ones(B, S, H, dtype=torch.long)),
            r"StepDecoder\.forward: encoder_outputs must be Float\[Tensor, 'B S H'\], got i64\[2,5,8\]",
        ),
        (
            f"{_name}-target-dtype",
            lambda c=_call: c(target_tensor=torch.ones(B, T)),
            r"StepDecoder\.forward: target_tensor must be Int64\[Tensor, 'B T'\] with B=2, S=5, H=8, got f32\[2,3\]",
        ),
        (
            f"{_name}-mask-size",
            lambda c=_call: c(source_mask=torch.ones(B, S + 1, dtype=torch.bool)),
            r"StepDecoder\.forward: source_mask must be Bool\[Tensor, 'B S'\] \| None with .*, got bool\[2,6\]",
        ),
        (
            f"{_name}-target-missing",
            lambda c=_call: c(target_tensor=None),
            r"StepDecoder\.forward: target_tensor must be Int64\[Tensor, 'B T'\] with .*, got None",
        ),
        (
            f"{_name}-teacher-forcing",
            lambda c=_call: c(teacher_forcing_ratio=1.5),
            r"StepDecoder\.forward: teacher_forcing_ratio must be float \| int in \[0, 1\], got 1\.5",
        ),
    ]


@pytest.mark.parametrize(("call", "message"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_bad_input_raises_one_clear_argument_error(call: Callable[[], object], message: str):
    raises_exactly(call, message, ArgumentError)


# What only the weights or the values know: torch's own error, of one line.
TORCH_CASES: list[tuple[str, Callable[[], object], type[Exception], str]] = [
    ("encoder-vocabulary", lambda: _encoder()(torch.full((B, S), V)), IndexError, "index out of range"),
    (
        "encoder-lengths-range",
        lambda: _encoder()(random_tokens(B, S), torch.tensor([6, 0])),
        RuntimeError,
        "greater than 0|exceeds",
    ),
    *[
        (
            f"{name}-module-device",
            lambda make=make: make().to("meta")(**_decoder_inputs()),
            RuntimeError,
            "device",
        )
        for name, make in DECODER_CLASSES.items()
    ],
    *[
        (
            f"{name}-float64",
            lambda make=make: make()(torch.randn(B, S, H).double(), torch.randn(1, B, H).double(), random_tokens(B, T)),
            RuntimeError,
            "dtype|Double",
        )
        for name, make in DECODER_CLASSES.items()
    ],
]


@pytest.mark.parametrize(("call", "error", "words"), [c[1:] for c in TORCH_CASES], ids=[c[0] for c in TORCH_CASES])
def test_what_only_the_weights_or_values_know_is_torchs_own_error(call, error, words):
    with pytest.raises(error, match=words):
        call()


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


def test_an_empty_batch_is_an_empty_result():
    with pytest.raises(ValueError, match="EncoderRNN.forward: lengths"):
        EncoderRNN(10, 8)(torch.zeros(0, 3, dtype=torch.long), torch.zeros(2, dtype=torch.long))
    outputs, hidden = EncoderRNN(10, 8)(torch.zeros(0, 3, dtype=torch.long), torch.zeros(0, dtype=torch.long))
    assert outputs.shape == (0, 3, 8) and hidden.shape == (1, 0, 8)


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


@pytest.mark.parametrize(("name", "feeding"), KINDS)
def test_tokens_and_the_state_type_are_named(name, feeding):
    decoder, state = decoder_and_state(name, feeding)
    with pytest.raises(InputError, match="forward_step: state must be .*DecoderState.*, got"):
        decoder.forward_step(TOKENS, (state.hidden, state.keys))
    with pytest.raises(
        InputError, match=r"forward_step: input must be Int64\[Tensor, 'B 1'\] with B=3, got i64\[3,2\]"
    ):
        decoder.forward_step(torch.full((B + 1, 2), 4), state)
    assert isinstance(state, DecoderState)
