"""A job starts its trials longest to judge first (kgb.trial_order), so that it does not end
on a long one running alone."""

from __future__ import annotations

import gzip
import json

import pytest

from kgb import operators, trial_order
from kgb.config import (
    ChipConfig,
    Config,
    EvalConfig,
    ExpertConfig,
    ModelConfig,
    SourceConfig,
    TrackingConfig,
)
from kgb.run import run_job
from kgb.tracking.events import TrialStarted
from kgb.tracking.log import read_events


def table(tmp_path, seconds: dict[str, dict[str, float]]):
    path = tmp_path / "judging_seconds.json"
    path.write_text(json.dumps({device: {"measured": "a test", "seconds": s} for device, s in seconds.items()}))
    return path


def test_longest_first_puts_unmeasured_operators_first_and_keeps_their_order(tmp_path):
    path = table(tmp_path, {"cuda": {"a::x": 3.0, "a::y": 30.0, "a::z": 0.5}})
    assert trial_order.longest_first(["a::x", "a::new1", "a::z", "a::y", "a::new2"], "cuda", path) == \
        ["a::new1", "a::new2", "a::y", "a::x", "a::z"]


def test_a_gpu_the_table_does_not_name_takes_the_cuda_order_and_the_cpu_only_its_own(tmp_path):
    path = table(tmp_path, {"cuda": {"a::x": 1.0, "a::y": 2.0}})
    assert trial_order.longest_first(["a::x", "a::y"], "rocm", path) == ["a::y", "a::x"]
    assert trial_order.longest_first(["a::x", "a::y"], "cpu", path) == ["a::x", "a::y"]


def test_refreshing_takes_only_correct_verdicts_and_keeps_the_other_devices(tmp_path):
    path = table(tmp_path, {"cpu": {"a::x": 1.0, "a::z": 4.0}})
    sweep = {"a::x": {"wall_s": 12.34, "status": "correct"}, "a::y": {"wall_s": 0.2, "status": "runtime_error"}}
    refreshed = trial_order.refreshed(sweep, "cuda", "an H200", path)
    assert refreshed["cuda"] == {"measured": "an H200", "seconds": {"a::x": 12.3}}
    assert refreshed["cpu"]["seconds"] == {"a::x": 1.0, "a::z": 4.0}
    # a job over some of a device's operators: the others keep theirs (until session 44 a job
    # over one new operator left the table with its one)
    refreshed = trial_order.refreshed(sweep, "cpu", "a laptop", path)
    assert refreshed["cpu"] == {"measured": "a test; a::x: a laptop", "seconds": {"a::x": 12.3, "a::z": 4.0}}
    with pytest.raises(ValueError, match="no correct verdict"):
        trial_order.refreshed({"a::y": sweep["a::y"]}, "cuda", "an H200", path)


def test_the_shipped_table_covers_every_operator_on_both_devices():
    ops = operators.select("all")
    for device in ("cuda", "cpu"):
        seconds = trial_order.judging_seconds(device)
        assert set(ops) <= set(seconds), sorted(set(ops) - set(seconds))


def test_a_job_starts_its_trials_longest_first(tmp_path, monkeypatch):
    ops = ["aten::asin", "aten::neg", "aten::t"]
    monkeypatch.setattr(trial_order, "TABLE", table(tmp_path, {"cpu": {"aten::asin": 1.0, "aten::neg": 3.0, "aten::t": 2.0}}))
    cfg = Config(method=ExpertConfig(concurrency=1), model=ModelConfig(), source=SourceConfig("aten"),
                 chip=ChipConfig(name="cpu", backend="cpu"), eval=EvalConfig(cases="smoke"),
                 tracking=TrackingConfig(root=str(tmp_path / "out")), ops=ops)
    assert run_job(cfg).correct == 3
    [log] = (tmp_path / "out").glob("jobs/*/events.jsonl")
    assert [e.op for e in read_events(log) if isinstance(e, TrialStarted)] == ["aten::neg", "aten::t", "aten::asin"]
    # the job's own log refreshes the table, gzipped as docs/results keeps logs or not
    kept = tmp_path / "events.jsonl.gz"
    kept.write_bytes(gzip.compress(log.read_bytes()))
    sweep = trial_order.sweep_of(kept)
    assert sweep == trial_order.sweep_of(log) and set(sweep) == set(ops)
    assert all(e["status"] == "correct" and 0 < e["wall_s"] < 300 for e in sweep.values())
    assert set(trial_order.refreshed(sweep, "cpu", "a test")["cpu"]["seconds"]) == set(ops)
