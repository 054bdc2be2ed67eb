"""Triton's launcher for a compiled kernel, built ahead of the kernel's first launch.

Triton 3.6 writes a small C module per kernel signature (its launcher) and compiles it
with the host's C compiler at the kernel's first launch: 0.4-0.7 s of host work each, on
the CPU machine, that ran inside a work section, so every timing turn asked for meanwhile
waited for a compiler (kgb.evaluate.timing_lock). Built here, where no section is held,
the launch finds it in Triton's cache (keyed by the C source) and only loads it. Triton
3.9 builds no launchers, and this costs it nothing.
"""

from __future__ import annotations

from typing import Any


def build(kernel: Any) -> None:
    """Build `kernel`'s launcher into Triton's cache, without loading the kernel on the GPU.
    A failure is left to the first launch, which tries again and reports it as it always has."""
    try:
        from triton.runtime import driver

        driver.active.launcher_cls(kernel.src, kernel.metadata)
    except Exception:  # noqa: BLE001, S110 - only a head start: the launch reports what fails
        pass
