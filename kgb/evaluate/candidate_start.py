"""How a candidate process starts: forked by its judge before the judge touches the GPU, it
closes what it inherited, starts CUDA, builds and warms what it will need (Triton's driver
module, the profiler, the draws' kernels), confines itself (kgb.evaluate.sandbox) and only then
serves the judge's messages (kgb.evaluate.candidate.Server), where candidate code runs. Whatever
it imports after confinement may not open, so all of that comes first.
"""

from __future__ import annotations

import importlib
import os
from multiprocessing.connection import Connection
from pathlib import Path

import torch

from kgb.evaluate import codec, cuda_waits, draws, launcher
from kgb.evaluate.candidate import Server
from kgb.evaluate.integrity import patch_launchers, recorded_by_profiler
from kgb.evaluate.sandbox import Applied, Limits, SandboxLevel, confine, die_with_parent, exit_after


def _warm_triton_driver() -> None:
    """Build and load Triton's CUDA helper module before the sandbox closes. It is compiled
    with the host's C compiler once per cache directory: the engine's shared one (trusted
    code wrote it), not the candidate's own, which holds what evaluations of the same source
    left there at most (kgb.evaluate.compile_cache)."""
    own = os.environ.get("TRITON_CACHE_DIR")
    shared = os.environ.get("KGB_DRIVER_CACHE")
    if shared:
        os.environ["TRITON_CACHE_DIR"] = shared
    try:
        import triton

        driver = triton.runtime.driver.active
        driver.utils  # noqa: B018 - the property compiles and loads the module
        driver.get_current_device()
    finally:
        if own:
            os.environ["TRITON_CACHE_DIR"] = own


def _close_inherited(keep: int) -> None:
    """Close every descriptor the fork inherited but its own socket, stdout and stderr: the
    judge's and the engine's (the engine's order pipe on stdin among them), which are the
    judge's to read and write, never the candidate's."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    top = os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 65536
    os.closerange(3, keep)
    os.closerange(keep + 1, top)


def run_forked(conn: Connection, device: str, workspace: Path, limits: Limits) -> None:
    """The body of the forked candidate process; never returns."""

    def serve() -> None:
        os.setsid()
        die_with_parent()
        _close_inherited(keep=conn.fileno())
        torch.set_num_threads(1)
        readable: tuple[str, ...] = ()  # besides the sandbox's defaults
        if device == "cuda":
            cuda_waits.apply()
            torch.cuda.init()
            torch.empty(1, device="cuda")  # the context exists before the sandbox closes
            draws.warm_up(device)
            _warm_triton_driver()
            if shared := os.environ.get("KGB_DRIVER_CACHE"):
                launcher.read_judges_launchers(shared)
                readable = (shared,)
        else:
            from kgb.evaluate.interpreter import prepare_interpreter

            prepare_interpreter()
        patch_launchers()
        importlib.import_module("torch._dynamo")  # imported lazily by Tensor.movedim & co.: seconds, and files
        with recorded_by_profiler():  # its first start spawns threads, which the sandbox refuses
            torch.ones(1).add_(1)
        import tempfile

        tempfile.tempdir = str(workspace)  # compilers' scratch files (ptxas input) go to the workspace
        if os.environ.get("KGB_SANDBOX") == "off":  # for diagnosing a new host; recorded on the verdict
            applied = Applied(SandboxLevel.NONE, ["switched off with KGB_SANDBOX=off"])
        else:
            applied = confine(workspace, allow_exec=device != "cpu", limits=limits, extra_read=readable)
        torch.manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)  # no seed a candidate can predict
        codec.send(conn, "ready", None, sandbox=str(applied.level), notes=applied.notes)
        Server(conn, device, workspace).serve()

    exit_after(serve)
