"""A bench case timed end to end on the CPU: a real, confined candidate process stages it, the
judge replays the recorded call in a turn and judges it (kgb.evaluate.bench_case: stage,
measure, finish). Since judge v35 only the replay's answer on set V is checked, and nothing the
candidate process computes there comes back. The spec copies x into out: the recorded call's
ops (copy_, fill_) are ones the judge replays, as a GPU's Triton launches are."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from kgb import operators
from kgb.evaluate import bench_case
from kgb.evaluate.candidate_process import CandidateProcess
from kgb.evaluate.case_runner import CaseRunner
from kgb.evaluate.phases import Phases
from kgb.evaluate.sandbox import Limits
from kgb.evaluate.timing_lock import TimingLock
from kgb.evaluate.verdict import Failed, Status

SPEC = '''
"""x, copied into out."""

import torch

from kgb.operators import Case

VERSION = 1
SIGNATURES = """
def copied(x: torch.Tensor, out: torch.Tensor) -> None:
    \\"\\"\\"out = x\\"\\"\\"
"""
OUTPUT_ARGS = ("out",)
KERNEL_REQUIRED = False
DENIED_TORCH_OPS = ("aten::clone",)  # what the recorder's snapshots use: its own copies
CASES = [Case("small", "smoke", {"n": 64}, seed=3), Case("big", "bench", {"n": 1 << 14}, seed=4)]


def make_inputs(case, gen, device):
    n = case.params["n"]
    return {"x": torch.randn(n, generator=gen), "out": torch.empty(n)}


def reference(x, out):
    out.copy_(x)
'''

# whether the call is the one the judge records (kgb.evaluate.recording's recorder is active)
_RECORDED = """
import sys


def recorded():
    module = sys.modules.get("kgb.evaluate.recording")
    return bool(module is not None and module._recorder)
"""
HONEST = "def copied(x, out):\n    out.copy_(x)\n"
# a decoy store in the recorded call, the copy everywhere else
DECOY = _RECORDED + "\n\ndef copied(x, out):\n    out.fill_(0.0) if recorded() else out.copy_(x)\n"
# the copy in the recorded call, wrong everywhere else: not this process's answer is judged
WRONG_UNRECORDED = _RECORDED + "\n\ndef copied(x, out):\n    out.copy_(x) if recorded() else out.fill_(1.0)\n"
# a scratch tensor kept from its first call, which the recorder snapshots in the recorded call
KEPT_SCRATCH = """
import torch

_kept = []


def copied(x, out):
    if not _kept:
        _kept.append(torch.empty(4096))
    _kept[0].fill_(0.0)
    out.copy_(x)
"""


@contextlib.contextmanager
def timing_runner(tmp_path: Path, spec: operators.Spec, source: str) -> Iterator[CaseRunner]:
    """A judge's CaseRunner over a real, confined candidate process on the CPU, `source` loaded
    in it, no baseline known."""
    (tmp_path / "ws").mkdir()
    process = CandidateProcess("cpu", tmp_path / "ws", Limits(cpu_s=120)).wait_ready()
    runner = CaseRunner(spec, process, "cpu", Phases())
    runner.exclusive = process.exclusive = TimingLock(None, runner.phase)
    runner.known_baselines = {}
    try:
        assert process.load(source).failure is None
        yield runner
    finally:
        process.close()


def _judged(tmp_path: Path, source: str, staged: list | None = None) -> bench_case.Finished:
    """The spec's bench case staged, measured and finished; `staged` gets the staged case."""
    folder = tmp_path / "ops" / "aten" / "copied"
    folder.mkdir(parents=True)
    (folder / "spec.py").write_text(SPEC)
    spec = operators.load_spec(folder / "spec.py")
    with timing_runner(tmp_path, spec, source) as runner:
        case = runner.stage(next(c for c in spec.cases if c.tag == "bench"), 3, 1)
        if staged is not None:
            staged.append(case)
        runner.measure([case])
        return runner.finish(case)


@pytest.fixture
def no_kernel_clock(cpu_as_gpu, monkeypatch):
    monkeypatch.setattr(bench_case.kernel_clock, "session", contextlib.nullcontext)


def test_an_honest_candidate_is_timed_by_the_judges_replay(tmp_path, no_kernel_clock):
    finished = _judged(tmp_path, HONEST)
    assert finished.latency_us > 0 and finished.baseline_us > 0
    assert finished.max_abs_err == 0.0  # the replay's answer is the copy itself


def test_a_decoy_in_the_recorded_call_is_wrong_after_timing(tmp_path, no_kernel_clock):
    with pytest.raises(Failed) as failed:
        _judged(tmp_path, DECOY)
    assert failed.value.status == Status.WRONG_OUTPUT
    assert failed.value.message.startswith("after timing, on fresh inputs: case big: argument out: ")
    assert failed.value.message.endswith("(the judge's replay of the GPU work recorded in the candidate's call)")


def test_the_candidate_processs_own_answers_on_a_timed_case_are_not_judged(tmp_path, no_kernel_clock):
    """Judge v35: what the process computes outside its recorded call stays there; the replay of
    the recorded call, which is what is timed, is what is checked, and its maxima are the case's
    (the process's own answer, all ones, is far off)."""
    finished = _judged(tmp_path, WRONG_UNRECORDED)
    assert finished.latency_us > 0 and finished.max_abs_err == 0.0


def test_the_recorded_call_is_audited_without_the_recorders_own_copies(tmp_path, no_kernel_clock):
    """Judge v35 audits the recorded call itself. The recorder copies a tensor made before the
    call by value (a snapshot, with clone, which this spec denies the candidate): its own copy,
    left out of the audit, where it would reject a candidate that keeps a scratch buffer, and on
    a GPU count its bytes as values read back to the host."""
    staged: list = []
    finished = _judged(tmp_path, KEPT_SCRATCH, staged)
    assert finished.latency_us > 0 and finished.max_abs_err == 0.0
    recording = staged[0].reply.value["recording"]
    assert len(recording["snapshots"]) == 1 and recording["snapshots"][0]["data"].numel() == 4096 * 4
    assert "aten::clone" not in staged[0].reply.fields["torch_ops"]
    assert "aten::fill_" in staged[0].reply.fields["torch_ops"]  # the call's own ops are audited
