"""Inputs of session 50's user walk that ran, or failed, without saying what was wrong, each
met as a user would: `python run.py ...` in a subprocess, from an empty working directory.

- `model=none model.name=foo` made a job of its own, whose expert kernels the queries filed
  under model foo; `model=none model.provider=openai` crashed with an AttributeError.
- `tracking.uri=sqlite:///<a folder that is not there>/mlflow.db` made the folders and a
  new store in them: a misspelt path scattered results into a store of its own.
- A value of the wrong type (`eval.timeout_s=abc`) gave Hydra's five to seven lines, `+` on a
  setting (`+eval.timeout_s=3`) four, and a sweep kgb cannot make (`interval(1,5)`) a traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kgb.operators import REPO_ROOT

CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in ("HYDRA_FULL_ERROR", "OPENAI_API_KEY")}


def run_py(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO_ROOT / "run.py"), *args], cwd=cwd, env={**CLEAN_ENV, **(env or {})},
                          capture_output=True, text=True, timeout=180)


def refused(tmp_path: Path, *args: str) -> str:
    """The one line a bad input gives, after checking the exit code and that nothing was written."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    done = run_py(cwd, *args)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert done.stdout == "" and list(cwd.iterdir()) == []  # no outputs/, no mlflow.db
    return lines[0]


# --- a model's name or provider without a model --------------------------------------

@pytest.mark.parametrize(("args", "says"), [
    (("model.name=foo",), "model.name=foo with model=none: no model is called"),
    (("model.provider=openai",), "model.provider=openai with model=none: no model is called"),  # was an AttributeError
    (("method=oneshot", "model.name=foo"), "model.name=foo with model=none"),  # model=openai forgotten
    (("-m", "model=none,openai", "model.name=foo"), "the job `model=none ++model.name=foo chip=cpu` of this sweep"),
])
def test_a_model_setting_without_a_model_is_refused(tmp_path, args, says):
    line = refused(tmp_path, *args, "chip=cpu")
    assert says in line and "model=openai or model=anthropic with model.name=NAME" in line


def test_model_none_as_it_comes_passes():
    from kgb.config import ModelConfig
    from kgb.preflight import check_no_model

    check_no_model(ModelConfig())
    check_no_model(ModelConfig(name="none", provider="none"))  # `model.name=none`, said aloud


# --- a tracking store under a folder that is not there -------------------------------

def test_a_store_under_a_missing_folder_is_refused_and_nothing_is_made(tmp_path):
    typo = tmp_path / "resluts" / "mlflow.db"
    line = refused(tmp_path, "chip=cpu", "ops=[aten::add]", f"tracking.uri=sqlite:///{typo}")
    assert f"the store's folder {typo.parent} does not exist" in line and f"mkdir -p {typo.parent}" in line
    assert not typo.parent.exists()


def test_a_new_store_in_a_folder_that_exists_or_in_the_tracking_root_passes(tmp_path):
    """A first run makes its store: in the new tracking.root by default (the README's first
    command on a fresh clone, where outputs/ is not there yet), or wherever a folder exists."""
    from kgb.config import TrackingConfig
    from kgb.preflight import check_tracking_store

    root = tmp_path / "outputs"
    check_tracking_store(TrackingConfig(root=str(root)).tracking_uri(), root)  # the default
    check_tracking_store(f"sqlite:///{root}/mlflow.db", root)  # the same, given
    check_tracking_store(f"sqlite:///{tmp_path}/campaign.db", root)
    assert list(tmp_path.iterdir()) == []  # the check makes nothing


@pytest.mark.slow
def test_the_default_store_of_a_fresh_working_directory_is_made(tmp_path):
    done = run_py(tmp_path, "chip=cpu", "ops=[aten::add]")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "outputs" / "mlflow.db").is_file()


# --- a value of the wrong type --------------------------------------------------------

@pytest.mark.parametrize(("args", "says"), [
    (("eval.timeout_s=abc",), "eval.timeout_s=abc: eval.timeout_s takes a number (300.0 unless set)"),
    (("eval.timeout_s=null",), "eval.timeout_s=null: eval.timeout_s takes a number (300.0 unless set)"),
    (("method.samples=1.5",), "method.samples=1.5: method.samples takes a whole number (1 unless set)"),
    (("eval.compile_for=sm90",), "eval.compile_for=sm90: eval.compile_for takes a whole number, or null"),
    (("tracking.mlflow=maybe",), "tracking.mlflow=maybe: tracking.mlflow takes true or false (true unless set)"),
    (("method=aiko", "method.agent.max_turns=x"), "method.agent.max_turns=x: method.agent.max_turns takes a whole number"),
    (("-m", "eval.timeout_s=300,abc"), "eval.timeout_s=abc: eval.timeout_s takes a number"),
    (("++eval.timeout_s=abc",), "eval.timeout_s=abc: eval.timeout_s takes a number"),
    (("+eval.timeout_s=3",), "+eval.timeout_s=3: eval.timeout_s is a setting already; set it without the + "
                             "(eval.timeout_s=3)"),
    # a traceback (this check's, then Hydra's basic sweeper's) until session 50
    (("-m", "eval.timeout_s=interval(1,5)"), "eval.timeout_s=interval(1,5): a multirun takes the values themselves"),
])
def test_a_bad_override_is_one_line(tmp_path, args, says):
    line = refused(tmp_path, *args, "chip=cpu")
    assert line.startswith(f"error: {says}")


def test_full_error_still_gives_hydras_traceback(tmp_path):
    done = run_py(tmp_path, "chip=cpu", "eval.timeout_s=abc", env={"HYDRA_FULL_ERROR": "1"})
    assert done.returncode == 1 and "Traceback" in done.stderr and "could not be converted to Float" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_values_of_the_right_type_pass_the_check():
    from kgb.config import register
    from kgb.preflight import main_guard

    register()
    main_guard(["eval.timeout_s=300", "eval.timeout_s=1e3", "eval.compile_for=null", "method.samples='3'",
                "tracking.mlflow=false", "tracking.uri=null", "+tag=5", "tracking.experiment=${tag}",
                "++eval.repeats=3", "+eval.compile_for=90"])  # a null value is added to, as Hydra does
    main_guard(["-m", "eval.timeout_s=60,300", "method=aiko,autokernel", "method.agent.max_turns=4"])
