"""Judges reserve GPU memory for their bench cases by what their operators' judgements held
when last measured (kgb.evaluate.held_memory, kgb.evaluate.memory_ledger), so that the few
that hold tens of GB do not time together and run out (on the H200, sessions 34-35: 4-14
evaluations of a first run ran again after running out among others)."""

from __future__ import annotations

import fcntl
import json
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from kgb.evaluate import held_memory, memory_ledger


def table(tmp_path, mib: dict[str, int]):
    path = tmp_path / "judging_memory.json"
    path.write_text(json.dumps({"cuda": {"measured": "a test", "mib": mib}}))
    return path


def test_an_operator_is_expected_to_hold_its_measured_memory(tmp_path):
    path = table(tmp_path, {"a::small": 100, "a::mid": 300, "a::huge": 40_000})
    assert held_memory.expected_mib("a::huge", "cuda", path) == 40_000
    assert held_memory.expected_mib("a::new", "cuda", path) == 300, "the median"
    assert held_memory.expected_mib("a::small", "rocm", path) == 100
    assert held_memory.expected_mib("a::huge", "cpu", path) is None
    assert held_memory.expected_mib("a::huge", "cuda", tmp_path / "absent.json") is None


def test_the_table_is_refreshed_from_a_jobs_correct_verdicts_at_their_most(tmp_path, job_log, monkeypatch):
    from kgb.evaluate import Status, Verdict

    def judged(status: str, mib: dict) -> Verdict:
        return Verdict(Status(status), "", device="cuda", gpu_mib=mib)

    log = job_log([("a::x", judged("correct", {"judge": 900, "candidate": 600})),
                   ("a::x", judged("correct", {"judge": 1000, "candidate": 700})),
                   ("a::y", judged("wrong_output", {"judge": 50_000, "candidate": 10})),
                   ("a::z", judged("correct", {}))])
    monkeypatch.setattr(held_memory, "TABLE", table(tmp_path, {"a::old": 1}))
    held_memory.main([str(log), "--measured", "an H200"])
    written = json.loads(held_memory.TABLE.read_text())
    # a failed verdict may end before its bench cases; a CPU one says nothing; the operators
    # the job did not judge keep their figures (until session 44 they were dropped)
    assert written["cuda"]["mib"] == {"a::old": 1, "a::x": 1700}
    assert written["cuda"]["measured"] == "a test; a::x: an H200"
    refreshed = held_memory.refreshed({"a::old": 2, "a::x": 1700}, "cuda", "an H200", table(tmp_path, {"a::old": 1}))
    assert refreshed["cuda"] == {"measured": "an H200", "mib": {"a::old": 2, "a::x": 1700}}  # all measured anew
    with pytest.raises(ValueError, match="no correct verdict"):
        held_memory.refreshed({}, "cuda", "an H200", tmp_path / "t.json")


@pytest.fixture
def processes():
    """Live processes whose identities ledgers take (one per judge, as in a sweep)."""
    started: list[subprocess.Popen] = []

    def key() -> str:
        p = subprocess.Popen(["sleep", "120"])
        started.append(p)
        return f"{p.pid}:{memory_ledger._start_time(p.pid)}"

    yield key
    for p in started:
        p.kill()
        p.wait()


def _ledger(path, budget: int, key: str) -> memory_ledger.Ledger:
    ledger = memory_ledger.Ledger(path, budget)
    ledger.key = key
    return ledger


def _wait_until(condition, limit_s: float = 30.0) -> None:
    deadline = time.monotonic() + limit_s
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)


def _book(path) -> dict:
    """The ledger as its judges read it: under its lock, never half written."""
    if not path.exists():
        return {}
    with open(path) as f:
        fcntl.flock(f, fcntl.LOCK_SH)
        text = f.read()
    return json.loads(text) if text else {}


def test_bench_reservations_wait_for_room_on_the_gpu_and_are_given_back(tmp_path, processes):
    path = tmp_path / "kgb-timing-0.lock.memory"
    a, b, c = (_ledger(path, 100, processes()) for _ in range(3))
    order: list[str] = []
    first = a.reserved(60)
    first.__enter__()
    try:
        with b.reserved(30), ThreadPoolExecutor(1) as pool:  # 90 of 100

            def third() -> None:
                with c.reserved(20):
                    order.append("c")

            waiting = pool.submit(third)
            try:
                _wait_until(lambda: c.key in _book(path))
                time.sleep(3 * memory_ledger.POLL_S)
                seen, book = list(order), _book(path)
            finally:
                order.append("a gives back")
                first.__exit__(None, None, None)  # the waiting one gets in, whatever failed
            waiting.result(timeout=10)
    finally:
        first.__exit__(None, None, None)  # a no-op if given back already
    assert seen == [] and book[c.key]["held"] is False
    assert order == ["a gives back", "c"]
    assert _book(path) == {}, "every reservation given back"


def test_a_judge_alone_is_never_kept_waiting_and_a_dead_judges_reservation_is_dropped(tmp_path, processes):
    path = tmp_path / "ledger"
    with _ledger(path, 100, processes()).reserved(500):
        assert len(_book(path)) == 1
    dead = subprocess.Popen(["true"])
    dead.wait()
    path.write_text(json.dumps({f"{dead.pid}:1": {"mib": 100, "asked": 0.0, "held": True}}))
    began = time.monotonic()
    with _ledger(path, 100, processes()).reserved(80):
        assert time.monotonic() - began < 5 and f"{dead.pid}:1" not in _book(path)


def test_reservations_are_held_in_the_order_asked_for(tmp_path, processes):
    """A small one asked after a large one that waits for room waits behind it, rather than
    pass it again and again."""
    path = tmp_path / "ledger"
    holder, large, small = (_ledger(path, 100, processes()) for _ in range(3))
    held_by: list[str] = []
    large_waiting_when_small_held: list[bool] = []

    def take(ledger, mib: int, name: str) -> None:
        with ledger.reserved(mib):
            if ledger is small:  # the large one held already, or held and given back
                book = _book(path)
                large_waiting_when_small_held.append(large.key in book and not book[large.key]["held"])
            held_by.append(name)

    holding = holder.reserved(50)
    holding.__enter__()
    with ThreadPoolExecutor(2) as pool:
        try:
            first = pool.submit(take, large, 60, "large")  # 110 of 100: it waits
            _wait_until(lambda: large.key in _book(path))
            later = pool.submit(take, small, 5, "small")  # it would fit, but asked later
            _wait_until(lambda: small.key in _book(path))
            time.sleep(3 * memory_ledger.POLL_S)
            seen = list(held_by)
        finally:
            holding.__exit__(None, None, None)  # the waiting ones get in, whatever failed
        first.result(timeout=10), later.result(timeout=10)
    assert seen == []
    # both fit together once the holder is gone: which of them gets on first after being
    # granted is the host's choice, but the small one is never granted before the large one
    assert sorted(held_by) == ["large", "small"] and large_waiting_when_small_held == [False]


def test_a_judge_reserves_for_its_bench_cases_only_on_a_gpu_with_a_figure():
    assert memory_ledger.for_request({"device": "cpu", "timing_lock": None, "gpu_mib": 100}) is None
    assert memory_ledger.for_request({"device": "cuda", "timing_lock": "/tmp/x.lock", "gpu_mib": None}) is None


def test_the_shipped_table_covers_every_operator():
    from kgb import operators

    missing = set(operators.select("all")) - set(held_memory.measured_mib("cuda"))
    assert not missing, sorted(missing)


def test_the_judges_trace_reports_the_waits_for_bench_memory(tmp_path, processes, monkeypatch):
    import sys
    from pathlib import Path

    from kgb.evaluate import timing_lock

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    import gpu_trace

    trace = tmp_path / "trace.jsonl"
    monkeypatch.setenv(timing_lock.TRACE_ENV, str(trace))
    with _ledger(tmp_path / "ledger", 100, processes()).reserved(40, tag="a::x"):
        pass
    report = gpu_trace.report(gpu_trace.read(trace))
    assert "bench memory reserved 1 times" in report and "a::x" in report
