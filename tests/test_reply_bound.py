"""A candidate's reply is bounded by what its call may send back, known to the judge before the
call (candidate_call.ReplyBound): the inputs it sent, the reference's outputs for the case,
and a fixed room. Until session 48 any reply might announce 4 GB, and a candidate whose own
resident set stayed small (pages it never touched) had its judge read that much into its own
memory for a smoke case whose answer is a few KB (docs/design/threat-model.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from kgb import operators
from kgb.evaluate import EvalSettings, Status, evaluate
from kgb.evaluate.candidate_call import (
    OUTPUT_ROOM,
    PROVENANCE_BYTES,
    REPLY_ROOM_BYTES,
    ReplyBound,
    ReplyTooLarge,
    output_bytes,
)
from kgb.evaluate.candidate_process import CandidateProcess
from kgb.evaluate.case_runner import CaseRunner
from kgb.evaluate.sandbox import Limits
from kgb.evaluate.tensor_storage import Storages
from kgb.evaluate.verdict import Failed
from kgb.operators import CaseTag

HUGE = 1 << 30  # what the hostile reply announces: far past any bound a smoke case gets

# 1 GiB of pages the candidate never touches (torch.empty's would be filled: M_PERTURB), so
# that its own resident set stays small while its reply is as large as it likes
_UNTOUCHED = f"""
import mmap

import torch
import triton
import triton.language as tl


@triton.jit
def _unused(p):
    tl.store(p, 1.0)


def _untouched():
    return torch.frombuffer(mmap.mmap(-1, {HUGE}), dtype=torch.uint8)
"""

_HUGE_SOFTMAX = _UNTOUCHED + """

def softmax_int(self, dim, dtype=None):
    return _untouched()
"""


@pytest.fixture(scope="module")
def softmax():
    return operators.load("aten::softmax")


def _smoke(spec: operators.Spec) -> operators.Case:
    return next(c for c in spec.cases if c.tag == CaseTag.SMOKE)


def _status_bytes(key: str) -> int:
    line = next(ln for ln in Path("/proc/self/status").read_text().splitlines() if ln.startswith(key + ":"))
    return int(line.split()[1]) * 1024


def _reset_peak() -> int:
    """This process's resident set now, its peak (VmHWM) reset to it."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError as exc:
        pytest.skip(f"the peak resident set cannot be reset here ({exc})")
    return _status_bytes("VmRSS")


def _candidate(tmp_path: Path, source: str) -> CandidateProcess:
    (tmp_path / "ws").mkdir()
    process = CandidateProcess("cpu", tmp_path / "ws", Limits(cpu_s=120)).wait_ready()
    loaded = process.load(source)
    assert loaded.failure is None, loaded.failure
    return process


def test_a_reply_far_larger_than_its_call_justifies_is_refused_unread(tmp_path, softmax):
    """The judge's side in this process: its peak resident set grows by nothing like the GiB
    the reply announced, and the case ends rejected, with the size and the bound said."""
    process = _candidate(tmp_path, _HUGE_SOFTMAX)
    try:
        runner = CaseRunner(softmax, process, "cpu")
        before = _reset_peak()
        with pytest.raises(Failed) as failed:
            runner.check(_smoke(softmax), _smoke(softmax).seed)
        grew = _status_bytes("VmHWM") - before
    finally:
        process.close()
    assert failed.value.status == Status.REJECTED, failed.value.message
    assert f"announced {HUGE:,} bytes, more than this call may send back" in failed.value.message
    assert grew < HUGE // 8, f"the judge's resident set grew by {grew:,} bytes reading a refused reply"


def test_the_verdict_says_what_the_reply_announced_and_what_it_might_hold(softmax):
    verdict = evaluate(_HUGE_SOFTMAX, softmax, EvalSettings(device="cpu", case_tags=("smoke",), timeout_s=120))
    assert verdict.status == Status.REJECTED, verdict.message
    assert f"case {_smoke(softmax).name}: the candidate's reply announced {HUGE:,} bytes" in verdict.message
    assert "its inputs'" in verdict.message and "times its outputs'" in verdict.message


def test_an_honest_solution_passes_every_smoke_case_within_its_bound(tmp_path, softmax, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")  # as the engine runs judges on the CPU
    process = _candidate(tmp_path, softmax.solution_path.read_text())
    try:
        runner = CaseRunner(softmax, process, "cpu")
        for case in softmax.cases_for({CaseTag.SMOKE}):
            result = runner.check(case, case.seed)
            assert result.status == Status.CORRECT, result.message
    finally:
        process.close()


def test_a_timed_calls_reply_may_hold_its_recordings_snapshots_and_no_more(tmp_path):
    """Since judge v35 nothing a timed call computes comes back: its reply holds the recording,
    whose snapshots of tensors made before the call are at most MAX_SNAPSHOT_BYTES. A process
    that pads its reply past that (its codec reached through sys.modules) is refused unread."""
    source = _UNTOUCHED + """
import sys


def f(x):
    codec = sys.modules["kgb.evaluate.codec"]
    send = codec.send

    def padded(conn, kind, value=None, *args, **fields):
        if kind == "timed":
            value = {**value, "padding": _untouched()}
        return send(conn, kind, value, *args, **fields)

    codec.send = padded
    return x + 1
"""
    process = _candidate(tmp_path, source)
    try:
        x = torch.ones(1 << 10)
        with pytest.raises(ReplyTooLarge, match=f"announced {HUGE:,} bytes.*for its recording's snapshots"):
            process.time("f", ((x,), {}), ((x.clone(),), {}))
    finally:
        process.close()


def test_a_bound_is_the_inputs_the_reference_outputs_and_a_fixed_room():
    x = torch.zeros(1000)
    row = torch.zeros(1, 256)
    sent = Storages(by_id={0: x.untyped_storage()})
    # each storage once, an input's too (a candidate may copy what the reference views), but
    # never a view's elements: expand's repeat its input, and its spec wants the view itself
    assert output_bytes(x * 2) == 4000 and output_bytes((x, x[:10], x.view(10, 100))) == 4000
    assert output_bytes(row.expand(64, 256)) == 256 * 4
    assert output_bytes(None) == 0 and output_bytes(1.5) == 0
    on_gpu = ReplyBound.of(sent, 4000, "cuda")
    assert on_gpu.nbytes == 4000 + OUTPUT_ROOM * 4000 + REPLY_ROOM_BYTES
    # on the CPU the interpreter's record of stored values rides along, which no size bounds
    assert ReplyBound.of(sent, 4000, "cpu").nbytes == on_gpu.nbytes + PROVENANCE_BYTES
    assert f"{on_gpu.nbytes:,}" in str(on_gpu)
