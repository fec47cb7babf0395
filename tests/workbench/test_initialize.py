"""`initialize` knows two initialisations and refuses any other name (a typo must not pass as PyTorch's default)."""

import re

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from seq2seq_attention.core.errors import InputError
from seq2seq_attention.translation.train import INITIALIZATIONS, initialize


def layer() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.GRU(3, 2, batch_first=True))


@settings(deadline=None)
@given(
    st.text(max_size=12).filter(lambda name: name not in INITIALIZATIONS) | st.sampled_from(["he", "Xavier", " xavier"])
)
def test_an_unknown_name_is_refused_and_nothing_changes(name):
    model = layer()
    before = [p.clone() for p in model.parameters()]
    with pytest.raises(InputError, match=re.escape(f"init must be one of pytorch, xavier, got {name!r}")):
        initialize(model, name)
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))


@pytest.mark.parametrize("bad", [None, 1, ["xavier"]])
def test_a_name_that_is_not_a_string_is_refused(bad):
    with pytest.raises(InputError, match="init must be one of pytorch, xavier"):
        initialize(layer(), bad)


def test_a_model_that_is_not_a_module_is_refused():
    with pytest.raises(InputError, match="initialize needs a torch.nn.Module, got dict"):
        initialize({}, "xavier")


def test_the_known_names_still_work():
    model = layer()
    before = [p.clone() for p in model.parameters()]
    initialize(model, "pytorch")
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
    initialize(model, "xavier")
    assert all(torch.all(p == 0) for n, p in model.named_parameters() if "bias" in n)
