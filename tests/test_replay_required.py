"""No `correct` on a GPU without the judge's own replay of every bench case (judge v26).

What a candidate process reports of itself (its op audit, the recording of its timed call) is
the candidate's to forge; the judge's replay of the recorded GPU work, checked on a fresh draw,
is not. Until judge v25 a case the judge could not replay was left untimed and the verdict
stood, so a forger made its recording unreplayable. Here a real, confined candidate process
times a bench case on the CPU and the judge's staging of its replay fails as it can on a GPU:
for the candidate's reasons (rejected), or for the GPU's memory (a runtime error that
kgb.evaluate judges again alone)."""

from __future__ import annotations

import pytest
import torch
from test_redraw import CANDIDATE, KERNEL, _spec
from test_timed_case import timing_runner

from kgb.evaluate import Verdict, _ran_out, bench_case
from kgb.evaluate.recording import Unreplayable
from kgb.evaluate.verdict import Failed, Status

OOM = "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 139.80 GiB"


@pytest.mark.parametrize("raised, status, says", [
    (Unreplayable("spoiled"), Status.REJECTED, "cannot replay the GPU work recorded in the candidate's call (spoiled)"),
    (Unreplayable("aten::_softmax is not an op the judge replays"), Status.REJECTED, "aten::_softmax"),
    (RuntimeError("a recording the judge's Triton cannot load"), Status.REJECTED, "cannot replay"),
    (torch.OutOfMemoryError(OOM), Status.RUNTIME_ERROR, "ran out of GPU memory"),
    (torch.AcceleratorError("CUDA error: an illegal memory access was encountered"), Status.RUNTIME_ERROR,
     "the judge's replay of the recorded call failed: CUDA error: an illegal memory access"),
], ids=["spoiled", "an op not replayed", "not loadable", "out of memory", "a fault"])
def test_a_bench_case_the_judge_cannot_replay_is_never_correct(tmp_path, monkeypatch, raised, status, says):
    def staged_replay(*args, **kwargs):
        raise raised

    monkeypatch.setattr(bench_case, "StagedReplay", staged_replay)
    failed = _staged(tmp_path, _spec(tmp_path), KERNEL)
    assert failed.value.status == status and says in failed.value.message, failed.value.message
    assert failed.value.message.startswith("case big: ")
    # a replay that ran out of memory among other judges' is judged again, alone
    verdict = Verdict(failed.value.status, failed.value.message, device="cuda")
    assert _ran_out(verdict) is (raised.__class__ is torch.OutOfMemoryError)


def test_a_timed_case_is_audited_as_a_checked_call_is(tmp_path):
    """Judge v33: a timed case has no check before its timing, where the op audit caught a
    candidate that computes with PyTorch at bench sizes; the candidate process's last call of
    the timing is audited instead, before any replay is staged."""
    failed = _staged(tmp_path, _spec(tmp_path), CANDIDATE)  # out.copy_(x * 2)
    assert failed.value.status == Status.REJECTED
    assert failed.value.message == ("case big: the candidate computed with PyTorch (aten::mul.Tensor); "
                                    "values must be computed by Triton kernels")


def _staged(tmp_path, spec, source: str) -> pytest.ExceptionInfo[Failed]:
    """How staging the spec's bench case fails, in a real, confined candidate process on the CPU."""
    with timing_runner(tmp_path, spec, source) as runner, pytest.raises(Failed) as failed:
        runner.stage(next(c for c in spec.cases if c.tag == "bench"), 3, 1)
    return failed
