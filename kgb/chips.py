"""Which chip this machine has, and whether a job's chip can run here.

A trial is only ever judged on the chip it names: a job for a chip this machine lacks
records its trials as skipped, with the reason, instead of timing them on the wrong one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Presence:
    present: bool
    reason: str


def local_device() -> str:
    """The torch device type that kernels run on here: `cuda`, or `cpu` (interpreter)."""
    return "cuda" if torch.cuda.is_available() else "cpu"


def device_name() -> str:
    if torch.cuda.is_available():
        return torch.cuda.get_device_name()
    return "cpu (Triton interpreter)"


def detect() -> str:
    """The chip config name that `chip=auto` resolves to on this machine."""
    if not torch.cuda.is_available():
        return "cpu"
    if getattr(torch.version, "hip", None):
        return "rocm"
    return "nvidia"


def presence(name: str, backend: str, device_name_pattern: str) -> Presence:
    """Whether the chip described by a chip config is the one on this machine."""
    here = local_device()
    if backend == "cpu":
        return Presence(True, "the Triton interpreter runs everywhere")
    if backend != here:
        return Presence(False, f"chip {name} needs a {backend} device; this machine has {here}")
    if not device_name_pattern:
        return Presence(False, f"chip {name} has no device_name_pattern, so it cannot be recognised here")
    found = device_name()
    if not re.search(device_name_pattern, found):
        return Presence(False, f"chip {name} expects a device matching {device_name_pattern!r}; found {found!r}")
    return Presence(True, f"found {found}")
