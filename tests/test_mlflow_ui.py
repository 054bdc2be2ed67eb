"""The MLflow UI as a person sees it: `mlflow ui` on a local port, pages loaded in headless
Chromium (Debian's `chromium`, driven by Playwright).

The runs page must list the trials with their status and speedup, and a trial's page must
show its kernel.py. With KGB_SCREENSHOTS=DIR the two screenshots are also saved there
(docs/ keeps them: docs/mlflow-runs.png, docs/mlflow-trial.png).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from kgb.evaluate.verdict import CaseResult, Status, Verdict
from kgb.tracking.blobs import BlobStore
from kgb.tracking.events import (
    CandidateEvaluated,
    CandidateProposed,
    RunFinished,
    RunStarted,
    TrialEnd,
    TrialFinished,
    TrialStarted,
)

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium)")
SOFTMAX = Path(__file__).parent.parent / "operators/aten/softmax/solution.py"
STARTUP_S = 300  # `mlflow ui` imports for seconds; far longer on a loaded machine
# MLflow's GenAI job runner: eight more processes importing mlflow, which kgb never uses
NO_JOB_RUNNER = {"MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}


def _events(blobs: BlobStore) -> list:
    job = "expert-none-aten-nvidia-ui"
    kernel = blobs.put(SOFTMAX.read_text())
    timed = Verdict(Status.CORRECT, "ok", (CaseResult("bench-0", "bench", Status.CORRECT, latency_us=5.0, baseline_us=10.0),),
                    device="cuda", baseline="torch")
    broken = Verdict(Status.COMPILE_ERROR, "triton.CompilationError: at 12:8: unsupported tensor index")
    events: list = [RunStarted(job=job, method="expert", model="none", source="aten", chip="nvidia", config={},
                               git_commit=None, packages={}, device="NVIDIA H200", driver=None, specs={}, n_ops=2)]
    for key, op, verdict in (("t-softmax", "aten::softmax", timed), ("t-add", "aten::add", broken)):
        events += [TrialStarted(job=job, trial=key, op=op, spec_version=1, sample=0),
                   CandidateProposed(job=job, trial=key, candidate="c1", source_blob=kernel, origin="solution.py"),
                   CandidateEvaluated(job=job, trial=key, candidate="c1", verdict=verdict),
                   TrialFinished(job=job, trial=key, end=TrialEnd.COMPLETED, wall_s=3.0)]
    events.append(RunFinished(job=job, wall_s=7.0, trials_run=2, trials_skipped_as_done=0))
    start = time.time() - 60
    import dataclasses

    return [dataclasses.replace(e, seq=i, ts=start + 2 * i) for i, e in enumerate(events)]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def ui(tmp_path_factory):
    from kgb.tracking.mlflow_projection import MlflowProjection

    root = tmp_path_factory.mktemp("ui")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    projection = MlflowProjection(uri, "kgb", background=False)
    projection.project(_events(BlobStore(root / "blobs")), BlobStore(root / "blobs"))
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "mlflow", "ui", "--backend-store-uri", uri, "--host", "127.0.0.1", "--port", str(port),
         "--workers", "1"], cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        env={**os.environ, **NO_JOB_RUNNER})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + STARTUP_S
        while True:
            try:
                urllib.request.urlopen(f"{url}/health", timeout=5)
                break
            except OSError:
                if server.poll() is not None or time.time() > deadline:
                    pytest.fail(f"mlflow ui did not start (exit {server.poll()})")
                time.sleep(1)
        yield url, projection.experiment_id, root
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)


@pytest.fixture(scope="module")
def page(ui):
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1500, "height": 800})
        page.set_default_timeout(120_000)
        yield page
        browser.close()


def _shot(page, tmp: Path, name: str) -> None:
    page.screenshot(path=str(tmp / name))
    if os.environ.get("KGB_SCREENSHOTS"):
        shutil.copy(tmp / name, Path(os.environ["KGB_SCREENSHOTS"]) / name)


def _row_text(page, name: str) -> str:
    """A row's cells: the grid draws its pinned and scrolled columns as separate rows."""
    index = page.locator("[role=row]", has_text=name).first.get_attribute("row-index")
    parts = page.locator(f"[role=row][row-index='{index}']")
    return " ".join(parts.nth(i).inner_text() for i in range(parts.count())).split()


def _show_columns(page, columns: dict[str, bool]) -> None:
    page.get_by_role("button", name="Columns").click()
    for column, shown in columns.items():
        page.get_by_placeholder("Search columns").fill(column)
        node = page.locator(".du-bois-light-tree-treenode").filter(has_text=re.compile(f"^{re.escape(column)}$"))
        if ("checkbox-checked" in (node.first.get_attribute("class") or "")) != shown:
            node.locator(".du-bois-light-tree-checkbox").click()
    page.keyboard.press("Escape")


def test_the_runs_page_lists_the_trials_with_status_and_speedup(ui, page):
    from kgb.tracking.mlflow_projection import MlflowProjection

    url, experiment, root = ui
    # the page the README names: the experiment's training runs, not the GenAI traces
    page.goto(MlflowProjection(f"sqlite:///{root / 'mlflow.db'}", "kgb").runs_page(url))
    job = page.locator("[role=row]", has_text="expert/none/aten/nvidia")
    job.locator("button").first.click()  # show the job's trial runs
    page.get_by_text("aten::softmax").first.wait_for()
    _show_columns(page, {"Dataset": False, "Source": False, "Models": False, "kgb.status": True, "speedup": True})
    _close_assistant(page)
    page.get_by_text("compile_error").first.wait_for()
    softmax, add = _row_text(page, "aten::softmax"), _row_text(page, "aten::add")
    # the two columns added last: metric speedup (10 us / 5 us) and tag kgb.status
    assert sorted(softmax[-2:]) == ["2", "correct"]
    assert sorted(add[-2:]) == ["-", "compile_error"]  # no speedup where not correct
    assert "6.0s" in softmax  # the Duration column: TrialStarted to TrialFinished
    _shot(page, root, "mlflow-runs.png")


def _close_assistant(page) -> None:
    """MLflow's assistant panel covers part of the page (it stays closed once closed)."""
    close = page.get_by_role("button", name="Close", exact=True)
    if close.count():
        close.first.click()


def test_a_trial_page_shows_its_kernel(ui, page):
    url, experiment, root = ui
    from kgb.query import trial_runs

    run = next(r for r in trial_runs(f"sqlite:///{root / 'mlflow.db'}") if r.data.tags["kgb.op"] == "aten::softmax")
    page.goto(f"{url}/#/experiments/{experiment}/runs/{run.info.run_id}?workflowType=machine_learning")
    page.get_by_text("Artifacts", exact=True).first.click()
    _close_assistant(page)
    page.get_by_text("kernel.py").first.click()
    page.get_by_text("@triton.jit").first.wait_for()
    assert page.get_by_text("trial.json").count() == 1
    _shot(page, root, "mlflow-trial.png")
