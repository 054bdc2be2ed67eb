"""The GPU's quiet gate (kgb.evaluate.quiet_gate, judge v31): CUDA starts and releases of memory
outside work sections share it, and a replay timed in a run again for a case timed by its first
call holds it whole, so that none of them runs beside that first call. Locks are taken on files,
between threads here as between processes."""

from __future__ import annotations

import threading
import time

from kgb.evaluate import quiet_gate
from kgb.evaluate.judge import start_candidate
from kgb.evaluate.sandbox import Limits


def test_a_replay_waits_for_the_starts_under_way_and_no_start_begins_while_it_holds_the_gate(tmp_path):
    gate = str(tmp_path / "kgb-timing-all.lock.quiet")
    assert quiet_gate.gate_of(str(tmp_path / "kgb-timing-all.lock")) == gate
    started, let_go = threading.Event(), threading.Event()

    def a_start() -> None:
        with quiet_gate.changing(gate):
            started.set()
            let_go.wait(5)

    other = threading.Thread(target=a_start)
    other.start()
    started.wait(5)
    threading.Timer(0.3, let_go.set).start()
    began = time.monotonic()
    with quiet_gate.alone(gate, wait_s=5) as (quiet, waited):
        assert quiet and 0.25 < waited < 3 and time.monotonic() - began >= 0.25  # the start ended first
        def late_start() -> None:
            with quiet_gate.changing(gate):
                pass

        late = threading.Thread(target=late_start)
        late.start()
        late.join(0.3)
        assert late.is_alive()  # a start asked for meanwhile waits for the measurement
    late.join(5)
    assert not late.is_alive()
    other.join(5)


def test_a_replay_waits_no_longer_than_it_may_and_says_it_was_not_alone(tmp_path):
    gate = str(tmp_path / "gate")
    with quiet_gate.changing(gate):  # a start that does not end
        with quiet_gate.alone(gate, wait_s=0.2) as (quiet, waited):
            assert not quiet and 0.2 <= waited < 1.5
    with quiet_gate.alone(None) as (quiet, waited):  # on the CPU: no gate
        assert (quiet, waited) == (False, 0.0)
    with quiet_gate.changing(None):
        pass


def test_changes_that_overlap_without_end_do_not_keep_a_replay_waiting(tmp_path):
    """Three threads change over and over, each beginning before the last ends, so the gate is
    never free of them: the replay shuts the door, the changes under way end, and it measures
    alone with none of them inside (session 55's H100: without the door, every wait ran out)."""
    gate, stop, inside = str(tmp_path / "gate"), threading.Event(), []

    def churn() -> None:
        while not stop.is_set():
            with quiet_gate.changing(gate):
                inside.append(1)
                time.sleep(0.05)
                inside.pop()

    threads = [threading.Thread(target=churn) for _ in range(3)]
    for i, thread in enumerate(threads):
        thread.start()
        time.sleep(0.017 * (i + 1))
    try:
        for _ in range(3):
            with quiet_gate.alone(gate, wait_s=2) as (quiet, waited):
                assert quiet and waited < 1.0
                for _ in range(5):
                    assert not inside  # no change began while the replay held the gate
                    time.sleep(0.02)
            let_go = time.monotonic()
            while not inside and time.monotonic() - let_go < 5:
                time.sleep(0.005)
            assert inside  # and they go on once it lets go
    finally:
        stop.set()
        for thread in threads:
            thread.join(5)


def _held_back(gate: str, action, seconds: float, limit_s: float) -> None:
    """`action` run in a thread while a replay holds the gate whole for `seconds`: it ends
    only once the gate is let go of."""
    done = []

    def run() -> None:
        action()
        done.append(time.monotonic())

    with quiet_gate.alone(gate, wait_s=1) as (quiet, _):
        assert quiet
        other = threading.Thread(target=run)
        other.start()
        time.sleep(seconds)
        held_until = time.monotonic()
        assert not done
    other.join(limit_s)
    assert done and done[0] >= held_until


def test_a_candidate_process_starts_holding_the_gate_shared(tmp_path):
    """A candidate process's start waits while a replay holds the gate whole."""
    gate = str(tmp_path / "gate")
    _held_back(gate, lambda: start_candidate("cpu", tmp_path / "workspace", Limits(cpu_s=60), gate).close(), 0.5, 60)


def test_a_judge_gives_memory_back_holding_the_gate_shared(tmp_path, monkeypatch):
    """CaseRunner.released: a release waits while a replay holds the gate whole."""
    from kgb import operators
    from kgb.evaluate import case_runner
    from kgb.evaluate.case_runner import CaseRunner

    runner = CaseRunner(operators.load("aten::add"), None, "cuda")
    runner.quiet_gate = str(tmp_path / "gate")
    monkeypatch.setattr(case_runner, "release_cached_memory", lambda device: True)
    _held_back(runner.quiet_gate, runner.released, 0.3, 5)
