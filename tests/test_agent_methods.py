"""The optimise-mode protocols' harness steps (keep or revert, restore on regression,
tables, strategy memory, baselines, targets) with the loop driver and a scripted model.

The CPU interpreter times nothing, so these tests replace the judge with one that reads a
speed from the candidate (`# SPEED=1.5`; `# BROKEN` is a wrong output) and returns timed
verdicts: what is tested is what each method does with the checks, not the judge, which
tests/test_agents.py and tests/test_evaluate.py run for real."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from agent_script import ADD, check, done, scripted, write
from fake_llm_server import Answer, FakeLLMServer, ToolCall
from test_agents import SECRET, events, job, model, of

from kgb.agents.config import (
    AikoConfig,
    AutokernelConfig,
    CudaOptimizedSkillConfig,
    IterativeConfig,
)
from kgb.evaluate import CaseResult, Status, Verdict
from kgb.run import run_job
from kgb.tracking.blobs import BlobStore
from kgb.tracking.events import (
    CandidateChecked,
    CandidateEvaluated,
    FinalKernelChosen,
    FinalRule,
    SessionFinished,
    ToolCalled,
    TrialEnd,
    TrialFinished,
    WorkspaceSnapshotted,
)


def timed_judge(source, spec, settings, baselines=None) -> Verdict:
    if "# BROKEN" in source:
        return Verdict(Status.WRONG_OUTPUT, "case smoke-f32: 12 of 40 elements outside tolerance",
                       (CaseResult("smoke-f32", "smoke", Status.WRONG_OUTPUT, "12 of 40 elements outside tolerance"),))
    match = re.search(r"# SPEED=([\d.]+)", source)
    speed = float(match.group(1)) if match else 1.0
    case = CaseResult("bench-1", "bench", Status.CORRECT, latency_us=100.0 / speed, baseline_us=100.0)
    return Verdict(Status.CORRECT, "all cases correct", (case,), baseline="torch")


@pytest.fixture(autouse=True)
def fake_judge(monkeypatch):
    monkeypatch.setattr("kgb.agents.checks.evaluate", timed_judge)
    monkeypatch.setattr("kgb.trial.evaluate", timed_judge)
    monkeypatch.setenv("KGB_TEST_KEY", SECRET)


def at(speed: float | None) -> str:
    return ADD + ("# BROKEN\n" if speed is None else f"# SPEED={speed}\n")


def files(root: Path, evs, which: int = -1) -> dict[str, str]:
    """The workspace's files in a snapshot of the log (the last by default)."""
    blobs = BlobStore(root / "blobs")
    manifest = json.loads(blobs.get(of(WorkspaceSnapshotted, evs)[which].manifest_blob))
    return {path: blobs.get(h) for path, h in manifest.items()}


def final_speedup(evs) -> float:
    [judged] = of(CandidateEvaluated, evs)
    return round(judged.verdict.speedup, 6)


def test_autokernel_keeps_only_gains_reverts_the_rest_and_stops_on_a_plateau(tmp_path):
    plan = {1: 1.0, 2: 1.02, 3: 1.5, 4: None, 5: 1.4, 6: 3.0}  # 6 is never reached: plateau after 4 and 5
    script = {f"experiment {e}": [write(at(s)), done(f"experiment {e}")] for e, s in plan.items()}
    method = AutokernelConfig(experiments=6, min_gain=0.05, target_speedup=2.0, plateau=2)
    with FakeLLMServer(scripted(script)) as server:
        run_job(job(method, model(server, "anthropic"), tmp_path))
        assert len(server.calls) == 10
    evs = events(tmp_path)
    checks = of(CandidateChecked, evs)
    assert [c.verdict.speedup and round(c.verdict.speedup, 2) for c in checks] == [1.0, 1.02, 1.5, None, 1.4]
    table = files(tmp_path, evs)["EXPERIMENTS.md"]
    outcomes = [row.split("|")[5].strip() for row in table.splitlines()[4:]]
    assert outcomes == ["kept", f"reverted to {checks[0].candidate}", "kept", f"reverted to {checks[2].candidate}",
                        f"reverted to {checks[2].candidate}"]
    assert files(tmp_path, evs)["kernel.py"] == at(1.5)  # the best kept version after the last revert
    [final] = of(FinalKernelChosen, evs)
    assert final.rule == FinalRule.BEST_CHECK and final_speedup(evs) == 1.5


def test_aiko_logs_each_iteration_and_restores_the_best_on_regression(tmp_path):
    notes: list[str] = []

    def note_then(answer: Answer):
        def step(call):
            notes.append(next(line for line in call.tool_results[0].splitlines() if line.startswith("note:")))
            return answer
        return step

    script = {"agent": [write(at(1.0)), check(), note_then(write(at(None))), check(), note_then(write(at(1.2))), check(),
                        note_then(Answer("", tools=(ToolCall("edit_file", {"path": "kernel.py", "old": "SPEED=1.2",
                                                                            "new": "SPEED=1.1"}),))),
                        check(), note_then(done())]}
    method = AikoConfig(iterations=4, target_speedup=2.0)
    with FakeLLMServer(scripted(script)) as server:
        run_job(job(method, model(server, "openai"), tmp_path))
    evs = events(tmp_path)
    last = BlobStore(tmp_path / "blobs").get(of(ToolCalled, evs)[-1].result_blob)  # the session stops after it
    notes.append(next(line for line in last.splitlines() if line.startswith("note:")))
    assert len(notes) == 4 and notes[0] == notes[2] == "note: best so far"
    assert notes[1].startswith("note: regression: kernel.py restored to iteration 1")
    assert notes[3].startswith("note: regression: kernel.py restored to iteration 3") and "4 iterations spent: stop now" in notes[3]
    [session] = of(SessionFinished, evs)
    assert session.end.value == "stopped" and session.reason == "4 iterations spent"
    workspace = files(tmp_path, evs)
    assert workspace["kernel.py"] == at(1.2)
    rows = workspace["ITERATIONS.md"].splitlines()[4:]
    assert [r.split("|")[1].strip() for r in rows] == ["0", "1", "2", "3", "4"] and "empty kernel.py" in rows[0]
    assert final_speedup(evs) == 1.2


def test_iterative_stops_at_the_target_and_keeps_a_performance_table(tmp_path):
    script = {"session 1": [write(at(1.1)), check(), done()], "session 2": [write(at(1.6)), done()],
              "session 3": [write(at(9.0)), done()]}
    with FakeLLMServer(scripted(script)) as server:
        run_job(job(IterativeConfig(sessions=3, target_speedup=1.5), model(server, "anthropic"), tmp_path))
        assert len(server.calls) == 5  # session 3 never starts
    evs = events(tmp_path)
    table = files(tmp_path, evs)["PERFORMANCE.md"].splitlines()[4:]
    assert [(r.split("|")[1].strip(), r.split("|")[5].strip()) for r in table] == [("1", "1.100"), ("2", "1.600")]
    assert [t.tool for t in of(ToolCalled, evs)] == ["write_file", "check", "write_file"]
    assert final_speedup(evs) == 1.6


def test_cuda_optimized_skill_starts_from_a_baseline_and_remembers_strategies(tmp_path):
    from kgb.config import ExpertConfig

    earlier = tmp_path / "earlier"
    with FakeLLMServer(scripted({})) as server:  # the expert method calls no model
        run_job(job(ExpertConfig(), model(server, "anthropic"), earlier))

    def propose(tags: str, speed: float):
        return [Answer("", tools=(ToolCall("write_file", {"path": "PROPOSAL.md", "content": f"Memory bound.\ntags: {tags}\n"}),)),
                write(at(speed)), done()]

    script = {"session 1": propose("tiling, Vectorize", 0.8), "session 2": propose("fusion", 2.5)}
    method = CudaOptimizedSkillConfig(sessions=4, target_speedup=2.0, baseline=str(earlier))
    with FakeLLMServer(scripted(script)) as server:
        run_job(job(method, model(server, "anthropic"), tmp_path / "out"))
        assert len(server.calls) == 6
    evs = events(tmp_path / "out")
    assert of(WorkspaceSnapshotted, evs)[0].reason.startswith("start: baseline from job expert-")
    memory = files(tmp_path / "out", evs)["STRATEGIES.md"].splitlines()[4:]
    assert [[c.strip() for c in r.split("|")[1:7:5]] + [r.split("|")[2].strip()] for r in memory] == [
        ["1", "reverted to " + of(CandidateChecked, evs)[0].candidate, "tiling, vectorize"],
        ["2", "kept: the new best", "fusion"]]
    assert final_speedup(evs) == 2.5
    [end] = of(TrialFinished, evs)
    assert end.end == TrialEnd.COMPLETED


def noisy_judge(calls: list[str]):
    """timed_judge whose every judgement reads 10% faster than the one before: the GPU's noise,
    which a source judged twice would draw twice."""
    def judge(source, spec, settings, baselines=None) -> Verdict:
        calls.append(source)
        v = timed_judge(source, spec, settings, baselines)
        faster = tuple(dataclasses.replace(c, latency_us=c.latency_us / 1.1 ** len(calls)) for c in v.cases)
        return dataclasses.replace(v, cases=faster)
    return judge


def test_a_source_checked_before_is_not_judged_again_nor_its_noise_kept(tmp_path, monkeypatch):
    """iterative's harness checked after each session the kernel the agent had just checked,
    and autokernel's the kernel of an experiment that changed nothing: a judge call each for
    nothing new, and a fresh draw of the timing noise, which made a no-op experiment a gain."""
    calls: list[str] = []
    monkeypatch.setattr("kgb.agents.checks.evaluate", noisy_judge(calls))
    script = {"session 1": [write(at(1.1)), check(), check(), done()]}
    with FakeLLMServer(scripted(script)) as server:
        run_job(job(IterativeConfig(sessions=1, target_speedup=9.0), model(server, "anthropic"), tmp_path / "it"))
    evs = events(tmp_path / "it")
    [checked] = of(CandidateChecked, evs)  # the agent's two checks and the harness's: one judgement
    assert calls == [at(1.1)]
    blobs = BlobStore(tmp_path / "it" / "blobs")
    [first, again] = [dict(line.split(": ", 1) for line in blobs.get(t.result_blob).splitlines() if ": " in line)
                      for t in of(ToolCalled, evs) if t.tool == "check"]
    assert first["candidate"] == again["candidate"] == checked.candidate and first["speedup"] == again["speedup"]
    assert "checked before: its verdict, not judged again" in again["note"]

    calls.clear()
    script = {"experiment 1": [write(at(1.0)), done("experiment 1")], "experiment 2": [done("experiment 2")]}
    method = AutokernelConfig(experiments=2, min_gain=0.05, target_speedup=9.0, plateau=5)
    with FakeLLMServer(scripted(script)) as server:
        run_job(job(method, model(server, "anthropic"), tmp_path / "ak"))
    evs = events(tmp_path / "ak")
    outcomes = [row.split("|")[5].strip() for row in files(tmp_path / "ak", evs)["EXPERIMENTS.md"].splitlines()[4:]]
    assert len(calls) == 1 and len(of(CandidateChecked, evs)) == 1
    assert outcomes == ["kept", f"reverted to {of(CandidateChecked, evs)[0].candidate}"]  # 10% faster by noise once


def test_the_harness_checks_failure_is_in_the_trials_transcript_and_checks(tmp_path):
    """iterative's harness checks kernel.py after each session; the agent never sees that
    check's message in a tool result, and until session 51 MLflow showed only its status."""
    from kgb.agents.projection import agent_view, transcript

    script = {"session 1": [write(at(None)), done()], "session 2": [write(at(1.2)), done()]}
    with FakeLLMServer(scripted(script)) as server:
        run_job(job(IterativeConfig(sessions=2, target_speedup=9.0), model(server, "anthropic"), tmp_path))
    evs = events(tmp_path)
    view = agent_view(evs)
    failed, passed = view.checks
    assert (failed.by, failed.status, passed.by) == ("harness: session 1", "wrong_output", "harness: session 2")
    assert failed.message == "case smoke-f32: 12 of 40 elements outside tolerance" and passed.correct
    text = transcript(view.events, BlobStore(tmp_path / "blobs"), view.calls)
    assert (f"**harness: session 1's check** {failed.candidate}: wrong_output: case smoke-f32: 12 of 40 "
            "elements outside tolerance") in text
    assert f"**harness: session 2's check** {passed.candidate}: correct, speedup 1.2" in text
