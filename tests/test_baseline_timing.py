"""A case's baseline (kgb.evaluate.baseline): warmed up and captured when the judge asks it
to prepare, in a work section, so that the timing turn holds its measurement only; and a
routine that fails leaves the case without a speedup, never the judgement without a verdict."""

from __future__ import annotations

import pytest
import torch

from kgb.evaluate import baseline as module
from kgb.evaluate.baseline import BaselineTiming
from kgb.evaluate.phases import Phases
from kgb.evaluate.timing import Timing


@pytest.fixture
def steps(monkeypatch) -> list[str]:
    """What the baseline asked of kgb.evaluate.timing, in order (the timing itself needs a GPU)."""
    taken: list[str] = []

    def prepare(call, warmup):
        call()
        taken.append(f"prepare warmup={warmup}")
        return "prepared"

    def measure(prepared, repeats):
        taken.append(f"measure {prepared} repeats={repeats}")
        return Timing(median_us=12.5, spread=0.0, repeats=repeats, mode="eager")

    monkeypatch.setattr(module, "prepare", prepare)
    monkeypatch.setattr(module, "measure", measure)
    return taken


def test_the_warm_up_is_done_when_prepared_and_the_turn_only_measures(steps):
    calls = []
    phases = Phases()
    b = BaselineTiming(lambda: calls.append(1), repeats=100, warmup=10, phase=phases)
    b.prepare()
    assert steps == ["prepare warmup=10"] and calls == [1]
    b()
    assert steps == ["prepare warmup=10", "measure prepared repeats=100"]
    assert b.us == 12.5 and not b.missing and not b.broke
    assert {"baseline warm-up", "baseline timing"} <= set(phases.seconds)
    b()  # once timed, a second turn measures nothing
    assert len(steps) == 2


def test_a_baseline_not_prepared_before_its_turn_is_prepared_in_it(steps):
    b = BaselineTiming(lambda: None, repeats=20, warmup=3, phase=Phases())
    b()
    assert steps == ["prepare warmup=3", "measure prepared repeats=20"] and b.us == 12.5


@pytest.mark.parametrize(("error", "field"), [(ValueError("unsupported dtype"), "missing"),
                                              (torch.AcceleratorError("illegal memory access"), "broke")])
def test_a_routine_that_raises_while_warming_up_is_never_timed(steps, error, field):
    def call():
        raise error

    b = BaselineTiming(call, repeats=100, warmup=10, phase=Phases())
    b.prepare()
    b()
    assert b.done and b.us is None and str(error) in getattr(b, field)
    assert not [s for s in steps if s.startswith("measure")]
