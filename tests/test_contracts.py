"""Input contracts of the public modules and functions that take tensors.

A wrong rank, size, dtype or device raises one `ValueError` that names the argument, what
was expected and what came, before any torch operation can fail with its own message.
Mixing devices is checked on the `meta` device everywhere (no CUDA needed: a check that
comes too late lets torch raise a `RuntimeError`/`NotImplementedError` instead) and with
real CUDA tensors where CUDA is present, as is CPU/GPU parity of the outputs.
"""

import copy
import re
from collections.abc import Callable

import pytest
import torch

from seq2seq_attention import (
    AttnDecoderRNN,
    BahdanauAttention,
    DecoderRNN,
    EncoderRNN,
    LuongAttnDecoderRNN,
    masked_softmax,
)

pytestmark = pytest.mark.usefixtures("one_thread")
B, S, T, H, V = 2, 5, 3, 8, 11
requires_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA is not available on this machine")


def _tokens(*shape: int, device: str = "cpu") -> torch.Tensor:
    return torch.randint(4, V, shape, device=device)


def _mask(device: str = "cpu") -> torch.Tensor:
    return torch.tensor([[True] * S, [True, True, False, False, False]], device=device)  # (B, S)


def _decoder_inputs(device: str = "cpu") -> dict[str, torch.Tensor]:
    return {
        "encoder_outputs": torch.randn(B, S, H, device=device),
        "encoder_hidden": torch.randn(1, B, H, device=device),
        "target_tensor": _tokens(B, T, device=device),
        "source_mask": _mask(device),
    }


def _encoder() -> EncoderRNN:
    return EncoderRNN(V, H)


def _attention() -> BahdanauAttention:
    return BahdanauAttention(H)


DECODERS: dict[str, Callable[[], torch.nn.Module]] = {
    "AttnDecoderRNN": lambda: AttnDecoderRNN(H, V),
    "LuongAttnDecoderRNN": lambda: LuongAttnDecoderRNN(H, V),
    "DecoderRNN": lambda: DecoderRNN(H, V),
}

# (id, call, a regular expression the whole message must match)
CASES: list[tuple[str, Callable[[], object], str]] = [
    ("encoder-not-a-tensor", lambda: _encoder()([[4, 5]]), r"input must be a torch\.Tensor \(B, S\), got list"),
    ("encoder-rank", lambda: _encoder()(_tokens(B, S, 1)), r"input must be \(B, S\), got \(2, 5, 1\)"),
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
        lambda: _encoder()(_tokens(B, S), torch.tensor([5, 4, 3])),
        r"lengths must be \(B\) with B=2, got \(3,\)",
    ),
    (
        "encoder-lengths-range",
        lambda: _encoder()(_tokens(B, S), torch.tensor([6, 0])),
        r"lengths must lie in \[1, S=5\], got \[6, 0\]",
    ),
    (
        "encoder-lengths-dtype",
        lambda: _encoder()(_tokens(B, S), torch.tensor([4.5, 2.0])),
        r"lengths must hold token indices as torch\.long, got torch\.float32",
    ),
    (
        "attention-query-rank",
        lambda: _attention()(torch.randn(B, H), torch.randn(B, S, H)),
        r"query must be \(B, T, Hq\) with Hq=8, got \(2, 8\)",
    ),
    (
        "attention-query-size",
        lambda: _attention()(torch.randn(B, 1, H + 1), torch.randn(B, S, H)),
        r"query must be \(B, T, Hq\) with Hq=8, got \(2, 1, 9\)",
    ),
    (
        "attention-keys-batch",
        lambda: _attention()(torch.randn(B, 1, H), torch.randn(B + 1, S, H)),
        r"keys must be \(B, S, Hk\) with B=2, Hk=8, got \(3, 5, 8\)",
    ),
    (
        "attention-query-dtype",
        lambda: _attention()(torch.ones(B, 1, H, dtype=torch.long), torch.randn(B, S, H)),
        r"query must be a floating-point tensor, got torch\.int64",
    ),
    (
        "attention-mask-dtype",
        lambda: _attention()(torch.randn(B, 1, H), torch.randn(B, S, H), _mask().long()),
        r"mask must be a torch\.bool mask \(True = real token\), got torch\.int64",
    ),
    (
        "attention-mask-size",
        lambda: _attention()(torch.randn(B, 1, H), torch.randn(B, S, H), torch.ones(B, S + 1, dtype=torch.bool)),
        r"mask must be \(B, S\) with B=2, S=5, got \(2, 6\)",
    ),
    (
        "attention-proj-keys-size",
        lambda: _attention()(torch.randn(B, 1, H), torch.randn(B, S, H), None, torch.randn(B, S, H + 1)),
        r"proj_keys must be \(B, S, H\) with B=2, S=5, H=8, got \(2, 5, 9\)",
    ),
    (
        "masked-softmax-rank",
        lambda: masked_softmax(torch.randn(B, S), _mask()),
        r"scores must be \(B, T, S\), got \(2, 5\)",
    ),
    (
        "masked-softmax-mask-size",
        lambda: masked_softmax(torch.randn(B, 1, S), torch.ones(B, S - 1, dtype=torch.bool)),
        r"mask must be \(B, S\) with B=2, S=5, got \(2, 4\)",
    ),
    (
        "masked-softmax-mask-dtype",
        lambda: masked_softmax(torch.randn(B, 1, S), _mask().float()),
        r"mask must be a torch\.bool mask \(True = real token\), got torch\.float32",
    ),
    (
        "masked-softmax-scores-dtype",
        lambda: masked_softmax(torch.ones(B, 1, S, dtype=torch.long), _mask()),
        r"scores must be a floating-point tensor, got torch\.int64",
    ),
]

for _name, _make in DECODERS.items():

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
    with pytest.raises(ValueError) as caught:
        call()
    assert re.fullmatch(message, str(caught.value)), f"message {str(caught.value)!r} does not match {message!r}"


# Mixed devices: each call puts exactly one thing (an input, or the module) on `other`.
def _device_cases(other: str) -> list[tuple[str, Callable[[], object], str]]:
    def module_on(make: Callable[[], torch.nn.Module], device: str) -> torch.nn.Module:
        return make().to(device)

    cases = [
        (
            "attention-keys",
            lambda: _attention()(torch.randn(B, 1, H), torch.randn(B, S, H, device=other)),
            rf"all inputs must be on one device, got query on cpu, keys on {other}\S*",
        ),
        (
            "attention-mask",
            lambda: _attention()(torch.randn(B, 1, H), torch.randn(B, S, H), _mask(other)),
            rf"all inputs must be on one device, got query on cpu, keys on cpu, mask on {other}\S*",
        ),
        (
            "attention-module",
            lambda: module_on(_attention, other)(torch.randn(B, 1, H), torch.randn(B, S, H)),
            rf"query and keys are on cpu but BahdanauAttention's parameters are on {other}\S*; .*",
        ),
        (
            "masked-softmax-mask",
            lambda: masked_softmax(torch.randn(B, 1, S), _mask(other)),
            rf"all inputs must be on one device, got scores on cpu, mask on {other}\S*",
        ),
        (
            "encoder-module",
            lambda: module_on(_encoder, other)(_tokens(B, S)),
            rf"the inputs are on cpu but EncoderRNN's parameters are on {other}\S*; .*",
        ),
    ]
    for name, make in DECODERS.items():
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
                lambda: _encoder()(_tokens(B, S, device=other)),
                rf"the inputs are on {other}\S* but EncoderRNN's parameters are on cpu; .*",
            ),
            *[
                (
                    f"{name}-target",
                    lambda make=make: make()(**{**_decoder_inputs(), "target_tensor": _tokens(B, T, device=other)}),
                    rf"all inputs must be on one device, got .*target_tensor on {other}\S*.*",
                )
                for name, make in DECODERS.items()
            ],
        ]
    return cases


META_CASES = _device_cases("meta")


@pytest.mark.parametrize(("call", "message"), [c[1:] for c in META_CASES], ids=[c[0] for c in META_CASES])
def test_mixed_devices_are_caught_before_torch(call: Callable[[], object], message: str):
    with pytest.raises(ValueError) as caught:
        call()
    assert re.fullmatch(message, str(caught.value)), f"message {str(caught.value)!r} does not match {message!r}"


CUDA_CASES = _device_cases("cuda")


@requires_cuda
@pytest.mark.parametrize(("call", "message"), [c[1:] for c in CUDA_CASES], ids=[c[0] for c in CUDA_CASES])
def test_mixing_cpu_and_cuda_is_caught_before_torch(call: Callable[[], object], message: str):
    with pytest.raises(ValueError) as caught:
        call()
    assert re.fullmatch(message, str(caught.value)), f"message {str(caught.value)!r} does not match {message!r}"


@pytest.fixture
def full_fp32():
    """Full float32 on CUDA: TF32 (on by default for cuDNN RNNs) rounds to 10 mantissa bits."""
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def _translate(encoder: EncoderRNN, decoder: torch.nn.Module, device: str) -> list[torch.Tensor]:
    torch.manual_seed(1)
    tokens = _tokens(B, S).masked_fill(~_mask(), 0)  # (B, S), row 1 padded after 2 tokens
    lengths = torch.tensor([S, 2])  # (B,)
    target = _tokens(B, T)  # (B, T)
    encoder, decoder = copy.deepcopy(encoder).to(device), copy.deepcopy(decoder).to(device)
    outputs, hidden = encoder(tokens.to(device), lengths)  # (B, S, H), (1, B, H)
    log_probs, last, attentions = decoder(outputs, hidden, target.to(device), _mask(device))
    return [t.cpu() for t in (outputs, hidden, log_probs, last) + (() if attentions is None else (attentions,))]


@requires_cuda
@pytest.mark.parametrize("kind", DECODERS)
def test_cpu_and_cuda_give_the_same_outputs(kind: str, full_fp32):
    torch.manual_seed(0)
    encoder, decoder = _encoder().eval(), DECODERS[kind]().eval()
    on_cpu = _translate(encoder, decoder, "cpu")
    on_cuda = _translate(encoder, decoder, "cuda")
    names = ("outputs", "hidden", "log_probs", "decoder_hidden", "attentions")[: len(on_cpu)]
    for name, a, b in zip(names, on_cpu, on_cuda, strict=True):
        assert (a - b).abs().max().item() <= 1e-5, f"{name}: CPU and CUDA differ by {(a - b).abs().max().item():.2e}"


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=requires_cuda)])
@pytest.mark.parametrize("kind", DECODERS)
def test_a_strided_encoder_hidden_is_taken_as_its_values(kind: str, device: str):
    """A view such as `outputs[:, -1].unsqueeze(0)` is a fine hidden state (cuDNN's GRU alone refuses strides)."""
    torch.manual_seed(0)
    decoder = DECODERS[kind]().eval().to(device)
    outputs = torch.randn(B, S, H).to(device)  # (B, S, H)
    strided = outputs[:, -1].unsqueeze(0)  # (1, B, H), not contiguous
    assert not strided.is_contiguous()
    target = _tokens(B, T).to(device)  # (B, T)
    log_probs, _, _ = decoder(outputs, strided, target)
    expected, _, _ = decoder(outputs, strided.contiguous(), target)
    assert torch.equal(log_probs, expected)
    assert decoder.init_state(outputs, strided).hidden.is_contiguous()


# The other public entry points that take tensors (translator, score functions, classifiers): each
# wrong input raises one ValueError that names the argument and says what came ("got ...", or
# where the parameters are for a module on the wrong device).
def _seq2seq():
    from seq2seq_attention.translation.model import build_model

    return build_model("bahdanau", V, V, hidden_size=H)


def _classifier(kind: str):
    from seq2seq_attention.sentiment.classifier import build_classifier

    return build_classifier(kind, V)


def _greedy(source, lengths, model=None):
    from seq2seq_attention.translation.search import greedy_decode

    return greedy_decode(model or _seq2seq().eval(), source, lengths)


def _scores():
    from seq2seq_attention import (
        BahdanauAttention,
        DotAttention,
        GeneralAttention,
        ScaledDotAttention,
        dot_score,
        scaled_dot_score,
    )

    return {
        "dot_score": dot_score,
        "scaled_dot_score": scaled_dot_score,
        "DotAttention": DotAttention(H),
        "ScaledDotAttention": ScaledDotAttention(H),
        "GeneralAttention": GeneralAttention(H),
        "BahdanauAttention": BahdanauAttention(H),
    }


LENGTHS = torch.tensor([S, 2])
OTHER_CASES: list[tuple[str, Callable[[], object], str]] = [
    ("Seq2Seq-source-rank", lambda: _seq2seq()(_tokens(B, S, 1), LENGTHS), "source"),
    ("Seq2Seq-source-dtype", lambda: _seq2seq()(torch.ones(B, S), LENGTHS), "source"),
    ("Seq2Seq-lengths-size", lambda: _seq2seq()(_tokens(B, S), torch.tensor([S])), "lengths"),
    ("Seq2Seq-lengths-dtype", lambda: _seq2seq()(_tokens(B, S), LENGTHS.float()), "lengths"),
    ("Seq2Seq-target-dtype", lambda: _seq2seq()(_tokens(B, S), LENGTHS, torch.ones(B, T)), "target_tensor"),
    ("Seq2Seq-target-batch", lambda: _seq2seq()(_tokens(B, S), LENGTHS, _tokens(B + 1, T)), "target_tensor"),
    ("Seq2Seq-module-device", lambda: _seq2seq().to("meta")(_tokens(B, S), LENGTHS), "parameters are on meta"),
    ("greedy_decode-source-rank", lambda: _greedy(_tokens(S), LENGTHS), "source"),
    ("greedy_decode-source-dtype", lambda: _greedy(torch.ones(B, S), LENGTHS), "source"),
    ("greedy_decode-lengths-size", lambda: _greedy(_tokens(B, S), torch.tensor([S, 2, 1])), "lengths"),
    *[
        (f"{kind}-input-rank", lambda kind=kind: _classifier(kind)(_tokens(B), LENGTHS), "input")
        for kind in ("attention", "mean")
    ],
    *[
        (f"{kind}-input-dtype", lambda kind=kind: _classifier(kind)(torch.ones(B, S), LENGTHS), "input")
        for kind in ("attention", "mean")
    ],
    *[
        (f"{kind}-lengths-size", lambda kind=kind: _classifier(kind)(_tokens(B, S), torch.tensor([S])), "lengths")
        for kind in ("attention", "mean")
    ],
    *[
        (f"{kind}-module-device", lambda kind=kind: _classifier(kind).to("meta")(_tokens(B, S), LENGTHS), "meta")
        for kind in ("attention", "mean")
    ],
]
for _name in (
    "dot_score",
    "scaled_dot_score",
    "DotAttention",
    "ScaledDotAttention",
    "GeneralAttention",
    "BahdanauAttention",
):
    OTHER_CASES += [
        (f"{_name}-query-rank", lambda n=_name: _scores()[n](torch.randn(B, H), torch.randn(B, S, H)), "query"),
        (
            f"{_name}-keys-size",
            lambda n=_name: _scores()[n](torch.randn(B, 1, H), torch.randn(B, S, H + 1)),
            "keys|query and keys|one size",
        ),
        (
            f"{_name}-keys-batch",
            lambda n=_name: _scores()[n](torch.randn(B, 1, H), torch.randn(B + 1, S, H)),
            "keys",
        ),
        (
            f"{_name}-query-dtype",
            lambda n=_name: _scores()[n](torch.ones(B, 1, H, dtype=torch.long), torch.randn(B, S, H)),
            "query",
        ),
        (
            f"{_name}-keys-device",
            lambda n=_name: _scores()[n](torch.randn(B, 1, H), torch.randn(B, S, H, device="meta")),
            "device",
        ),
    ]


@pytest.mark.parametrize(("call", "names"), [c[1:] for c in OTHER_CASES], ids=[c[0] for c in OTHER_CASES])
def test_other_entry_points_raise_one_clear_value_error(call: Callable[[], object], names: str):
    with pytest.raises(ValueError) as caught:
        call()
    message = str(caught.value)
    says_what_came = "got" in message or "parameters are on" in message
    assert re.search(names, message) and says_what_came, f"unclear message: {message!r}"


@pytest.mark.parametrize("kind", ["attention", "bahdanau", "luong", "gru"])
def test_a_float64_input_to_a_float32_module_is_one_clear_value_error(kind: str):
    keys = torch.randn(B, S, H, dtype=torch.float64)
    if kind == "attention":
        call = lambda: BahdanauAttention(H)(torch.randn(B, 1, H, dtype=torch.float64), keys)  # noqa: E731
        name = "query"
    else:
        decoder = {"bahdanau": AttnDecoderRNN, "luong": LuongAttnDecoderRNN, "gru": DecoderRNN}[kind](H, V)
        call = lambda: decoder(keys, torch.randn(1, B, H, dtype=torch.float64), _tokens(B, T))  # noqa: E731
        name = "encoder_outputs"
    with pytest.raises(ValueError, match=rf"^{name} is torch.float64 but \w+'s parameters are torch.float32"):
        call()


def test_autocast_inputs_pass_the_dtype_check():
    attention = BahdanauAttention(H)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        context, weights = attention(torch.randn(B, 1, H).bfloat16(), torch.randn(B, S, H).bfloat16())
    assert context.shape == (B, 1, H) and weights.shape == (B, 1, S)
