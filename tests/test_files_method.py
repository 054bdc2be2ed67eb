"""method=files (kgb/methods/files.py): a misnamed kernel is named where its operator ends
no_candidate, and a folder that will judge nothing, or holds files for no operator, is
warned of once, in one line, before the job starts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from kgb import preflight
from kgb.config import FilesConfig
from kgb.methods import NoCandidate
from kgb.methods.files import Files
from kgb.operators import REPO_ROOT
from kgb.tracking.events import TrialFinished
from kgb.tracking.log import read_events

ADD = (REPO_ROOT / "operators/aten/add/solution.py").read_text()


def folder(tmp_path: Path, *names: str) -> Path:
    for name in names:
        (tmp_path / name).write_text(ADD)
    return tmp_path


def no_candidate_reason(kernels: Path, op: str) -> str:
    ctx = SimpleNamespace(problem=SimpleNamespace(op=op), evaluate=lambda *a, **k: pytest.fail("nothing to judge"))
    with pytest.raises(NoCandidate) as caught:
        Files(FilesConfig(dir=str(kernels))).solve(ctx)
    return str(caught.value)


@pytest.mark.parametrize("misnamed", ["aten_softmax.py", "aten__sofmax.py", "Aten__Softmax.py"])
def test_a_missing_file_names_the_misnamed_one_near_it(tmp_path, misnamed):
    reason = no_candidate_reason(folder(tmp_path, misnamed, "aten__add.py"), "aten::softmax")
    assert reason == f"no file aten__softmax.py in {tmp_path.resolve()}; did you mean {misnamed}?"


def test_a_file_of_another_operator_is_not_offered_for_a_missing_one(tmp_path):
    """aten___softmax.py is aten::_softmax's kernel, not a misspelt aten::softmax's."""
    reason = no_candidate_reason(folder(tmp_path, "aten___softmax.py"), "aten::softmax")
    assert reason == f"no file aten__softmax.py in {tmp_path.resolve()}"


def warnings(capsys, kernels: Path, ops: list[str], times: int = 1) -> list[str]:
    for _ in range(times):
        preflight.check_files_dir(kernels, "aten", ops)
    captured = capsys.readouterr()
    assert captured.out == ""
    return captured.err.splitlines()


def test_an_empty_folder_is_warned_of_once(tmp_path, capsys):
    (line,) = warnings(capsys, tmp_path, ["aten::add", "aten::neg"], times=2)  # SweepCheck, then the job
    assert line == (f"warning: method.dir={tmp_path} has no file for any of this job's 2 operator(s), so every trial "
                    "will end no_candidate (files are named <source>__<op>.py, e.g. aten__softmax.py)")


def test_files_that_name_no_operator_are_warned_of(tmp_path, capsys):
    kernels = folder(tmp_path, "aten__add.py", "aten_neg.py", "notes.py")
    (line,) = warnings(capsys, kernels, ["aten::add", "aten::neg"])
    assert line.startswith(f"warning: method.dir={kernels}: aten_neg.py (did you mean aten__neg.py?), notes.py "
                           "name no operator and will not be judged")


def test_only_misnamed_files_are_both_warnings_in_one_line(tmp_path, capsys):
    (line,) = warnings(capsys, folder(tmp_path, "aten__ad.py"), ["aten::add"])
    assert "has no file for any of this job's 1 operator(s)" in line
    assert "aten__ad.py (did you mean aten__add.py?) name no operator" in line


def test_a_folder_of_the_jobs_kernels_and_other_operators_is_not_warned_of(tmp_path, capsys):
    """A folder of kernels for every source, and a job narrowed by ops=: nothing is wrong."""
    assert warnings(capsys, folder(tmp_path, "aten__add.py", "aten__neg.py", "vllm__awq_gemm.py"), ["aten::add"]) == []


@pytest.mark.slow
def test_a_run_warns_once_and_its_trial_names_the_misnamed_file(tmp_path):
    (tmp_path / "kernels").mkdir()
    kernels = folder(tmp_path / "kernels", "aten__ad.py")
    done = subprocess.run([sys.executable, str(REPO_ROOT / "run.py"), "chip=cpu", "method=files", f"method.dir={kernels}",
                           "ops=[aten::add]", f"tracking.root={tmp_path / 'out'}", "tracking.mlflow=false"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (warning,) = [x for x in done.stderr.splitlines() if x.startswith("warning:")]  # once, though checked twice
    assert "has no file for any of this job's 1 operator(s)" in warning and "aten__ad.py" in warning
    (log,) = (tmp_path / "out").glob("jobs/*/events.jsonl")
    (end,) = [e for e in read_events(log) if isinstance(e, TrialFinished)]
    assert end.end == "no_candidate" and end.reason.endswith("; did you mean aten__ad.py?"), end.reason


def test_a_failed_trials_progress_line_says_why(tmp_path):
    """`rejected`, `wrong_output` and the rest said nothing on the trial's line: a newcomer
    had to open MLflow to read "does not import triton" (session 45's user walk)."""
    kernels = tmp_path / "kernels"
    kernels.mkdir()
    (kernels / "aten__add.py").write_text("def add(a, b, alpha=1):\n    return a + b\n")
    done = subprocess.run([sys.executable, str(REPO_ROOT / "run.py"), "chip=cpu", "method=files", f"method.dir={kernels}",
                           "ops=[aten::add]", f"tracking.root={tmp_path / 'out'}", "tracking.mlflow=false"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (line,) = [x for x in done.stdout.splitlines() if x.strip().startswith("[1/1]")]
    assert "rejected" in line and "does not import triton" in line, line
