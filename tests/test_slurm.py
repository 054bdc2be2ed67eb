"""A mixed-chip sweep through a real SLURM cluster, routed by chip, preempted and requeued.

tests/slurm_cluster.py brings up munged, slurmctld, slurmd and slurmdbd (on a throwaway
MariaDB, for sacct) on this machine: one node in two partitions standing for two chips, `cpu` and `E` (the Iluvatar chip config, whose
`chip.slurm` names partition E and one GPU; this machine has no E, so E's trials end
`skipped`, as on any host without the chip). `python run.py -m chip=cpu,E
hydra/launcher=kgb_slurm` submits through sbatch. It skips, saying why, where Debian's
packages (slurm_cluster.PACKAGES) are absent or the tests do not run as root.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import slurm_cluster

from kgb.operators import REPO_ROOT
from kgb.tracking.events import CandidateEvaluated, RunFinished, RunStarted, TrialFinished
from kgb.tracking.log import read_events

OPS = ("aten::add", "aten::cos")
SWEEP_TIMEOUT_S = 240.0


def job_log(root: Path, chip: str) -> Path | None:
    found = list(root.glob(f"jobs/*-{chip}-*/events.jsonl"))
    assert len(found) <= 1, found
    return found[0] if found else None


def finished(log: Path | None) -> list[str]:
    return [e.trial for e in read_events(log) if isinstance(e, TrialFinished)] if log and log.exists() else []


def wait_for(ready: Callable[[], bool], what: str, deadline: float, sweep: subprocess.Popen | None = None) -> None:
    while not ready():
        if sweep is not None and sweep.poll() is not None:
            raise AssertionError(f"the sweep ended before {what}:\n{sweep.communicate()[0]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"waited too long for {what}")
        time.sleep(0.2)


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("KGB_SLURM"), reason="opt-in (KGB_SLURM=1, as root, with Debian's slurm, munge "
                    "and mariadb): sacct's record arrives late under load and the test can time out")
@pytest.mark.skipif(slurm_cluster.missing() is not None, reason=str(slurm_cluster.missing()))
def test_a_mixed_chip_sweep_on_slurm_runs_where_each_chip_is_and_a_requeued_job_resumes(tmp_path):
    with slurm_cluster.slurm_cluster(("cpu", "E")) as cluster:
        sweep = subprocess.Popen(
            [sys.executable, "run.py", "-m", "chip=cpu,E", f"ops=[{','.join(OPS)}]", "hydra/launcher=kgb_slurm", "method.concurrency=1",
             "hydra.launcher.partition=cpu",  # the cluster default for chips that name no partition
             f"tracking.root={tmp_path}", "tracking.mlflow=false", f"hydra.sweep.dir={tmp_path / 'sweep'}"],
            cwd=REPO_ROOT, env=cluster.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            deadline = time.monotonic() + SWEEP_TIMEOUT_S
            routes_file = tmp_path / "sweep" / "routes.json"
            wait_for(routes_file.exists, "routes.json", deadline, sweep)
            routes = {r["chip"]: r for r in json.loads(routes_file.read_text())}
            cpu_job, e_job = routes["cpu"]["scheduler_job"], routes["E"]["scheduler_job"]

            # preempt the cpu job mid-way, as its second trial starts: SLURM's USR2 to the
            # job's steps (what --signal=USR2@120 sends before a time limit or preemption);
            # submitit checkpoints and requeues it (`scontrol requeue`: the same job id)
            wait_for(lambda: len(finished(job_log(tmp_path, "cpu"))) >= 1, "the cpu job's first trial", deadline, sweep)
            cluster.run("scancel", "--signal=USR2", cpu_job)
            output = sweep.communicate(timeout=max(1.0, deadline - time.monotonic()))[0]
        finally:
            if sweep.poll() is None:
                sweep.kill()
                sweep.communicate()
        assert sweep.returncode == 0, f"{output}\n{cluster.tail()}"

        # SLURM's own record of where each job ran: sacct, from slurmdbd, which hears of a
        # job's end a moment after its result reached the launcher
        runs = lambda: [(r["JobID"], r["Partition"], r["NodeList"], r["GPUs"], r["State"])  # noqa: E731
                        for r in cluster.accounting(cpu_job, e_job)]
        wait_for(lambda: [r[-1] for r in runs()].count("COMPLETED") == 2, "sacct's record of both jobs",
                 time.monotonic() + 30)
        node = slurm_cluster.NODE
        assert sorted(runs()) == sorted([(e_job, "E", node, "1", "COMPLETED"),  # E's partition, E's gres
                                         (cpu_job, "cpu", node, "0", "REQUEUED"),
                                         (cpu_job, "cpu", node, "0", "COMPLETED")])

    # the shared store: every trial of both jobs there, each ending once as it should
    cpu_log, e_log = job_log(tmp_path, "cpu"), job_log(tmp_path, "E")
    events = read_events(cpu_log)
    ends: dict[str, list[str]] = {}
    for e in events:
        if isinstance(e, TrialFinished):
            ends.setdefault(e.trial, []).append(e.end.value)
    assert len(ends) == len(OPS) and all(trial_ends[-1] == "completed" for trial_ends in ends.values()), ends
    assert [e.end.value for e in read_events(e_log) if isinstance(e, TrialFinished)] == ["skipped"] * len(OPS)

    # the requeued job resumed: two starts under one SLURM job, each trial judged once
    starts = [e.config["placement"] for e in events if isinstance(e, RunStarted)]
    assert [(s["scheduler_job"], s["requeues"]) for s in starts] == [(cpu_job, 0), (cpu_job, 1)]
    evaluated = [e.trial for e in events if isinstance(e, CandidateEvaluated)]
    assert sorted(evaluated) == sorted(ends)  # each trial judged once: nothing paid twice
    assert isinstance(events[-1], RunFinished)
    (e_start,) = [e.config["placement"] for e in read_events(e_log) if isinstance(e, RunStarted)]
    assert (e_start["scheduler_job"], e_start["requeues"]) == (e_job, 0)

    # SLURM sends the preemption signal to every process of the job step, the judge's
    # engine included: the engine ignores it, so no trial in flight is logged as the
    # judge's failure before the requeue.
    interrupted = {trial: trial_ends for trial, trial_ends in ends.items() if len(trial_ends) > 1}
    assert not interrupted, f"a trial in flight at the preemption was logged as a failure: {interrupted}"
