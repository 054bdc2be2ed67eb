"""Asking the warm engine for a few operators' baselines alone, ahead of their trials: the harness's
side of kgb.evaluate.baseline_judge (why, and how the judge takes only the GPU's idle time).

The judge is forked for the request, never a spare: a spare has a candidate process started,
and this request has no candidate. Its answer is what it measured and why it stopped early, if
it did; the job logs the measurements (kgb.tracking.baselines.BaselineBook.record_ahead).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path

from kgb.evaluate import _engine, _judging, _one_gpu, _readable_log, _result_records, workdirs
from kgb.evaluate.environment import workspace_env
from kgb.evaluate.tree_removal import remove_tree
from kgb.evaluate.verdict import EvalSettings, Turn
from kgb.operators import Spec

TASK = "baselines"  # the request's `task`: kgb.evaluate.judge hands it to kgb.evaluate.baseline_judge
# At most this long for each operator of a request: its longest bench cases take seconds, and a
# judge that runs on past this has stopped looking at the GPU's idle time at all.
TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Measured:
    """One case's baseline, as the judge timed it."""

    op: str
    case: str
    baseline: str  # which baseline ("torch", "libcublas")
    latency_us: float
    mode: str  # "eager" or "graph" and the timing's note, as a case's baseline_mode
    turn: Turn


@dataclass(frozen=True)
class Ahead:
    """What one request measured, in order, and why it stopped before its last operator ("" where
    it did not). Cases it could not time (a routine this library cannot run) are not there: a
    trial's judge tries them again."""

    measured: tuple[Measured, ...]
    stopped: str


def measure_ahead(specs: list[Spec], settings: EvalSettings, known: dict[str, dict[str, float]],
                  abort: threading.Event | None = None) -> Ahead:
    """The baselines of the timed cases of `specs` that `known` (by operator) lacks, timed in
    the GPU's idle time by one judge of the warm engine. `abort`: set, the judge is killed (the
    job has ended); what it logged before is kept."""
    from kgb.evaluate.held_memory import expected_mib  # here: the module is also run as a script

    with _one_gpu(settings) as settings, _engine(settings) as engine:
        workdir = workdirs.new()
        try:
            result = workdir / "result.jsonl"
            request = {
                "task": TASK,
                "operators": [{"spec": str(spec.path), "gpu_mib": expected_mib(spec.id, settings.device),
                               "baselines": {str(k): float(v) for k, v in known.get(spec.id, {}).items()}}
                              for spec in specs],
                "workspace": str(workdir / "candidate"),
                **_judging(settings),
                "result": str(result),
            }
            (workdir / "request.json").write_text(json.dumps(request))
            log = workdir / "stderr.log"
            env = {**settings.extra_env, **workspace_env(workdir / "candidate")}
            outcome = engine.run(workdir / "request.json", log, env, TIMEOUT_S * len(specs), abort=abort)
            return _read(result, outcome, _readable_log(log))
        finally:
            remove_tree(workdir)


def _read(path: Path, outcome: str, logs: str) -> Ahead:
    """The judge's answer; the cases it measured before it died, if it did, with why."""
    cases, final = _result_records(path)
    measured = tuple(Measured(c["op"], c["name"], c["baseline"], float(c["baseline_us"]), c["mode"] or "",
                              Turn(c["turn"])) for c in cases if c.get("baseline_us") is not None and c.get("turn"))
    if final is not None and outcome == "ok":
        return Ahead(measured, final["stopped"])
    last = logs.strip().splitlines()[-1] if logs.strip() else "no output"
    return Ahead(measured, f"the judge ended: {outcome} ({last})")
