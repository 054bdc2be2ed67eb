"""End to end through `python run.py`: multirun, resume, kill -9, rebuild, idempotent projection.

These run the real entry point in subprocesses, evaluating kernels in the Triton
interpreter and projecting into a temporary SQLite MLflow store.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient
from test_errors import _as_from_a_terminal

from kgb.operators import REPO_ROOT
from kgb.query import trial_rows, trial_runs
from kgb.query.leaderboard import render, rows
from kgb.tracking.blobs import BlobStore
from kgb.tracking.events import CandidateEvaluated, TrialFinished
from kgb.tracking.log import read_events
from kgb.tracking.mlflow_projection import MlflowProjection

pytestmark = pytest.mark.slow
SOFTMAX = REPO_ROOT / "operators/aten/softmax/solution.py"
ADD = REPO_ROOT / "operators/aten/add/solution.py"


def kgb_run(*overrides: str, root: Path, multirun: bool = False, **popen) -> subprocess.CompletedProcess | subprocess.Popen:
    cmd = [sys.executable, "run.py", *(["-m"] if multirun else []), f"tracking.root={root}", *overrides]
    if popen:
        # as from a shell, SIGINT at its default: a suite started in the background (`./.ci/run &`)
        # has it ignored, and every process it starts inherits that, so Ctrl-C would not end the job
        return subprocess.Popen(cmd, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                                preexec_fn=_as_from_a_terminal)
    done = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def uri(root: Path) -> str:
    return f"sqlite:///{root / 'mlflow.db'}"


def all_events(root: Path):
    return [e for path in sorted(root.glob("jobs/*/events.jsonl")) for e in read_events(path)]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """A multirun over two methods and two sources, with user kernels for some operators."""
    root = tmp_path_factory.mktemp("sweep")
    kernels = root / "kernels"
    kernels.mkdir()
    (kernels / "aten__softmax.py").write_text(SOFTMAX.read_text())
    # a wrong rms_norm: scales by weight + 1
    wrong = (REPO_ROOT / "operators/vllm/rms_norm/solution.py").read_text()
    (kernels / "vllm__rms_norm.py").write_text(wrong.replace("* w[None, :]", "* (w[None, :] + 1.0)"))
    args = ("method=expert,files", f"method.dir={kernels}", "source=aten,vllm", "chip=cpu",
            "ops=[aten::softmax,aten::add,vllm::rms_norm]")
    first = kgb_run(*args, root=root, multirun=True)
    return root, args, first


def test_multirun_makes_one_job_per_combination(sweep):
    root, _, first = sweep
    table = {(r.method.split()[0], r.source): r for r in rows(trial_rows(uri(root)))}
    assert set(table) == {("expert", "aten"), ("expert", "vllm"), ("files", "aten"), ("files", "vllm")}
    # a files job's row names its folder: another user's kernels would be another row
    assert table["files", "aten"].method == f"files dir={root / 'kernels'}" and table["expert", "aten"].method == "expert"
    assert (table["expert", "aten"].trials, table["expert", "aten"].correct) == (2, 2)
    assert (table["expert", "vllm"].trials, table["expert", "vllm"].correct) == (1, 1)
    assert (table["files", "aten"].trials, table["files", "aten"].correct) == (2, 1)  # add has no file
    assert (table["files", "vllm"].trials, table["files", "vllm"].correct) == (1, 0)  # wrong kernel
    statuses = Counter(r.data.tags["kgb.status"] for r in trial_runs(uri(root)))
    assert statuses == Counter(correct=4, no_candidate=1, wrong_output=1)
    assert "mlflow ui --backend-store-uri" in first.stdout
    # nothing is timed on the CPU: no share of fast operators, where 0 would read "none is faster"
    assert all(r.fast_1_0 is None and r.geomean_speedup is None for r in table.values())
    client = MlflowClient(uri(root))
    jobs = client.search_runs([e.experiment_id for e in client.search_experiments()], "tags.`kgb.kind` = 'job'")
    assert jobs and all("accuracy" in j.data.metrics and not any(m.startswith("fast_") for m in j.data.metrics)
                        for j in jobs)


def test_rerun_adds_no_runs_and_evaluates_nothing(sweep):
    root, args, _ = sweep
    runs_before = len(trial_runs(uri(root)))
    evaluations_before = sum(isinstance(e, CandidateEvaluated) for e in all_events(root))
    client = MlflowClient(uri(root))

    def accuracy_histories() -> dict[str, int]:
        jobs = client.search_runs([e.experiment_id for e in client.search_experiments()], "tags.`kgb.kind` = 'job'")
        return {j.info.run_id: len(client.get_metric_history(j.info.run_id, "accuracy")) for j in jobs}

    histories_before = accuracy_histories()
    kgb_run(*args, root=root, multirun=True)
    assert len(trial_runs(uri(root))) == runs_before
    assert sum(isinstance(e, CandidateEvaluated) for e in all_events(root)) == evaluations_before
    assert accuracy_histories() == histories_before  # a re-run adds no metric step to the job runs


def test_projecting_twice_creates_no_duplicates(sweep):
    root, _, _ = sweep
    projection = MlflowProjection(uri(root), "kgb")
    for path in root.glob("jobs/*/events.jsonl"):
        projection.project(read_events(path), BlobStore(root / "blobs"))
    keys = [r.data.tags["kgb.trial"] + r.data.tags["kgb.job"] for r in trial_runs(uri(root))]
    assert len(keys) == len(set(keys)) == 6


def test_rebuild_from_events_gives_the_same_leaderboard(sweep, tmp_path):
    root, _, _ = sweep
    fresh = f"sqlite:///{tmp_path / 'rebuilt.db'}"
    done = subprocess.run(
        [sys.executable, "-m", "kgb.tracking", "rebuild", str(root), "--tracking-uri", fresh],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert render(rows(trial_rows(fresh)), "csv") == render(rows(trial_rows(uri(root))), "csv")


def test_best_downloads_the_kernel(sweep, tmp_path):
    root, _, _ = sweep
    done = subprocess.run(
        [sys.executable, "-m", "kgb.query", "best", "--op", "aten::softmax", "--chip", "cpu",
         "--dest", str(tmp_path), "--tracking-uri", uri(root)],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "kernel.py").read_text() == SOFTMAX.read_text()
    assert '"status": "correct"' in (tmp_path / "verdict.json").read_text()
    umask = os.umask(0o022)
    os.umask(umask)
    # both as any new file (kernel.py was 0600, a temporary file's mode, beside a 0644 verdict.json)
    assert {(tmp_path / name).stat().st_mode & 0o777 for name in ("kernel.py", "verdict.json")} == {0o666 & ~umask}


def test_best_says_in_one_line_what_it_cannot_do(sweep, tmp_path):
    """A misspelt operator said "no correct kernel among 0 trial(s)", and a --dest that is a
    file ended in FileExistsError's traceback (session 45's user walk); so did a misspelt chip
    (session 46's)."""
    root, _, _ = sweep
    a_file = tmp_path / "taken"
    a_file.write_text("")

    def best(op: str, dest: Path, chip: str = "cpu") -> str:
        done = subprocess.run([sys.executable, "-m", "kgb.query", "best", "--op", op, "--chip", chip,
                               "--dest", str(dest), "--tracking-uri", uri(root)],
                              cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
        assert done.returncode == 1 and done.stdout == "", done.stdout
        (line,) = done.stderr.splitlines()
        return line

    assert "did you mean aten::softmax" in best("aten::sofmax", tmp_path / "out")
    assert best("aten::softmax", a_file).startswith(f"error: cannot write the kernel into --dest {a_file}: ")
    assert best("aten::softmax", tmp_path / "out", chip="gpu") == f"error: no trial on chip gpu in {uri(root)}; its chips: cpu"


def test_a_store_in_a_read_only_folder_can_be_queried(sweep):
    """MLflow's store is in WAL mode, whose readers make a -shm file beside it: in a folder
    this user cannot write (a result copied out read-only, a read-only mount) the queries
    said "is not an MLflow store (unable to open database file)" until session 44."""
    import shutil

    root, _, _ = sweep
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-rm", "true"]).returncode != 0:
        pytest.skip("no user and mount namespaces here, to mount a folder read-only")
    query = (f"mount --bind -o ro {root} {root} && touch {root}/probe 2> /dev/null && echo WRITABLE; "
             f"{sys.executable} -m kgb.query leaderboard --tracking-uri {uri(root)}")
    done = subprocess.run(["unshare", "-rm", "sh", "-c", query], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and "WRITABLE" not in done.stdout, done.stdout + done.stderr
    assert "expert" in done.stdout and "files" in done.stdout


def test_a_sweep_with_one_bad_job_stops_before_any_job_runs(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    # the bad combination comes last: without the check, the first job would run
    done = subprocess.run(
        [sys.executable, "run.py", "-m", f"tracking.root={tmp_path}", "chip=cpu", "ops=[aten::add]",
         "method=expert,oneshot"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=300, env=env,
    )
    assert done.returncode != 0
    assert "the job `" in done.stderr and "method=oneshot" in done.stderr and "none has run" in done.stderr
    assert "calls a model" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []
    done = subprocess.run(
        [sys.executable, "run.py", "-m", f"tracking.root={tmp_path}", "chip=cpu", "ops=[aten::add]",
         "method=expert", "model=none,claude-opus-4-6"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=300, env=env,
    )
    assert done.returncode != 0 and "ANTHROPIC_API_KEY is not set" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_plots_reads_the_store(sweep, tmp_path):
    root, _, _ = sweep
    done = subprocess.run(
        [sys.executable, "-m", "kgb.query", "plots", "--dest", str(tmp_path), "--tracking-uri", uri(root)],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    # a CPU sweep has correctness but no timings: the accuracy figure, and why not the others
    lines = done.stdout.splitlines()
    assert lines[2] == str(tmp_path / "cost_accuracy.svg")
    assert [line.split(":")[0] for line in lines[:2]] == ["fast_p", "speedups"] and "not timed" in lines[0]


def test_kill_minus_nine_then_rerun_loses_and_duplicates_nothing(tmp_path):
    ops = "ops=[aten::softmax,aten::add,vllm::rms_norm,vllm::fused_add_rms_norm]"
    proc = kgb_run("method=expert", "source=all", "chip=cpu", ops, root=tmp_path, popen=True)
    deadline = time.time() + 300
    while time.time() < deadline:
        finished = [e for e in all_events(tmp_path) if isinstance(e, TrialFinished)]
        if finished:
            break
        time.sleep(0.2)
    assert finished, "no trial finished in time"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert len([e for e in all_events(tmp_path) if isinstance(e, TrialFinished)]) < 4
    kgb_run("method=expert", "source=all", "chip=cpu", ops, root=tmp_path)
    ends = Counter(e.trial for e in all_events(tmp_path) if isinstance(e, TrialFinished))
    assert len(ends) == 4 and set(ends.values()) == {1}
    runs = trial_runs(uri(tmp_path))
    assert sorted(r.data.tags["kgb.op"] for r in runs) == sorted(
        ["aten::softmax", "aten::add", "vllm::rms_norm", "vllm::fused_add_rms_norm"]
    )
    assert all(r.data.tags["kgb.status"] == "correct" for r in runs)


def test_a_job_runs_in_one_process_at_a_time(tmp_path):
    """Until session 44 the same command in a second terminal judged every trial of the
    running job again beside the first (a model method paid for twice) and interleaved the
    two runs' events in one log under repeated sequence numbers."""
    # the first job is still at it, without spending the CPU's time: a kernel that never returns
    # (tests/candidates/softmax_hang.py) beside one that does
    kernels = tmp_path / "kernels"
    kernels.mkdir()
    (kernels / "aten__softmax.py").write_text((REPO_ROOT / "tests/candidates/softmax_hang.py").read_text())
    (kernels / "aten__add.py").write_text(ADD.read_text())
    args = ("method=files", f"method.dir={kernels}", "source=aten", "chip=cpu", "ops=[aten::softmax,aten::add]")
    first = kgb_run(*args, root=tmp_path, popen=True)
    try:
        deadline = time.time() + 300
        while not any(isinstance(e, TrialFinished) for e in all_events(tmp_path)):
            assert time.time() < deadline and first.poll() is None, "the first run judged nothing"
            time.sleep(0.2)
        second = subprocess.run([sys.executable, "run.py", f"tracking.root={tmp_path}", *args], cwd=REPO_ROOT,
                                capture_output=True, text=True, timeout=600)
        assert first.poll() is None, "the first run ended before the second was refused: no overlap was tested"
    finally:
        os.killpg(first.pid, signal.SIGINT)  # as Ctrl-C: what finished is kept
        try:  # its output read meanwhile: a full pipe would hold it at its next line
            said, _ = first.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(first.pid, signal.SIGKILL)
            said, _ = first.communicate()
            pytest.fail(f"the first run did not end within 120 s of Ctrl-C; it said:\n{said.decode(errors='replace')[-4000:]}")
    assert second.returncode == 1
    assert "is already running (pid" in second.stderr and "Traceback" not in second.stderr, second.stderr
    events = all_events(tmp_path)
    assert set(Counter(e.trial for e in events if isinstance(e, TrialFinished)).values()) == {1}
    assert [e.seq for e in events] == list(range(len(events)))


def test_chip_absent_here_is_skipped_with_reason(tmp_path):
    done = kgb_run("method=expert", "source=aten", "chip=nvidia", "ops=[aten::softmax]", root=tmp_path)
    assert "skipped" in done.stdout
    (run,) = trial_runs(uri(tmp_path))
    assert run.data.tags["kgb.status"] == "skipped"
    assert "needs a cuda device" in run.data.tags["kgb.reason"]
    # nothing was judged: no accuracy of 0 out of 0, and the reason in the closing lines
    assert "correct 0/0  accuracy -  speed: nothing timed" in done.stdout
    assert "nothing was judged: chip nvidia needs a cuda device" in done.stdout
    (row,) = rows(trial_rows(uri(tmp_path)))
    assert row.accuracy is None and row.fast_1_0 is None


def test_bad_config_fails_at_compose_time(tmp_path):
    done = subprocess.run([sys.executable, "run.py", f"tracking.root={tmp_path}", "method.smaples=3"],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "smaples" in done.stderr


@pytest.fixture(scope="module")
def add_job(tmp_path_factory):
    """One finished job on one operator, which the two tests below run again in other ways
    (each holds whichever order they run in): a fresh run.py costs seconds of imports."""
    root = tmp_path_factory.mktemp("add")
    args = ("method=expert", "source=aten", "chip=cpu", "ops=[aten::add]")
    kgb_run(*args, root=root)
    return root, args


def test_a_bad_settings_job_leaves_the_good_row_alone_and_raising_samples_runs_only_new_ones(add_job):
    root, args = add_job
    good = render(rows(trial_rows(uri(root))), "csv")
    bad = subprocess.run([sys.executable, "run.py", f"tracking.root={root}", *args, "eval.timeout_s=-1"],
                         cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert bad.returncode != 0 and "eval.timeout_s=-1.0" in bad.stderr
    assert render(rows(trial_rows(uri(root))), "csv") == good
    evaluations = sum(isinstance(e, CandidateEvaluated) for e in all_events(root))
    kgb_run(*args, "method.samples=2", root=root)  # the same job: sample 0 is done, sample 1 is new
    assert len(list(root.glob("jobs/*/events.jsonl"))) == 1
    assert sum(isinstance(e, CandidateEvaluated) for e in all_events(root)) == evaluations + 1


def test_auto_on_this_machine_is_the_same_job_as_the_chip_it_finds(add_job):
    root, args = add_job
    assert args == ("method=expert", "source=aten", "chip=cpu", "ops=[aten::add]")
    again = kgb_run("method=expert", "source=aten", "chip=auto", "ops=[aten::add]", root=root)
    assert "1 trial(s) already finished" in again.stdout
    assert len(list(root.glob("jobs/*/events.jsonl"))) == 1
