"""Many hosts: one shared store, and a sweep routed to the hosts that have each chip.

The store test brings up a real PostgreSQL cluster and a real `mlflow server` on it
(tests/store_server.py) and runs two kgb jobs at once against it, as two hosts would: two
processes, one shared tracking root (the NFS mount of docs/many-hosts.md), one tracking
URI. It skips, saying why, where Debian's postgresql or the psycopg driver is absent.
"""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
import store_server
import torch

from kgb.operators import REPO_ROOT
from kgb.tracking.events import RunFinished, TrialFinished
from kgb.tracking.log import read_events

JOBS = {"aten::add,aten::cos": 2, "aten::cosh,aten::eq": 2}  # two jobs: their operators and trial counts


def kgb(*args: str, **popen) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, *args], cwd=REPO_ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, **popen)


def finished_trials(root: Path) -> dict[str, set[str]]:
    """Trial keys finished per job, from the event logs (the source of truth)."""
    return {path.parent.name: {e.trial for e in read_events(path) if isinstance(e, TrialFinished)}
            for path in root.glob("jobs/*/events.jsonl")}


@pytest.mark.slow
@pytest.mark.skipif(store_server.missing() is not None, reason=str(store_server.missing()))
def test_two_hosts_project_into_one_mlflow_server_on_postgresql(tmp_path, capsys, monkeypatch):
    from mlflow.tracking import MlflowClient

    from kgb.launch.__main__ import main as launch_main
    from kgb.query import trial_runs
    from kgb.query.__main__ import main as query_main

    # MLflow's GenAI job runner: eight more processes importing mlflow, which kgb never uses
    monkeypatch.setenv("MLFLOW_SERVER_ENABLE_JOB_EXECUTION", "false")
    with store_server.shared_store() as store:
        # no setup step: both hosts find a fresh server and race to create the experiment
        hosts = [kgb("run.py", "chip=cpu", f"ops=[{ops}]", f"tracking.root={tmp_path}", f"tracking.uri={store.uri}")
                 for ops in JOBS]
        outputs = [host.communicate(timeout=600)[0] for host in hosts]
        for host, output in zip(hosts, outputs, strict=True):
            assert host.returncode == 0, output
        assert [e.name for e in MlflowClient(store.uri).search_experiments()].count("kgb") == 1
        assert launch_main(["store", "--tracking-uri", store.uri]) == 0  # docs/many-hosts.md's check step

        logged = finished_trials(tmp_path)
        assert sorted(len(keys) for keys in logged.values()) == sorted(JOBS.values())
        runs = trial_runs(store.uri)
        projected: dict[str, list[str]] = {}
        for run in runs:
            projected.setdefault(run.data.tags["kgb.job"], []).append(run.data.tags["kgb.trial"])
        # every trial of both jobs is there, once
        assert {job: sorted(keys) for job, keys in projected.items()} == {job: sorted(keys) for job, keys in logged.items()}
        assert {run.data.tags["kgb.status"] for run in runs} == {"correct"}
        # the artifacts went to the shared root, where any host (and the server) reads them
        kernels = list(store.artifacts.rglob("kernel.py"))
        assert len(kernels) == sum(JOBS.values())
        assert all(run.info.artifact_uri.startswith(store.artifacts.as_uri()) for run in runs)
        for job in logged:
            assert any(isinstance(e, RunFinished) for e in read_events(tmp_path / "jobs" / job / "events.jsonl"))

        capsys.readouterr()
        assert query_main(["leaderboard", "--format", "csv", "--tracking-uri", store.uri]) == 0
        rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
        assert [(r["method"], r["chip"], r["trials"], r["correct"]) for r in rows] == [("expert", "cpu", "4", "4")]
        assert query_main(["best", "--op", "aten::cosh", "--chip", "cpu", "--dest", str(tmp_path / "best"),
                           "--tracking-uri", store.uri]) == 0
        assert "@triton.jit" in (tmp_path / "best" / "kernel.py").read_text()


# --- routing by chip --------------------------------------------------------------------

def launcher_settings(**given) -> dict:
    """hydra.launcher's settings for hydra/launcher=kgb_slurm, as the launcher receives them."""
    from omegaconf import OmegaConf

    from hydra_plugins.kgb_launcher.routed_launcher import RoutedSlurmConf

    conf = OmegaConf.to_container(OmegaConf.structured(RoutedSlurmConf))
    return {**{k: v for k, v in conf.items() if k not in ("_target_", "cluster")},
            "submitit_folder": given.pop("folder"), "name": "run", **given}


def routes_of(*jobs: list[str]):
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from kgb.config import CONF_DIR, register
    from kgb.launch.routing import Route

    register()
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        return [Route.of(i, overrides, OmegaConf.to_container(compose("config", overrides).chip))
                for i, overrides in enumerate(jobs)]


def test_each_job_is_submitted_where_its_chip_says(tmp_path, monkeypatch):
    """A sweep over chips: each group of jobs gets its chip's SLURM settings over the
    launcher's, and submitit's own SLURM executor writes them into the job's sbatch script
    (the script sbatch would receive; no cluster here, so nothing is submitted)."""
    from hydra_plugins.kgb_launcher.routed_launcher import RoutedSlurmLauncher
    from kgb.launch.routing import group

    routes = routes_of(["chip=nvidia", "method=expert"], ["chip=E", "chip.slurm.constraint=corex"],
                       ["chip=cpu"], ["chip=nvidia", "method=files", "method.dir=k"])
    assert [(r.chip, r.slurm) for r in routes] == [
        ("nvidia", {"partition": "nvidia", "gres": "gpu:1"}),
        ("E", {"partition": "E", "gres": "gpu:1", "constraint": "corex"}),
        ("cpu", {}),
        ("nvidia", {"partition": "nvidia", "gres": "gpu:1"}),
    ]
    settings = launcher_settings(folder=str(tmp_path / "%j"), partition="batch", account="kgb-team", timeout_min=240)
    groups = group(routes, settings)
    assert [[r.index for r in g.routes] for g in groups] == [[0, 3], [1], [2]]  # the two nvidia jobs: one array

    # submitit's SLURM executor looks for srun before anything else: one that is never run
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "srun").write_text("#!/bin/sh\nexit 1\n")
    (tmp_path / "bin" / "srun").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    launcher = RoutedSlurmLauncher(cluster="slurm", **settings)
    scripts = [launcher.executor(g)._executor._make_submission_file_text("python -m submitit.core._submit", "x")
               for g in groups]

    def sbatch(script: str) -> dict[str, str]:
        lines = [line.removeprefix("#SBATCH --") for line in script.splitlines() if line.startswith("#SBATCH --")]
        return dict(line.split("=", 1) for line in lines if "=" in line)

    nvidia, e, cpu = (sbatch(s) for s in scripts)
    assert (nvidia["partition"], nvidia["gres"], nvidia["account"], nvidia["time"]) == ("nvidia", "gpu:1", "kgb-team", "240")
    assert (e["partition"], e["gres"], e["constraint"]) == ("E", "gpu:1", "corex")
    assert cpu["partition"] == "batch" and "gres" not in cpu  # no slurm settings: the launcher's own
    assert "constraint" not in nvidia
    # a preempted or timed-out job is signalled before it ends, and requeued (kgb resumes it)
    assert e["signal"] == "USR2@120" and launcher.executor(groups[1])._executor.max_num_timeout == 3


@pytest.mark.slow
def test_a_mixed_chip_sweep_runs_each_job_once_and_a_preempted_job_resumes(tmp_path):
    """`python run.py -m chip=cpu,E hydra/launcher=kgb_slurm` through submitit's local
    executor (real processes, the same submission path as SLURM's but without sbatch): each
    job is recorded with its chip's settings in routes.json, E's trials are skipped here
    (this machine has no E), and the cpu job, preempted after its first trial (the USR2
    signal SLURM sends), is requeued, resumes from its event log and says it was requeued."""
    import json
    import signal
    import time

    from kgb.tracking.events import CandidateEvaluated, RunStarted

    # One trial at a time, and a second one that takes seconds (sort), so that it is still in
    # flight when the signal comes: a signal while submitit saves a finished job's result
    # fails in submitit itself ("A temporary saved file already exists").
    sweep = kgb("run.py", "-m", "chip=cpu,E", "ops=[aten::add,aten::sort]", "hydra/launcher=kgb_slurm",
                "method.concurrency=1",
                "hydra.launcher.cluster=local", f"tracking.root={tmp_path}", "tracking.mlflow=false",
                f"hydra.sweep.dir={tmp_path / 'sweep'}", start_new_session=True)
    try:
        routes_file = tmp_path / "sweep" / "routes.json"
        deadline = time.monotonic() + 300
        while not routes_file.exists() and time.monotonic() < deadline and sweep.poll() is None:
            time.sleep(0.2)
        routes = {r["chip"]: r for r in json.loads(routes_file.read_text())}
        assert routes["E"]["params"]["partition"] == "E" and routes["E"]["params"]["gres"] == "gpu:1"
        assert "partition" not in routes["cpu"]["params"]
        # the local executor's job id is its controller's pid; the job runs in its child
        controller = int(routes["cpu"]["scheduler_job"])
        cpu_log = lambda: [p for p in tmp_path.glob("jobs/*-cpu-*/events.jsonl")]  # noqa: E731
        while time.monotonic() < deadline and not (cpu_log() and finished_trials(tmp_path).get(cpu_log()[0].parent.name)):
            time.sleep(0.2)
        children = Path(f"/proc/{controller}/task/{controller}/children").read_text().split()
        assert len(children) == 1, children
        os.kill(int(children[0]), signal.SIGUSR2)
        output = sweep.communicate(timeout=600)[0]
    finally:
        if sweep.poll() is None:
            os.killpg(sweep.pid, signal.SIGKILL)
    assert sweep.returncode == 0, output

    events = read_events(cpu_log()[0])
    starts = [e for e in events if isinstance(e, RunStarted)]
    assert [s.config["placement"]["requeues"] for s in starts] == [0, 1]
    assert {s.config["placement"]["scheduler_job"] for s in starts} == {str(controller)}
    evaluated = [e.trial for e in events if isinstance(e, CandidateEvaluated)]
    assert len(evaluated) == len(set(evaluated)) == 2  # each trial judged once: nothing paid twice
    assert isinstance(events[-1], RunFinished)

    (e_log,) = tmp_path.glob("jobs/*-E-*/events.jsonl")
    ends = [e for e in read_events(e_log) if isinstance(e, TrialFinished)]
    assert [e.end.value for e in ends] == ["skipped", "skipped"]


# --- chip=auto ------------------------------------------------------------------------

@pytest.fixture
def fake_tools(tmp_path, monkeypatch):
    """Put fake vendor tools (never run: only found) first on PATH."""
    def put(*names: str) -> None:
        (tmp_path / "bin").mkdir(exist_ok=True)
        for name in names:
            (tmp_path / "bin" / name).write_text("#!/bin/sh\nexit 1\n")
            (tmp_path / "bin" / name).chmod(0o755)
        monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    return put


@pytest.mark.parametrize(("device", "hip", "chip", "vendor"), [
    ("NVIDIA H200", None, "nvidia", "NVIDIA"),
    ("Iluvatar BI-V150", None, "E", "Iluvatar CoreX"),
    ("MetaX C500", None, "metax", "MetaX"),
    ("AMD Instinct MI300X", "6.2", "rocm", "AMD (ROCm)"),
    ("Hygon DCU K100_AI", "6.2", "rocm", "Hygon DCU (ROCm)"),
])
def test_auto_recognises_a_cuda_style_device_by_its_name(monkeypatch, device, hip, chip, vendor):
    from kgb import chips

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: device)
    monkeypatch.setattr(torch.version, "hip", hip)
    found = chips.recognise()
    assert (found.platform.vendor, found.usable, chips.detect()) == (vendor, True, chip)
    assert repr(device) in chips.describe(found)


def test_auto_names_what_it_saw_where_it_cannot_run(monkeypatch, fake_tools, tmp_path):
    from kgb import chips

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    fake_tools()
    nothing = chips.recognise()
    assert (nothing.platform, chips.detect()) == (None, "cpu")
    assert "no vendor tool is on PATH" in chips.describe(nothing)

    # a CoreX host whose PyTorch is the CPU build: found by its tool, not run on
    fake_tools("ixsmi")
    found = chips.recognise()
    assert (found.platform.chip, found.usable, chips.detect()) == ("E", False, "cpu")
    assert "ixsmi (Iluvatar CoreX) on PATH" in chips.describe(found)

    # an Ascend host: torch_npu is importable; kgb's judge cannot time it yet, so it says so
    (tmp_path / "site" / "torch_npu").mkdir(parents=True)
    (tmp_path / "site" / "torch_npu" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    found = chips.recognise()
    assert (found.platform.chip, found.usable, chips.detect()) == ("B", False, "cpu")
    assert "kgb cannot run on it yet" in chips.describe(found) and "torch_npu" in found.saw
