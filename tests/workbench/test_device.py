"""Picking a device: the environment variable, `--device`, and clear errors for bad names."""

import pytest
import torch
from support import refused

from seq2seq_attention.core.device import DEVICE_ENV, parse_device, pick_device
from seq2seq_attention.core.errors import InputError


def test_the_environment_variable_steers_pick_device(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(DEVICE_ENV, "cpu")
    assert pick_device() == torch.device("cpu")
    assert parse_device(None) == torch.device("cpu"), "no --device falls back to pick_device()"
    monkeypatch.delenv(DEVICE_ENV)
    assert pick_device().type == ("cuda" if torch.cuda.is_available() else "cpu")


@pytest.mark.parametrize("where", ["--device", DEVICE_ENV])
def test_a_bad_name_is_a_user_error_that_says_where_it_came_from(where: str):
    with pytest.raises(InputError, match=rf"^{where} 'gpu0' is not a device name"):
        parse_device("gpu0", where=where)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_cuda_without_cuda_is_a_user_error(monkeypatch: pytest.MonkeyPatch):
    with pytest.raises(InputError, match="asks for CUDA"):
        parse_device("cuda")
    monkeypatch.setenv(DEVICE_ENV, "cuda")
    with pytest.raises(InputError, match=rf"^{DEVICE_ENV} 'cuda' asks for CUDA"):
        pick_device()


@pytest.mark.parametrize("name", ["mps", "meta", "xla", "cuda:99", "gpu0", "cpu:x"])
def test_devices_this_package_cannot_use_are_named(name):
    message = refused(lambda: parse_device(name), "--device", name)
    assert "Traceback" not in message
