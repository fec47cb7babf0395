"""`forward_step` names a state that does not fit the decoder (issue 32, item 5).

A feeding decoder given a `DecoderState` without `feed`, or a fed vector of the wrong width, used to
end in a `TypeError` or a `RuntimeError` from `torch.cat`; every part of the state is now checked
where a user calls `forward_step`, with the part's name and the shape expected.
"""

from dataclasses import replace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from seq2seq_attention import DECODERS, DecoderState, InputError

H, V, B, S = 8, 11, 2, 5


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
