"""Search: greedy and beam search refuse a bad source (their annotations), the translator a bad length, size or
length penalty, each with one clear message; and how they decode: greedy is the decoder's own loop, a beam of one
is greedy, a beam's score is the model's length-normalised log-probability, and a beam finds the better sentence
where greedy is misled.

The command line's side of the same options is checked in `test_cli.py`.
"""

import math
from collections.abc import Callable

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from support import clear_error, random_batch, random_tokens, refused, tiny_translator, tiny_vocabs

from seq2seq_attention import translate
from seq2seq_attention.core.errors import InputError
from seq2seq_attention.model.search import beam_search_decode, greedy_decode
from seq2seq_attention.model.seq2seq import build_model
from seq2seq_attention.model.tokens import EOS_IDX, PAD_IDX

pytestmark = pytest.mark.usefixtures("one_thread")
B, S, H, V = 2, 5, 8, 11
VOCABS = tiny_vocabs()


def _greedy(source, lengths):
    return greedy_decode(tiny_translator("bahdanau", (V, V)), source, lengths)


LENGTHS = torch.tensor([S, 2])
GREEDY_CASES: list[tuple[str, Callable[[], object], str]] = [
    ("greedy_decode-source-rank", lambda: _greedy(random_tokens(S), LENGTHS), "source"),
    ("greedy_decode-source-dtype", lambda: _greedy(torch.ones(B, S), LENGTHS), "source"),
    ("greedy_decode-lengths-size", lambda: _greedy(random_tokens(B, S), torch.tensor([S, 2, 1])), "lengths"),
]


@pytest.mark.parametrize(("call", "names"), [c[1:] for c in GREEDY_CASES], ids=[c[0] for c in GREEDY_CASES])
def test_greedy_decode_raises_one_clear_value_error(call: Callable[[], object], names: str):
    clear_error(call, names)


@pytest.mark.parametrize("penalty", [math.nan, math.inf, -math.inf, 1e300, "1", True])
def test_length_penalty_must_be_a_finite_number(penalty):
    refused(
        lambda: translate(tiny_translator(), VOCABS, ["je suis la ."], beam_size=2, length_penalty=penalty),
        "length_penalty",
    )
    refused(lambda: translate(tiny_translator(), VOCABS, ["je suis la ."], length_penalty=penalty), "length_penalty")


@pytest.mark.parametrize(
    ("name", "value"), [("max_length", 10**12), ("max_length", 2.0), ("beam_size", 2.0), ("beam_size", 0)]
)
def test_search_sizes_are_ints_in_range(name, value):
    """The translator checks the search's numbers where a user hands them over; the search loops trust them, except
    for their types, which their annotations state."""
    options = {"max_length": 5, "beam_size": 2, name: value}
    refused(lambda: translate(tiny_translator(), VOCABS, ["je suis la ."], **options), name)
    if isinstance(value, float):
        source, lengths = torch.tensor([[4, 2]]), torch.tensor([2])
        refused(lambda: beam_search_decode(tiny_translator(), source, lengths, **options), name, "int", "got 2.0")


# How the search decodes: beam against greedy, the beam's scores, a beam that beats greedy -------------


def test_greedy_decode_matches_the_decoders_own_loop():
    torch.manual_seed(0)
    model = build_model("bahdanau", 11, 13, hidden_size=8).eval()
    source, lengths = torch.tensor([[4, 5, 6, 2, 0], [7, 8, 9, 10, 2]]), torch.tensor([4, 5])
    tokens, attentions = greedy_decode(model, source, lengths, max_length=6)
    with torch.no_grad():
        log_probs, _ = model(source, lengths, max_length=6)
    reference = log_probs.argmax(-1)  # (B, 6)
    for row, ref in zip(tokens.tolist(), reference.tolist(), strict=True):
        cut = ref.index(EOS_IDX) + 1 if EOS_IDX in ref else len(ref)
        assert row[:cut] == ref[:cut] and all(t == PAD_IDX for t in row[cut:])
    assert attentions.shape == (2, tokens.size(1), 5)


def tiny_model(seed: int):
    model = tiny_translator("bahdanau", (11, 13), seed=seed)
    with torch.no_grad():
        model.decoder.out.weight.mul_(4)  # peakier distributions: <eos> wins at different steps
    return model


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 1000), B=st.integers(1, 4), S=st.integers(1, 6))
def test_beam_of_one_is_greedy(seed: int, B: int, S: int):
    model = tiny_model(seed)
    batch = random_batch(seed, B, S, 1)
    greedy, _ = greedy_decode(model, batch.source, batch.lengths, max_length=7)
    beam, _ = beam_search_decode(model, batch.source, batch.lengths, beam_size=1, max_length=7)
    assert torch.equal(beam, greedy)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 1000), k=st.integers(2, 5), alpha=st.sampled_from([0.0, 0.6, 1.0]))
def test_beam_scores_are_the_models_normalised_log_probabilities(seed: int, k: int, alpha: float):
    model = tiny_model(seed)
    batch = random_batch(seed, 3, 5, 1)
    tokens, scores = beam_search_decode(
        model, batch.source, batch.lengths, beam_size=k, max_length=6, length_penalty=alpha
    )
    assert tokens.shape[0] == 3 and scores.shape == (3,)
    for row in range(3):
        words = tokens[row].tolist()
        length = words.index(EOS_IDX) + 1 if EOS_IDX in words else len(words)  # unfinished: all steps
        hypothesis = tokens[row : row + 1, :length]  # (1, L)
        with torch.no_grad():
            log_probs, _ = model(batch.source[row : row + 1], batch.lengths[row : row + 1], hypothesis.clone())
        total = log_probs[0].gather(1, hypothesis[0].unsqueeze(1)).sum()
        assert float(scores[row]) == pytest.approx(float(total) / length**alpha, abs=1e-4)


def test_beam_finds_a_better_sentence_than_greedy_when_greedy_is_misled():
    """A hand-made decoder: greedy takes the word with p=0.6 and then faces two words of p=0.5."""
    from torch import nn

    from seq2seq_attention.model.decoders import StepDecoder

    class Scripted(StepDecoder):
        def __init__(self):
            super().__init__(2, 6)
            self.dummy = nn.Parameter(torch.zeros(1))

        def forward_step(self, input, state):
            probs = {1: [0, 0, 0, 0, 0.6, 0.4], 4: [0, 0, 0.5, 0, 0, 0.5], 5: [0, 0, 1.0, 0, 0, 0]}
            table = torch.tensor([probs.get(int(i), [0, 0, 1.0, 0, 0, 0]) for i in input[:, 0]])  # (B, V)
            return table.clamp_min(1e-9).log().unsqueeze(1), state, None

    model = build_model("gru", 5, 6, hidden_size=2).eval()
    model.decoder = Scripted()
    source, lengths = torch.tensor([[4, EOS_IDX]]), torch.tensor([2])
    greedy, _ = greedy_decode(model, source, lengths)
    beam, score = beam_search_decode(model, source, lengths, beam_size=2, length_penalty=0.0)
    assert greedy.tolist() == [[4, EOS_IDX]]  # 0.6 * 0.5 = 0.3
    assert beam.tolist() == [[5, EOS_IDX]] and float(score) == pytest.approx(math.log(0.4))  # 0.4 * 1.0


def test_translate_with_beam_search_and_bad_beam_size():
    from seq2seq_attention.translation.corpus import Pair, build_vocabularies

    vocabs = build_vocabularies([Pair("je suis la .", "i am here .")])
    torch.manual_seed(0)
    model = build_model("bahdanau", len(vocabs.source), len(vocabs.target), hidden_size=8)
    greedy = translate(model, vocabs, ["je suis la .", "je suis ."])
    assert translate(model, vocabs, ["je suis la .", "je suis ."], beam_size=1) == greedy
    assert len(translate(model, vocabs, ["je suis la ."], beam_size=3)) == 1
    with pytest.raises(InputError, match="beam_size"):
        translate(model, vocabs, ["je suis la ."], beam_size=0)
