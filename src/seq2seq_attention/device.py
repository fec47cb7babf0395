"""Choosing the device that new tensors are made on.

Modules never look at a global device: they take it from their inputs. Only code that
*creates* the first tensors (a page's spec fence, a script, the CLI) needs to pick one.
"""

import os

import torch

DEVICE_ENV = "SEQ2SEQ_ATTENTION_DEVICE"


def pick_device() -> torch.device:
    """Return the device to build new tensors on.

    CUDA when it is available, the CPU otherwise. The environment variable
    `SEQ2SEQ_ATTENTION_DEVICE` (`cpu` or `cuda`) overrides the choice; the test run uses it
    to execute every spec fence once per device.

    Raises:
        RuntimeError: the variable asks for CUDA on a machine without it, or names
            something that is not a device.
    """
    wanted = os.environ.get(DEVICE_ENV, "").strip()
    if not wanted:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(wanted)
    except RuntimeError as error:
        raise RuntimeError(f"{DEVICE_ENV}={wanted!r} is not a device name (cpu, cuda, cuda:1)") from error
    if device.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(f"{DEVICE_ENV}={wanted!r} asks for CUDA, but torch.cuda.is_available() is False")
    return device
