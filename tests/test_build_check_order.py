"""`build_model` checks each value's type before any rule that computes with it (issue 32, item 4).

`hidden_size="4"` with a bidirectional encoder used to reach the even-size rule first and end in a
`TypeError` from ``"4" % 2``; every value that is not an int must get the one clear `InputError`.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seq2seq_attention import DECODERS, EncoderRNN, InputError, build_model
from seq2seq_attention.translation.config import TrainConfig

NOT_A_SIZE = st.one_of(
    st.none(),
    st.text(max_size=4),
    st.floats(allow_nan=True),
    st.booleans(),
    st.lists(st.integers(), max_size=2),
    st.integers(max_value=0),
    st.integers(min_value=(1 << 20) + 1),
)


@settings(max_examples=60, deadline=None)
@given(
    decoder=st.sampled_from(sorted(DECODERS)),
    hidden_size=NOT_A_SIZE,
    bidirectional=st.booleans(),
    input_feeding=st.booleans(),
    tie_embeddings=st.booleans(),
)
def test_a_hidden_size_that_is_not_a_size_is_named_before_any_rule(
    decoder, hidden_size, bidirectional, input_feeding, tie_embeddings
):
    switches = dict(bidirectional=bidirectional, input_feeding=input_feeding, tie_embeddings=tie_embeddings)
    with pytest.raises(InputError, match="hidden_size must be an int in"):
        build_model(decoder, 5, 5, hidden_size=hidden_size, **switches)


@settings(max_examples=30, deadline=None)
@given(hidden_size=NOT_A_SIZE.filter(lambda v: not isinstance(v, int) or isinstance(v, bool) or v < 1))
def test_the_encoder_names_a_bad_size_before_the_even_rule(hidden_size):
    with pytest.raises(InputError, match="hidden_size must be an int of at least 1"):
        EncoderRNN(10, hidden_size, bidirectional=True)


@settings(max_examples=30, deadline=None)
@given(decoder=st.sampled_from(sorted(DECODERS)), odd=st.integers(0, 100).map(lambda n: 2 * n + 1))
def test_an_odd_size_gets_the_even_rule_everywhere(decoder, odd):
    with pytest.raises(InputError, match=f"H must be even, got {odd}"):
        build_model(decoder, 5, 5, hidden_size=odd, bidirectional=True)
    with pytest.raises(InputError, match=f"H must be even, got {odd}"):
        TrainConfig(decoder=decoder, hidden_size=odd, bidirectional=True)
    with pytest.raises(InputError, match=f"H must be even, got {odd}"):
        EncoderRNN(10, odd, bidirectional=True)


@pytest.mark.parametrize("decoder", sorted(name for name, kind in DECODERS.items() if not kind.feeds_input))
def test_input_feeding_gets_one_message_from_every_door(decoder):
    expected = r"input feeding needs a decoder that feeds its output back \(luong\)"
    for build in (
        lambda: build_model(decoder, 5, 5, hidden_size=8, input_feeding=True),
        lambda: TrainConfig(decoder=decoder, input_feeding=True),
    ):
        with pytest.raises(InputError, match=expected):
            build()
    with pytest.raises(TypeError, match="input_feeding"):  # its constructor takes only what it uses
        DECODERS[decoder].decoder(8, 5, input_feeding=True)
