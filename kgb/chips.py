"""Which chip this machine has, and whether a job's chip can run here.

A trial is only ever judged on the chip it names: a job for a chip this machine lacks
records its trials as skipped, with the reason, instead of timing them on the wrong one.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
from dataclasses import dataclass

# torch is imported where it is asked: `python run.py` starts the judge's engine (which imports
# its own) before this process imports it (kgb.job.head_start)


@dataclass(frozen=True)
class Presence:
    present: bool
    reason: str


def local_device() -> str:
    """The torch device type that kernels run on here: `cuda`, or `cpu` (interpreter)."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def device_name() -> str:
    import torch

    if torch.cuda.is_available():
        return torch.cuda.get_device_name()
    return "cpu (Triton interpreter)"


def detect() -> str:
    """The chip config name that `chip=auto` resolves to on this machine (`recognise`):
    `cpu` where this PyTorch can run kernels on no accelerator; `nvidia` for a CUDA device
    of a vendor kgb does not know."""
    found = recognise()
    if not found.usable:
        return "cpu"
    return found.platform.chip if found.platform is not None else "nvidia"


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


# --- which vendor's accelerator this machine has (chip=auto; python -m kgb.chips) ---------

@dataclass(frozen=True)
class Platform:
    """An accelerator stack kgb can recognise, by its PyTorch build and its vendor's tools."""

    vendor: str  # e.g. "Iluvatar CoreX"
    chip: str  # the chip config it runs as (conf/chip/); `rocm` and `metax` have none published
    backend: str  # the torch device type its PyTorch uses
    name_pattern: str  # regex on the torch device name
    tool: str  # the vendor's management tool, found on PATH where its driver is installed


# Order matters: CUDA-compatible builds report a CUDA device, so the device name tells
# Iluvatar and MetaX from NVIDIA; a ROCm build is told by torch.version.hip.
PLATFORMS = (
    Platform("Iluvatar CoreX", "E", "cuda", r"Iluvatar", "ixsmi"),
    Platform("MetaX", "metax", "cuda", r"MetaX|MXC", "mx-smi"),
    Platform("Hygon DCU (ROCm)", "rocm", "cuda", r"DCU|Hygon", "hy-smi"),
    Platform("AMD (ROCm)", "rocm", "cuda", r"AMD|Radeon|Instinct", "rocm-smi"),
    Platform("Moore Threads (torch_musa)", "C", "musa", r"MTT|Moore", "mthreads-gmi"),
    Platform("Ascend (torch_npu)", "B", "npu", r"Ascend", "npu-smi"),
    Platform("NVIDIA", "nvidia", "cuda", r"NVIDIA", "nvidia-smi"),
)


@dataclass(frozen=True)
class Recognition:
    """What this machine is, as far as kgb can tell, and what it looked at."""

    platform: Platform | None  # None: no accelerator kgb recognises
    usable: bool  # this PyTorch can run kernels on it
    saw: str  # the evidence: torch build, device name, vendor tools on PATH


def _tools_on_path() -> list[Platform]:
    return [p for p in PLATFORMS if shutil.which(p.tool)]


def recognise() -> Recognition:
    """The accelerator platform of this machine from the PyTorch build (its CUDA or ROCm
    build, torch_npu, torch_musa), the device name, and the vendor tools on PATH."""
    import torch

    build = f"torch {torch.__version__}"
    for backend, module in (("npu", "torch_npu"), ("musa", "torch_musa")):
        if importlib.util.find_spec(module) is not None:
            platform = next(p for p in PLATFORMS if p.backend == backend)
            return Recognition(platform, False, f"{build} with {module}: kgb's judge times only CUDA-style devices yet")
    if torch.cuda.is_available():
        name = torch.cuda.get_device_name()
        hip = getattr(torch.version, "hip", None)
        candidates = [p for p in PLATFORMS if (p.chip == "rocm") == bool(hip)]
        for platform in candidates:
            if re.search(platform.name_pattern, name):
                return Recognition(platform, True, f"{build} ({'ROCm ' + hip if hip else 'CUDA'}), device {name!r}")
        if hip:
            return Recognition(candidates[0 if "DCU" in name else -1], True, f"{build} (ROCm {hip}), device {name!r}")
        return Recognition(None, True, f"{build} (CUDA), device {name!r} of no vendor kgb knows")
    tools = _tools_on_path()
    if tools:
        found = ", ".join(f"{p.tool} ({p.vendor})" for p in tools)
        return Recognition(tools[0], False, f"{found} on PATH, but {build} sees no device: install the vendor's PyTorch build")
    return Recognition(None, False, f"{build} sees no accelerator and no vendor tool is on PATH")


def describe(found: Recognition) -> str:
    """One line for a person: what chip=auto makes of this machine."""
    if found.platform is None:
        return f"no accelerator kgb recognises (chip=auto runs on cpu); saw: {found.saw}"
    runs = "kgb runs on it" if found.usable else "kgb cannot run on it yet"
    return f"{found.platform.vendor}: chip={found.platform.chip}, {runs}; saw: {found.saw}"


if __name__ == "__main__":
    print(describe(recognise()))
