"""The memory gate seats evaluations by what their operators' judgements held when last
measured (kgb.evaluate.held_memory), so that the few that hold tens of GB do not run
together and run out (on the H200, session 35: 8 evaluations of a run ran again after
running out among others)."""

from __future__ import annotations

import gzip
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import pytest

from kgb.evaluate import held_memory
from kgb.evaluate.gpus import MemoryGate


def table(tmp_path, mib: dict[str, int]):
    path = tmp_path / "judging_memory.json"
    path.write_text(json.dumps({"cuda": {"measured": "a test", "mib": mib}}))
    return path


def test_an_operator_is_expected_to_hold_its_measured_memory_and_its_contexts(tmp_path):
    path = table(tmp_path, {"a::small": 100, "a::mid": 300, "a::huge": 40_000})
    assert held_memory.expected_mib("a::huge", "cuda", path) == 40_000 + held_memory.CONTEXTS_MIB
    assert held_memory.expected_mib("a::new", "cuda", path) == 300 + held_memory.CONTEXTS_MIB, "the median"
    assert held_memory.expected_mib("a::small", "rocm", path) == 100 + held_memory.CONTEXTS_MIB
    assert held_memory.expected_mib("a::huge", "cpu", path) is None
    assert held_memory.expected_mib("a::huge", "cuda", tmp_path / "absent.json") is None


def _events(trials: list[tuple[str, str, str, dict]]) -> list[str]:
    lines = []
    for trial, op, status, mib in trials:
        lines.append(json.dumps({"kind": "TrialStarted", "trial": trial, "op": op}))
        lines.append(json.dumps({"kind": "CandidateEvaluated", "trial": trial,
                                 "verdict": {"status": status, "gpu_mib": mib}}))
    return lines


def test_the_table_is_refreshed_from_a_jobs_correct_verdicts_at_their_most(tmp_path):
    lines = _events([("t1", "a::x", "correct", {"judge": 900, "candidate": 600}),
                     ("t2", "a::x", "correct", {"judge": 1000, "candidate": 700}),
                     ("t3", "a::y", "wrong_output", {"judge": 50_000, "candidate": 10}),
                     ("t4", "a::z", "correct", {})])
    events = tmp_path / "events.jsonl.gz"
    events.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    held = held_memory.from_events(held_memory.read_lines(events))
    assert held == {"a::x": 1700}, "a failed verdict may end before its bench cases; a CPU one says nothing"
    refreshed = held_memory.refreshed(held, "cuda", "an H200", table(tmp_path, {"a::old": 1}))
    assert refreshed["cuda"] == {"measured": "an H200", "mib": {"a::x": 1700}}
    with pytest.raises(ValueError, match="no correct verdict"):
        held_memory.refreshed({}, "cuda", "an H200", tmp_path / "t.json")


def _wait_until(condition, limit_s: float = 30.0) -> None:
    deadline = time.monotonic() + limit_s
    while not condition() and time.monotonic() < deadline:
        threading.Event().wait(0.01)


def test_a_seat_waits_until_it_fits_beside_what_the_others_hold_and_seats_go_in_order():
    gate = MemoryGate(budget_mib=100)
    order: list[str] = []
    large = gate.seat(mib=70)
    large.__enter__()
    with gate.seat(mib=20):  # fits beside it: 90 of 100
        pass

    def take(name: str, mib: int) -> None:
        with gate.seat(mib=mib):
            order.append(name)

    with ThreadPoolExecutor(2) as pool:
        second_large = pool.submit(take, "second large", 60)
        _wait_until(lambda: len(gate._line) == 1)
        small = pool.submit(take, "small", 10)  # it would fit, but the large one asked first
        _wait_until(lambda: len(gate._line) == 2)
        assert order == []
        large.__exit__(None, None, None)
        second_large.result(timeout=10), small.result(timeout=10)
    assert order[0] == "second large"


def test_one_evaluation_alone_is_seated_however_much_it_is_expected_to_hold():
    gate = MemoryGate(budget_mib=100)
    with gate.seat(mib=500) as seat:
        assert seat.among == 1
    with gate.seat(mib=None), gate.seat(mib=None) as unknown:  # no figure: the count alone decides
        assert unknown.among == 2


def test_a_gate_with_no_budget_seats_by_count_alone(monkeypatch):
    gate = MemoryGate()
    monkeypatch.setattr("kgb.evaluate.gpus.memory_mib", lambda: [])  # nvidia-smi cannot say
    with gate.seat(mib=10**9), gate.seat(mib=10**9) as second:
        assert second.among == 2 and gate.budget_mib is None


def test_the_budget_is_a_share_of_every_gpus_memory(monkeypatch):
    from kgb.evaluate import gpus

    monkeypatch.setattr(gpus, "memory_mib", lambda: [143_771, 143_771])
    assert MemoryGate().budget_mib == int(2 * 143_771 * gpus.FILL)


def test_an_evaluation_asks_the_gate_for_its_operators_measured_memory(tmp_path, monkeypatch):
    import kgb.evaluate as evaluation
    from kgb import operators
    from kgb.evaluate import EvalSettings, evaluate

    asked: list[int | None] = []

    class Noting(MemoryGate):
        def seat(self, again=False, mib=None):
            asked.append(mib)
            return super().seat(again, mib)

    class Answering:  # a judge that writes no verdict: only the seat is looked at
        @contextmanager
        def evaluating(self, key):
            yield None

        def spares_wanted(self, key) -> int:
            return 0

        def run(self, request, log, env, timeout_s, spare=None) -> str:
            return "ok"

    @contextmanager
    def engine(settings):
        yield Answering()

    monkeypatch.setattr(evaluation, "_engine", engine)
    monkeypatch.setattr(evaluation.gpus, "memory", Noting(budget_mib=100_000))
    monkeypatch.setattr(held_memory, "TABLE", table(tmp_path, {"aten::add": 4321}))
    spec = operators.load("aten::add")
    evaluate(spec.solution_path.read_text(), spec, EvalSettings(device="cuda", case_tags=("smoke",)))
    evaluate(spec.solution_path.read_text(), spec, EvalSettings(device="cpu", case_tags=("smoke",)))
    assert asked == [4321 + held_memory.CONTEXTS_MIB, None]
