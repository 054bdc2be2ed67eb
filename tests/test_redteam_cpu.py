"""Red team, session 47, on the CPU path: attacks that ran for real against the judge (real
candidate processes, Triton's interpreter) and got through. Each test asserts what the threat
model (docs/design/threat-model.md) says should hold; one that kgb does not hold yet is an
xfail that says what would close it.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

import pytest

from kgb import operators
from kgb.evaluate import EvalSettings, Status, evaluate
from kgb.evaluate.sandbox import landlock_abi

SMOKE = EvalSettings(device="cpu", case_tags=("smoke",), timeout_s=120)

PRELUDE = '''
import importlib
import os
import time

import torch
import triton
import triton.language as tl

ctypes = importlib.import_module("c" + "types")  # past the static check, which is a filter only


@triton.jit
def _decoy(p):
    tl.store(p, 1.0)
'''

pytestmark = pytest.mark.skipif(landlock_abi() == 0, reason="this kernel has no Landlock")


@pytest.fixture(scope="module")
def softmax():
    return operators.load("aten::softmax")


def _processes_with(marker: str, where: str) -> list[int]:
    """The pids of the processes whose /proc/<pid>/<where> holds `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / where).read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def _still_there(marker: str, where: str, wait_s: float = 10.0) -> list[int]:
    """The processes with `marker` that are left `wait_s` after the evaluation (a killed judge's
    candidate takes a moment to go)."""
    deadline = time.monotonic() + wait_s
    while (left := _processes_with(marker, where)) and time.monotonic() < deadline:
        time.sleep(0.25)
    return left


def _end(pids: list[int]) -> None:
    """End the processes this test's candidate left, by pid."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_a_candidate_cannot_outlive_its_judge_by_clearing_its_parent_death_signal(softmax):
    """A candidate process dies with its judge by its parent-death signal only (it is in a
    session of its own, which the engine's kill of the judge's group at the timeout misses).
    prctl(PR_SET_PDEATHSIG, 0) was allowed: a candidate that cleared it and slept was still
    there after the evaluation timed out, after the harness had exited, holding its memory
    (a CUDA context and its GPU memory on a GPU host) for as long as it liked."""
    name = "kgbrt" + uuid.uuid4().hex[:8]
    source = PRELUDE + f'''

def softmax_int(self, dim, dtype=None):
    libc = ctypes.CDLL(None)
    libc.prctl(1, 0, 0, 0, 0)  # PR_SET_PDEATHSIG: none
    libc.prctl(15, b"{name}", 0, 0, 0)  # PR_SET_NAME: for this test to find it
    time.sleep(3600)
'''
    verdict = evaluate(source, softmax, EvalSettings(device="cpu", case_tags=("smoke",), timeout_s=15))
    left = _still_there(name, "comm")
    _end(left)
    assert verdict.status == Status.TIMEOUT, verdict.message
    assert not left, f"the candidate process outlived its evaluation: pids {left}"


def test_the_compile_check_leaves_no_process_behind(softmax):
    """`eval.compile_for`'s record and compile steps run candidate code in confined processes
    that could vfork and exec `sh` (both were confined with exec allowed). A shell started at
    the candidate's import, its output closed and blocked opening a FIFO no one writes,
    outlived the check with no CPU limit to end it; one that spins had 600 CPU seconds each,
    beside other evaluations. With a session of its own it would escape a kill of the step's
    group too. (A step may make no FIFO since session 49: the shell waits on a pipe it holds
    both ends of.)"""
    marker = "kgbrt" + uuid.uuid4().hex[:12]
    spawn = f'''

def _linger():
    import os
    for setsid in (False, True):
        end, other_end = os.pipe()
        try:
            os.posix_spawn("/bin/sh", ["sh", "-c", "exec >/dev/null 2>&1; read x # {marker}"], os.environ,
                           setsid=setsid, file_actions=[(os.POSIX_SPAWN_DUP2, end, 0), (os.POSIX_SPAWN_DUP2, other_end, 3)])
        except OSError:
            pass


_linger()
'''
    settings = EvalSettings(device="cpu", case_tags=("smoke",), timeout_s=120, compile_for=90)
    verdict = evaluate(softmax.solution_path.read_text() + spawn, softmax, settings)
    left = _still_there(marker, "cmdline")
    _end(left)
    assert verdict.status == Status.CORRECT, verdict.message  # an honest kernel otherwise
    assert not left, f"the compile check left {len(left)} process(es) running: pids {left}"


def test_a_candidate_process_is_the_first_the_kernel_kills_when_memory_runs_out(softmax):
    """A candidate can hold memory that is not its own resident set: a memory file it never
    maps (below), a reply of untouched pages that its judge reads into its own memory. With
    the judge's OOM score, when the host ran out the kernel killed the process with the most
    resident memory: the judge (SIGKILL from outside: an infrastructure failure, no verdict,
    retried by every run), an engine or the harness, not the candidate."""
    source = PRELUDE + '''

def softmax_int(self, dim, dtype=None):
    fd = os.memfd_create("held")
    os.ftruncate(fd, 256 << 20)
    os.pwrite(fd, b"x" * (256 << 20), 0)  # 256 MB of memory, none of it mapped by the process
    rss = [line for line in open("/proc/self/status") if line.startswith("VmRSS")][0].split()[1]
    raise RuntimeError(f"OOM-SCORE {open('/proc/self/oom_score_adj').read().strip()} RSS-KB {rss}")
'''
    verdict = evaluate(source, softmax, SMOKE)
    assert "OOM-SCORE" in verdict.message, verdict.message  # it ran
    score = int(verdict.message.split("OOM-SCORE ")[1].split()[0])
    assert score == 1000, f"the candidate process's oom_score_adj is {score}"


SOFTMAX_WRAPPER = '''


def softmax_int(self, dim, dtype=None):
    x = self.movedim(dim, -1).contiguous().float()
    y = torch.empty_like(x)
    n = x.shape[-1]
    _row[(x.numel() // max(n, 1),)](x, y, n, BLOCK=triton.next_power_of_2(n))
    return y.to(dtype or self.dtype).movedim(-1, dim)
'''


def test_numpy_inside_an_interpreted_kernel_is_not_correct(softmax):
    """Value provenance sees what a kernel stores, not how it computed it, and the op audit
    sees ATen ops only: a helper that computed the softmax with numpy from a kernel's body was
    `correct` on the CPU, where a GPU's compiler refuses the call. The interpreter now reads
    each kernel before it runs and refuses one that names anything but Triton's
    (kgb.evaluate.kernel_calls)."""
    source = PRELUDE + '''
import numpy as np


def _host(v):
    a = np.asarray(v.handle.data, dtype=np.float64)
    e = np.exp(a - a.max())
    return tl.tensor(type(v.handle)((e / e.sum()).astype(np.float32), tl.float32), v.type)


@triton.jit
def _row(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    i = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + r * n + i, mask=i < n, other=float("-inf"))
    tl.store(y_ptr + r * n + i, _host(v), mask=i < n)
''' + SOFTMAX_WRAPPER
    verdict = evaluate(source, softmax, SMOKE)
    assert verdict.status != Status.CORRECT, "numpy computed the softmax inside a kernel and was judged correct"
    assert verdict.status == Status.COMPILE_ERROR, verdict.message  # as a GPU's compiler judges it
    assert "_host" in verdict.message and "not a Triton function" in verdict.message, verdict.message


def test_a_plain_python_helper_inside_an_interpreted_kernel_is_not_correct(softmax):
    """A helper without @triton.jit (an LLM's slip, or host math on purpose) runs as plain
    Python in the interpreter, on the loaded block's values: it computed a right softmax
    there. A GPU's compiler runs such a helper only on compile-time constants, and refuses
    this one."""
    source = PRELUDE + '''


def _softmax_on_the_host(v):
    e = tl.exp(v - tl.max(v, 0))
    return e / tl.sum(e, 0)


@triton.jit
def _row(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    i = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + r * n + i, mask=i < n, other=float("-inf"))
    tl.store(y_ptr + r * n + i, _softmax_on_the_host(v), mask=i < n)
''' + SOFTMAX_WRAPPER
    verdict = evaluate(source, softmax, SMOKE)
    assert verdict.status == Status.COMPILE_ERROR, verdict.message
    assert "_softmax_on_the_host" in verdict.message and "not a Triton function" in verdict.message, verdict.message


def test_a_kernel_calling_jit_helpers_stays_correct(softmax):
    """What the check lets through: @triton.jit helpers, called by name or passed as a
    constexpr argument, triton.language and its math, the builtins Triton accepts."""
    source = PRELUDE + '''


@triton.jit
def _exp(v):
    return tl.math.exp(v)


@triton.jit
def _normalise(v, EXP: tl.constexpr):
    e = EXP(v - tl.max(v, 0))
    return e / tl.sum(e, 0)


@triton.jit
def _row(x_ptr, y_ptr, n, BLOCK: tl.constexpr, EXP: tl.constexpr = _exp):
    r = tl.program_id(0)
    i = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + r * n + i, mask=i < n, other=float("-inf")).to(tl.float32)
    for _ in tl.static_range(max(1, min(BLOCK, 1))):
        v = v + 0.0
    tl.store(y_ptr + r * n + i, _normalise(v, EXP), mask=i < n)
''' + SOFTMAX_WRAPPER
    verdict = evaluate(source, softmax, SMOKE)
    assert verdict.status == Status.CORRECT, verdict.message
