"""Spare judges (kgb.evaluate.spare): the next evaluation of the same settings runs on a
judge and candidate processes started before it was asked for, in a workspace of its own."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import pytest

from kgb import operators
from kgb.evaluate import EvalSettings, Status, _engines, engine_env, evaluate

SETTINGS = EvalSettings(device="cpu", case_tags=("smoke",), timeout_s=120)

# Leaves a file in its workspace, then says which process it is and what its workspace held.
REPORTER = """
import os

import triton
import triton.language as tl


@triton.jit
def _k(x_ptr, BLOCK: tl.constexpr):
    pass


def softmax_int(self, dim, dtype=None):
    home = os.environ["HOME"]
    found = sorted(os.listdir(home))
    open(os.path.join(home, "left-by-{tag}"), "w").close()
    raise RuntimeError(f"pid {{os.getpid()}} found {{found}}")
"""


@pytest.fixture(scope="module")
def softmax():
    return operators.load("aten::softmax")


def _report(verdict) -> tuple[int, list[str]]:
    assert verdict.status == Status.RUNTIME_ERROR, verdict.message
    match = re.search(r"pid (\d+) found (\[.*?\])", verdict.message)
    assert match, verdict.message
    return int(match.group(1)), eval(match.group(2))  # noqa: S307 - a list of names the candidate printed


def _descendants(pid: int) -> set[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    children = {int(p) for p in out}
    return children.union(*(_descendants(c) for c in children)) if children else set()


def _spare_up(engine) -> set[int]:
    """The engine's descendants once each of its spare judges and its candidate process are
    up (a spare starts after the evaluation before it returned; other tests' settings may
    have spares of their own in this engine)."""
    deadline = time.monotonic() + 60
    while len(found := _descendants(engine.proc.pid)) < 2 * len(engine._spares) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def test_the_next_evaluation_runs_on_the_spare_the_one_before_started(softmax):
    first, _ = _report(evaluate(REPORTER.format(tag="first"), softmax, SETTINGS))
    engine = _engines[json.dumps(engine_env(SETTINGS), sort_keys=True)]  # the one these settings use
    waiting = _spare_up(engine)  # the spare judge and its candidate process, up before the call
    second, found = _report(evaluate(REPORTER.format(tag="second"), softmax, SETTINGS))
    assert second != first
    assert second in waiting, "the second candidate ran in a process started for it, not in the spare's"
    # a workspace of its own: nothing the first candidate left there
    assert not [name for name in found if name.startswith("left-by")], found


def test_as_many_spares_wait_as_evaluations_were_in_flight(softmax):
    """A sweep judges several candidates at once: one spare for them all left most of its
    evaluations to start their judges while they waited (2-9 s each on a busy H200)."""
    settings = EvalSettings(device="cpu", case_tags=("smoke",), timeout_s=121)  # settings of this test alone
    slow = REPORTER.replace("    home = ", "    import time\n    time.sleep(3)\n    home = ")

    def three_at_once() -> list[int]:
        with ThreadPoolExecutor(3) as pool:
            return [_report(v)[0] for v in pool.map(
                lambda tag: evaluate(slow.format(tag=tag), softmax, settings), ["a", "b", "c"])]

    three_at_once()
    engine = _engines[json.dumps(engine_env(settings), sort_keys=True)]
    key = next(s.key for s in engine._spares if '"timeout_s": 121' in s.key)
    assert sum(s.key == key for s in engine._spares) == 3
    waiting = _spare_up(engine)
    assert set(three_at_once()) <= waiting, "an evaluation started its own judge while spares waited"


def test_a_spare_is_only_used_for_the_settings_it_was_started_for(softmax):
    _report(evaluate(REPORTER.format(tag="a"), softmax, SETTINGS))
    engine = _engines[json.dumps(engine_env(SETTINGS), sort_keys=True)]
    waiting = _spare_up(engine)
    other = EvalSettings(device="cpu", case_tags=("smoke",), timeout_s=77)  # another CPU time limit
    pid, _ = _report(evaluate(REPORTER.format(tag="b"), softmax, other))
    assert pid not in waiting


def test_settings_that_time_and_settings_that_do_not_share_spares():
    """A judge has one candidate process, which checks and then times (CaseRunner.stage),
    so whether a judgement times does not change what its spare starts."""
    import kgb.evaluate as evaluation

    class Engine:  # the harness's side of an engine: which spare each settings asks for
        def __init__(self):
            self.spares: dict[str, dict] = {}

        @contextmanager
        def evaluating(self, key):
            yield None

        def spares_wanted(self, key):
            return 1

        def start_spare(self, key, workdir, order):
            self.spares[key] = order
            shutil.rmtree(workdir)

    engine = Engine()
    for time_cases in ((), ("bench",)):
        settings = EvalSettings(device="cuda", case_tags=("bench",), time_cases=time_cases)
        with evaluation._workdir(engine, settings):
            pass
    assert len(engine.spares) == 1  # one key, one spare


def test_once_the_gpu_ran_out_of_memory_one_spare_waits_unless_one_caller_is_alone():
    from kgb.evaluate.engine import SEQUENTIAL_SPARES, SPARES_PER_SETTINGS, pool_size

    # one caller judging one candidate after another still finds a spare started in time
    assert SEQUENTIAL_SPARES == 2
    assert [pool_size(n, ran_out=False) for n in (0, 1, 3, 50)] == [2, 2, 3, SPARES_PER_SETTINGS]
    assert [pool_size(n, ran_out=True) for n in (0, 1, 2, 3, 16)] == [2, 2, 1, 1, 1]


def test_a_spare_sees_its_request_come_without_reading_it():
    """What stops a spare's warm-up (kgb.evaluate.spare._waiting): the engine's word on the
    order pipe, a request or its end, seen without consuming it."""
    from kgb.evaluate.spare import _next_order, _waiting

    r, w = os.pipe()
    assert not _waiting(r)
    os.write(w, b'{"request": "x"}\n')
    assert _waiting(r) and _waiting(r)  # looking leaves the line for the spare to read
    assert _next_order(r) == {"request": "x"}
    r, w = os.pipe()
    os.close(w)
    assert _waiting(r)  # the engine gone: the spare stops warming too
    os.close(r)


def test_a_gpu_spares_warm_up_is_traced_and_cut_short_by_its_request(monkeypatch, tmp_path):
    """The GPU branch of a spare's start, its CUDA work stubbed out, as far as the trace line
    benchmarks/gpu_trace.py reads: in session 69 a field named like trace()'s own argument
    killed every spare judge on the GPU, which no CPU test had started."""
    import torch

    from kgb.evaluate import comparison_kernels, draws, judge, kernel_clock, spare
    from kgb.evaluate.timing_lock import TRACE_ENV

    ran = []
    monkeypatch.setattr(judge, "start_candidate", lambda *a: "the candidate process")
    monkeypatch.setattr(judge, "_keep_out_of_the_workspace", lambda folder: None)
    monkeypatch.setattr(torch, "empty", lambda *a, **k: None)
    monkeypatch.setattr(kernel_clock, "warm_up", lambda: None)
    monkeypatch.setattr(draws, "warm_up", lambda device: None)
    monkeypatch.setattr(comparison_kernels, "_warm_up_calls", lambda device: [lambda i=i: ran.append(i) for i in range(4)])
    trace = tmp_path / "trace.jsonl"
    monkeypatch.setenv(TRACE_ENV, str(trace))
    assert spare.start("cuda", tmp_path / "w", None, asked=lambda: len(ran) == 2) == "the candidate process"
    assert spare.start("cuda", tmp_path / "w", None, asked=lambda: False) == "the candidate process"
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [(w["kind"], w["cut_short"]) for w in lines] == [("warm-up", True), ("warm-up", False)]
    assert len(ran) == 2 + 4
