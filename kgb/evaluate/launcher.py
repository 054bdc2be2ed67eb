"""Triton's launcher for a compiled kernel, built ahead of the kernel's first launch.

Triton 3.6 writes a small C module per kernel signature (its launcher) and compiles it
with the host's C compiler at the kernel's first launch: 0.4-0.7 s of host work each, on
the CPU machine, that ran inside a work section, so every timing turn asked for meanwhile
waited for a compiler (kgb.evaluate.timing_lock). Built here, where no section is held,
the launch finds it in Triton's cache (keyed by the C source) and only loads it. Triton
3.9 builds no launchers, and this costs it nothing.
"""

from __future__ import annotations

import os
from typing import Any


def build(kernel: Any) -> None:
    """Build `kernel`'s launcher into Triton's cache, without loading the kernel on the GPU.
    A failure is left to the first launch, which tries again and reports it as it always has."""
    try:
        from triton.runtime import driver

        driver.active.launcher_cls(kernel.src, kernel.metadata)
    except Exception:  # noqa: BLE001, S110 - only a head start: the launch reports what fails
        pass


LAUNCHER_PREFIX = "__triton_launcher"  # what Triton names a launcher's module in its cache


def read_judges_launchers(shared: str) -> None:
    """Let this process's Triton find a launcher in the judges' cache (`shared`, the engine's
    KGB_DRIVER_CACHE) when its own has none: a candidate process built each of its kernels'
    launchers itself, about four an evaluation, and 887 of a sweep's ~1,000 C compiles on the
    H200 (session 32). A launcher's C source depends on the kernel's argument types alone, so
    the one a judge built to replay an earlier candidate's kernel is the one this process
    would build. Only trusted code writes there (judges, from argument types they checked:
    kgb.evaluate.replay); the candidate process reads it and cannot write it (its sandbox
    lets it write its workspace only). Set in the candidate process before the sandbox closes."""
    from triton import knobs
    from triton.runtime.cache import FileCacheManager

    class OwnThenJudges(FileCacheManager):
        def get_file(self, filename: str) -> str | None:
            found = super().get_file(filename)
            if found is None and filename.startswith(LAUNCHER_PREFIX):
                theirs = os.path.join(shared, self.key, filename)
                if os.path.isfile(theirs):
                    return theirs
            return found

    knobs.cache.manager_class = OwnThenJudges
