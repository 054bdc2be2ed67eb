"""The GPU's clocks as its driver reports them (NVIDIA's management library, NVML, through
ctypes: the GPU host has the driver's libnvidia-ml but not its Python binding).

Why: on the H200 (session 37) about one timing in fifty came out 5-25% slower than the same
case in other jobs, often a whole ms-long measurement at once. A GPU whose power cap had
lowered its clocks could be why: under a load of large GEMMs the H200 ran at 1440 MHz of
1980. `Clocks.read` says what the SM clock is and what holds it down; the judges' trace
records it as each measurement starts and ends (`trace_fields`): at its most for all but
about one in a hundred of a sweep's measurements, those after a GEMM's in the same turn under
the power cap. Since judge v20 every measurement waits for the cap to let go first
(`wait_for_clocks`). Everything here answers None where NVML is missing (a CPU host, another
vendor's GPU), and the wait is then none.
"""

from __future__ import annotations

import ctypes
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from kgb.evaluate.timing_lock import TRACE_ENV

NVML_CLOCK_SM = 1
NVML_CLOCK_MEM = 2
NVML_TEMPERATURE_GPU = 0
# nvmlClocksEventReasons bits (nvml.h): why the clocks are below their most
REASONS = {
    0x1: "idle",
    0x2: "application clocks",
    0x4: "power cap",
    0x8: "hardware slowdown",
    0x10: "sync boost",
    0x20: "thermal (software)",
    0x40: "thermal (hardware)",
    0x80: "power brake",
    0x100: "display clocks",
}


@dataclass(frozen=True)
class Reading:
    sm_mhz: int
    max_sm_mhz: int
    reasons: tuple[str, ...]  # why the clock is held down; () when nothing holds it
    power_w: float
    temperature_c: int


class Clocks:
    """One GPU's clocks, read through NVML; `read()` is None where NVML cannot answer."""

    def __init__(self, pci_bus_id: str | None = None, index: int = 0):
        self._lib = self._device = None
        try:
            lib = ctypes.CDLL("libnvidia-ml.so.1")
        except OSError:
            return
        if lib.nvmlInit_v2() != 0:
            return
        device = ctypes.c_void_p()
        if pci_bus_id:
            found = lib.nvmlDeviceGetHandleByPciBusId_v2(pci_bus_id.encode(), ctypes.byref(device))
        else:
            found = lib.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(index), ctypes.byref(device))
        if found == 0:
            self._lib, self._device = lib, device

    @classmethod
    def of_cuda_device(cls, index: int = 0) -> Clocks:
        """The clocks of torch's CUDA device `index` (found by its PCI address: NVML numbers
        the GPUs its own way, whatever CUDA_VISIBLE_DEVICES says)."""
        import torch

        p = torch.cuda.get_device_properties(index)
        bus = getattr(p, "pci_bus_id", None)
        address = None
        if bus is not None:
            address = f"{getattr(p, 'pci_domain_id', 0):08x}:{bus:02x}:{getattr(p, 'pci_device_id', 0):02x}.0"
        clocks = cls(address)
        return clocks if clocks.available else cls(index=index)

    @property
    def available(self) -> bool:
        return self._device is not None

    def _uint(self, fn: str, *args: object) -> int | None:
        out = ctypes.c_uint()
        return out.value if getattr(self._lib, fn)(self._device, *args, ctypes.byref(out)) == 0 else None

    def read(self) -> Reading | None:
        if self._device is None:
            return None
        sm = self._uint("nvmlDeviceGetClockInfo", ctypes.c_int(NVML_CLOCK_SM))
        most = self._uint("nvmlDeviceGetMaxClockInfo", ctypes.c_int(NVML_CLOCK_SM))
        milliwatts = self._uint("nvmlDeviceGetPowerUsage")
        temperature = self._uint("nvmlDeviceGetTemperature", ctypes.c_int(NVML_TEMPERATURE_GPU))
        if sm is None or most is None:
            return None
        return Reading(sm, most, self.held_by() or (), (milliwatts or 0) / 1000.0, temperature or 0)

    def memory_mhz(self) -> int | None:
        """The memory clock now, apart from `read`: the judge's trace has no use for it, and
        each NVML call costs the turn about 0.2 ms on a loaded host."""
        return self._uint("nvmlDeviceGetClockInfo", ctypes.c_int(NVML_CLOCK_MEM)) if self._device is not None else None

    def held_by(self) -> tuple[str, ...] | None:
        """What holds the clocks below their most now, in one NVML call (`read` makes five,
        about a millisecond in all on the H200's loaded host); None where NVML cannot say."""
        if self._device is None:
            return None
        bits = ctypes.c_ulonglong()
        if self._lib.nvmlDeviceGetCurrentClocksThrottleReasons(self._device, ctypes.byref(bits)) != 0:
            return None
        return tuple(name for bit, name in REASONS.items() if bits.value & bit)


# What holds the clock down that passes by itself once the GPU has rested; "idle" is not one
# (a turn's spin-up is for that), nor the settings of application clocks.
RECOVERING = frozenset({"power cap", "power brake", "thermal (software)", "thermal (hardware)", "hardware slowdown"})
RECOVERY_LIMIT_S = 0.3
# A GPU whose clock stays held down through this many waits in a row is held for good (a power
# limit set low, a slowdown the driver keeps asserting): waiting before every measurement would
# only lengthen every turn, so this process stops waiting.
GIVE_UP_AFTER = 3
_device_clocks: Clocks | None = None
_waits_run_out = 0


def this_gpu() -> Clocks | None:
    """The current CUDA device's clocks, found once per process; None without CUDA."""
    global _device_clocks
    if _device_clocks is None:
        import torch

        if not torch.cuda.is_available():
            return None
        _device_clocks = Clocks.of_cuda_device(torch.cuda.current_device())
    return _device_clocks


def wait_for_clocks(limit_s: float = RECOVERY_LIMIT_S, poll_s: float = 0.005) -> float:
    """Let the GPU rest while its power cap or heat holds its clock down, at most `limit_s`;
    the seconds it rested. A measurement starts at the clocks a quiet GPU has, not at those
    the work drained before the turn left it with: on the H200 (session 38) a GEMM measured
    right after another in the same turn started at 1530 MHz of 1980 under the power cap and
    read 13% over its other sweeps; after a load the cap lets go within about 100-200 ms
    (benchmarks/clock_recovery.py). 0 at once where NVML does not answer, and once the clock
    stayed held through GIVE_UP_AFTER waits in a row."""
    global _waits_run_out
    clocks = this_gpu()
    began = time.monotonic()
    while clocks is not None and _waits_run_out < GIVE_UP_AFTER:
        reasons = clocks.held_by()
        waited = time.monotonic() - began
        if reasons is None or not RECOVERING & set(reasons):
            _waits_run_out = 0
            return waited
        if waited >= limit_s:
            _waits_run_out += 1
            return waited
        time.sleep(poll_s)
    return 0.0


def trace_fields(prefix: str = "") -> dict[str, object]:
    """The current CUDA device's clocks for a line of the judges' trace (kgb.evaluate.timing_lock.
    trace): the SM clock, its most, what holds it down and the power drawn, each name after
    `prefix`; {} without NVML."""
    clocks = this_gpu()
    r = clocks.read() if clocks is not None else None
    if r is None:
        return {}
    fields = {"sm_mhz": r.sm_mhz, "max_sm_mhz": r.max_sm_mhz, "held_by": list(r.reasons), "power_w": round(r.power_w)}
    return {prefix + k: v for k, v in fields.items()}


@contextmanager
def clocks_around() -> Iterator[dict[str, object]]:
    """The clocks as a measurement inside it starts and as it ends (`trace_fields`, the end's
    names after "end_"), for the measurement's line of the judges' trace; {} unless a trace is
    kept (TRACE_ENV) and NVML answers."""
    fields = trace_fields() if TRACE_ENV in os.environ else {}
    yield fields
    if fields:  # a long call's own repetitions may bring the power cap down on it
        fields.update(trace_fields("end_"))
