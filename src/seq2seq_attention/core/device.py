"""Choosing the device that new tensors are made on.

Modules never look at a global device: they take it from their inputs. Only code that
*creates* the first tensors (a page's spec fence, a script, the CLI) needs to pick one.
"""

import os

import torch

from .errors import InputError, echo

DEVICE_ENV = "SEQ2SEQ_ATTENTION_DEVICE"


def parse_device(name: str | None, where: str = "--device") -> torch.device:
    """Turn a device name (``cpu``, ``cuda``, ``cuda:1``) into a device that exists here.

    An empty name (no `--device` given) means `pick_device()`.

    Raises:
        InputError: the name is not a device, names a device type this package does not run on
            (only ``cpu`` and ``cuda``), or asks for CUDA (or a CUDA index) this machine lacks;
            the message names `where` the name came from.
    """
    if not name or not name.strip():
        return pick_device()
    try:
        device = torch.device(name.strip())
    except RuntimeError:
        raise InputError(f"{where} {echo(name)} is not a device name (cpu, cuda, cuda:1)") from None
    if device.type not in ("cpu", "cuda"):
        raise InputError(f"{where} {echo(name)}: this package runs on cpu or cuda, got device type {device.type!r}")
    if device.type == "cuda" and not torch.cuda.is_available():
        raise InputError(f"{where} {echo(name)} asks for CUDA, but torch.cuda.is_available() is False")
    if device.type == "cuda" and device.index is not None and device.index >= torch.cuda.device_count():
        raise InputError(f"{where} {echo(name)}: this machine has {torch.cuda.device_count()} CUDA device(s)")
    return device


def pick_device() -> torch.device:
    """Return the device to build new tensors on.

    CUDA when it is available, the CPU otherwise. The environment variable
    `SEQ2SEQ_ATTENTION_DEVICE` (`cpu` or `cuda`) overrides the choice; the test run uses it
    to execute every spec fence once per device.

    Raises:
        InputError: the variable asks for CUDA on a machine without it, or names
            something that is not a device.
    """
    wanted = os.environ.get(DEVICE_ENV, "").strip()
    if not wanted:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return parse_device(wanted, where=DEVICE_ENV)
