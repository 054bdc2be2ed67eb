"""The check tool's dialects: kgb's lines, JSON, AutoKernel's and AKO4ALL's summary lines,
with nothing printed as a time where none was measured."""

from __future__ import annotations

import json

from kgb.agents.dialects import Dialect, render

TIMED = {"candidate": "c3-0a1b2c3d", "status": "correct", "compiled": True, "correct": True, "tests": "5/5",
         "speedup": 1.25, "kernel_us": 80.0, "baseline_us": 100.0, "baseline": "torch", "error": "", "note": "best so far"}
BROKEN = {**TIMED, "status": "compile_error", "compiled": False, "correct": False, "tests": "0/5", "speedup": None,
          "kernel_us": None, "baseline_us": None, "baseline": None, "error": "NameError: name 'tl' is not defined", "note": ""}


def test_autokernel_dialect_prints_its_greppable_summary_lines():
    assert render(TIMED, Dialect.AUTOKERNEL).splitlines() == [
        "kernel_candidate: c3-0a1b2c3d", "tests_passed: 5/5", "correctness: PASS", "kernel_latency_us: 80.00",
        "pytorch_latency_us: 100.00", "baseline: torch", "speedup_vs_pytorch: 1.250x", "note: best so far"]
    broken = render(BROKEN, Dialect.AUTOKERNEL).splitlines()
    assert "correctness: FAIL" in broken and "speedup_vs_pytorch: n/a" in broken and "kernel_latency_us: n/a" in broken
    assert broken[-1] == "ERROR: NameError: name 'tl' is not defined"


def test_ako_dialect_prints_times_in_milliseconds():
    assert render(TIMED, Dialect.AKO).splitlines()[:6] == [
        "COMPILED: True", "CORRECT: True", "RUNTIME: 0.0800", "REF_RUNTIME: 0.1000", "SPEEDUP: 1.250", "TESTS: 5/5"]
    broken = render(BROKEN, Dialect.AKO).splitlines()
    assert broken[:5] == ["COMPILED: False", "CORRECT: False", "RUNTIME: n/a", "REF_RUNTIME: n/a", "SPEEDUP: n/a"]


def test_kgb_and_json_dialects_keep_every_key():
    lines = render(BROKEN, Dialect.KGB).splitlines()
    assert lines[:3] == ["candidate: c3-0a1b2c3d", "status: compile_error", "compiled: no"]
    assert "speedup: n/a (not timed on this chip)" in lines and lines[-2:] == ["error: |", BROKEN["error"]]
    assert json.loads(render(TIMED, Dialect.JSON)) == TIMED
