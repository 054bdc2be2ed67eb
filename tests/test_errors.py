"""Each bad input of `python run.py` gives one line naming the problem and the fix, a
non-zero exit, and writes nothing: no outputs/ folder, no MLflow database. Run through
run.py in a subprocess, from an empty working directory, as a user would meet them."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from fake_llm_server import Answer, Fail, FakeLLMServer, Hang, Queue

from kgb.config import GROUPS, choices
from kgb.operators import REPO_ROOT

pytestmark = pytest.mark.slow
CLEAN_ENV = {k: v for k, v in os.environ.items()
             if k not in ("HYDRA_FULL_ERROR", "ANTHROPIC_API_KEY", "OPENAI_API_KEY")}


def run_py(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO_ROOT / "run.py"), *args], cwd=cwd, env={**CLEAN_ENV, **(env or {})},
                          capture_output=True, text=True, timeout=180)


def refused(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """The one line a bad input gives, after checking the exit code and that nothing was written."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    done = run_py(cwd, "chip=cpu", *args, env=env)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert done.stdout == ""
    assert list(cwd.iterdir()) == []  # no outputs/, no mlflow.db
    return lines[0]


@pytest.mark.parametrize("group", GROUPS)
def test_an_unknown_group_choice_lists_the_choices(tmp_path, group):
    line = refused(tmp_path, f"{group}=nope")
    assert f"unknown {group} 'nope': choose one of {', '.join(choices(group))}" in line and "base_" not in line


def test_an_unknown_choice_in_a_sweep(tmp_path):
    assert "unknown method 'nope'" in refused(tmp_path, "-m", "method=expert,nope")


def test_an_unknown_operator_suggests_near_ones(tmp_path):
    line = refused(tmp_path, "ops=[aten::softmx]")
    assert "unknown operator 'aten::softmx'" in line and "did you mean aten::softmax" in line


def test_a_tracking_uri_mlflow_cannot_open(tmp_path):
    line = refused(tmp_path, "tracking.uri=garbage://x")
    assert "tracking.uri=garbage://x" in line and "sqlite:///" in line


def test_a_tracking_server_that_does_not_answer_is_refused_before_any_trial(tmp_path):
    """The projection opens the store while the first trials run: an unreachable server failed
    only after they were judged, some four minutes of MLflow's retries later."""
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    line = refused(tmp_path, "ops=[aten::add]", f"tracking.uri=http://127.0.0.1:{port}")
    assert "no server answers there" in line and "mlflow server" in line


def test_a_tracking_store_that_is_not_a_database_is_refused(tmp_path):
    not_a_db = tmp_path / "notes.db"
    not_a_db.write_text("not SQLite")
    line = refused(tmp_path, "ops=[aten::add]", f"tracking.uri=sqlite:///{not_a_db}")
    assert "cannot be opened as an SQLite database" in line
    assert not_a_db.read_text() == "not SQLite"


def test_method_files_without_its_folder(tmp_path):
    assert "add method.dir=DIR" in refused(tmp_path, "method=files")


@pytest.mark.parametrize(("value", "shown"), [("-1", "-1.0"), ("inf", "inf"), ("0.001", "0.001")])
def test_a_timeout_no_judge_can_keep(tmp_path, value, shown):
    """inf was taken, and every judge died converting it: a known-good kernel recorded as
    runtime_error; 0.001 s was enforced for some operators and not others (session 49)."""
    line = refused(tmp_path, f"eval.timeout_s={value}")
    assert f"eval.timeout_s={shown}" in line and "positive number" in line


@pytest.mark.parametrize(("name", "value", "says"), [("KGB_GATHER_S", "-1", "0 to 5"),
                                                     ("KGB_CUDA_WAIT", "nap", "auto, spin, yield, block")])
def test_a_bad_judge_knob_in_the_environment(tmp_path, name, value, says):
    """The judges' environment knobs (docs/gpu.md) are checked before anything runs, not
    in every judge."""
    line = refused(tmp_path, env={name: value})
    assert f"{name}={value!r}" in line and says in line


def test_a_missing_api_key(tmp_path):
    line = refused(tmp_path, "method=oneshot", "model=claude-opus-4-6")
    assert "ANTHROPIC_API_KEY is not set" in line and "export ANTHROPIC_API_KEY=" in line


def test_a_missing_sdk(tmp_path):
    shadow = tmp_path / "shadow" / "anthropic"
    shadow.mkdir(parents=True)  # an `anthropic` that cannot be imported, as when it is not installed
    (shadow / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'anthropic'\", name='anthropic')\n")
    line = refused(tmp_path, "method=oneshot", "model=claude-opus-4-6",
                   env={"ANTHROPIC_API_KEY": "k", "PYTHONPATH": str(tmp_path / "shadow")})
    assert "the anthropic package" in line and "pip install" in line


def test_an_unreachable_endpoint(tmp_path):
    line = refused(tmp_path, "method=oneshot", "model=openai", "model.name=m", "model.base_url=http://127.0.0.1:9/v1",
                   env={"OPENAI_API_KEY": "k"})
    assert "listing the models of http://127.0.0.1:9/v1 failed: connection failed" in line and "model.base_url" in line


def test_an_endpoint_that_does_not_list_its_models_and_a_wrong_name(tmp_path):
    with FakeLLMServer(Queue([Fail(404, message="no such model")]), lists_models=False) as server:
        line = refused(tmp_path, "method=oneshot", "model=openai", "model.name=qwen-typo",
                       f"model.base_url={server.openai_url}", env={"OPENAI_API_KEY": "k"})
        assert len(server.calls) == 1  # one probe, checked once for the whole run
    assert "does not list its models" in line and "model.validate=false" in line


@pytest.mark.parametrize(("setting", "says"), [("eval.timeout_s=-1", "ConfigError: eval.timeout_s=-1.0"),
                                               ("methd=expert", "methd")])  # a misspelt name: Hydra's own trace
def test_full_error_gives_the_traceback_and_still_writes_nothing(tmp_path, setting, says):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    done = run_py(cwd, "chip=cpu", setting, env={"HYDRA_FULL_ERROR": "1"})
    assert done.returncode != 0 and "Traceback (most recent call last)" in done.stderr
    assert says in done.stderr and list(cwd.iterdir()) == []


def test_help_describes_every_group_option_and_setting(tmp_path):
    done = run_py(tmp_path, "--help")
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    for group in GROUPS:
        for option in choices(group):
            [line] = [x for x in lines if x.split()[:1] == [option] and x.startswith("    ")]
            assert len(line.split()) > 3, line  # the option and a sentence
    for setting in ("method.samples", "method.k", "method.rounds", "model.max_tokens", "model.price.input",
                    "model.from", "eval.cases", "eval.timeout_s", "eval.compile_for", "tracking.uri", "ops"):
        [line] = [x for x in lines if x.strip().startswith(f"{setting} ")]
        assert len(line.split()) > 3, line
    assert list(tmp_path.iterdir()) == []


def test_a_setting_of_every_method_a_sweep_chooses_reaches_its_jobs(tmp_path):
    """`-m method=aiko,autokernel method.agent.max_turns=4`: Hydra checks a sweep's settings
    against the group's default (expert) before it makes a job, and until session 44 refused
    this one ("Key 'agent' not in 'ExpertConfig'"). Now each job is made, and kgb's own check
    of each (here: no API key) is what stops it."""
    done = run_py(tmp_path, "-m", "chip=cpu", "method=aiko,autokernel", "model=claude-opus-4-6",
                  "method.agent.max_turns=4")
    assert done.returncode != 0 and "ExpertConfig" not in done.stderr, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "method.agent.max_turns=4" in line and "ANTHROPIC_API_KEY is not set" in line, line


def test_a_good_job_answers_the_probe_and_runs(tmp_path):
    """The other side of the probe: an endpoint that serves the name is used."""
    with FakeLLMServer(Queue([Answer("OK"), Answer("no code")]), lists_models=False) as server:
        done = run_py(tmp_path, "chip=cpu", "method=oneshot", "model=openai", "model.name=m", "ops=[aten::add]",
                      f"model.base_url={server.openai_url}", f"tracking.root={tmp_path / 'out'}",
                      "tracking.mlflow=false", env={"OPENAI_API_KEY": "k"})
        assert done.returncode == 0, done.stderr
        assert len(server.calls) == 2  # the probe (once, though the name is checked twice), then the trial's call
    assert "one probe call" in done.stderr


def _as_from_a_terminal() -> None:
    """A job started as from a shell: SIGINT at its default, not blocked, whatever this test
    worker's process had (a disposition and a mask are inherited across exec)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _sigint_ignored_or_blocked(pid: int) -> bool:
    status = dict(line.split(":\t", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":\t" in line)
    bit = 1 << (signal.SIGINT - 1)
    return bool((int(status["SigIgn"], 16) | int(status["SigBlk"], 16)) & bit)


def test_ctrl_c_says_what_is_kept_and_how_to_go_on(tmp_path):
    """Ctrl-C (SIGINT to the terminal's process group) mid-job: one note instead of a traceback
    through Hydra and the trials' threads, exit code 130, and the job's log kept for a re-run."""
    with FakeLLMServer(Queue([Answer("OK"), Hang(60)]), lists_models=False) as server:
        proc = subprocess.Popen(
            [sys.executable, str(REPO_ROOT / "run.py"), "chip=cpu", "method=oneshot", "model=openai", "model.name=m",
             "ops=[aten::add]", f"model.base_url={server.openai_url}", f"tracking.root={tmp_path / 'out'}",
             "tracking.mlflow=false", "model.retries=0"],
            cwd=tmp_path, env={**CLEAN_ENV, "OPENAI_API_KEY": "k"}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, start_new_session=True, preexec_fn=_as_from_a_terminal)
        # the probe answered, then the trial's call hangs (on a loaded machine the job starts late)
        assert server.hanging.wait(180), "the trial's model call never reached the server"
        assert not _sigint_ignored_or_blocked(proc.pid), "SIGINT is ignored or blocked in the job's process"
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    (log,) = (tmp_path / "out" / "jobs").glob("*/events.jsonl")  # what it had begun is kept
    # one line: how many of the job's trials are kept, where, and how to go on
    assert "Traceback" not in err and err.strip().splitlines()[-1] == (
        f"kgb: interrupted: 0 of 1 trials finished are kept in {log}; run the same command to go on")


@pytest.mark.parametrize(("args", "says"), [
    (("methd=expert",), "unknown setting methd; did you mean method?"),
    (("method.sample=2",), "unknown setting method.sample for method=expert; did you mean method.samples?"),
    (("method=aiko", "method.agent.drivr=claude"), "unknown setting method.agent.drivr for method=aiko; did you mean method.agent.driver?"),
    (("-m", "method=expert,files", "method.dir=.", "eval.case=smoke,all"), "unknown setting eval.case; did you mean eval.cases?"),
    (("-m", "method=expert,passk", "method.k=3"), "unknown setting method.k for method=expert; the settings there are"),
])
def test_a_misspelt_setting_names_the_nearest_one(tmp_path, args, says):
    """Not Hydra's five lines ("Could not override 'methd'... full_key: methd"): the keys of
    the composed config, of the option the command line chooses for the setting's group."""
    line = refused(tmp_path, *args)
    assert says in line and "python run.py --help" in line


@pytest.mark.parametrize(("args", "says"), [
    (("chip.name=gpu",), "chip.name=gpu with chip.backend=cpu: the Triton interpreter judges this job, and its results "
                         "are chip cpu's; leave chip.name out"),
    (("chip.name=nvidia",), "chip.name=nvidia with chip.backend=cpu: the results would be filed under chip nvidia, "
                            "which judges on cuda; chip.name names the results; chip=NAME chooses the chip"),
])
def test_a_chip_name_that_files_results_under_a_chip_that_did_not_judge_them(tmp_path, args, says):
    """`chip=cpu chip.name=gpu` judged in the interpreter and filed the results under chip
    `gpu` (a user's walk)."""
    assert says in refused(tmp_path, *args)


def test_a_chip_of_ones_own_is_kept():
    from kgb.config import ChipConfig, chip_config
    from kgb.preflight import check_chip

    for chip in (ChipConfig(name="h100", backend="cuda", device_name_pattern="H100"), chip_config("cpu"),
                 chip_config("nvidia"), ChipConfig(), chip_config("E")):
        check_chip(chip)


@pytest.mark.parametrize(("args", "says"), [
    (("+foo=1",), "unknown setting foo (added with +): kgb has no such setting and no other setting reads it as ${foo}"),
    (("method=aiko", "+method.agent.max_turn=4"), "unknown setting method.agent.max_turn (added with +): kgb has no such "
                                                  "setting and no other setting reads it as ${method.agent.max_turn}; "
                                                  "did you mean method.agent.max_turns?"),
])
def test_a_key_added_with_plus_that_nothing_reads(tmp_path, args, says):
    """`+foo=1` was accepted and left out of the job's config without a word, as was a
    misspelt `+method.agent.max_turn=4` (Hydra refuses it without the +)."""
    assert says in refused(tmp_path, *args)


def test_a_key_added_with_plus_that_nothing_reads_stops_a_sweep_before_any_job(tmp_path):
    done = run_py(tmp_path, "-m", "chip=cpu", "+foo=1", "method.samples=1,2")
    assert done.returncode != 0 and list(tmp_path.iterdir()) == []
    (line,) = done.stderr.strip().splitlines()
    assert "of this sweep would fail, so none has run: unknown setting foo (added with +)" in line


def test_a_key_added_with_plus_that_another_setting_reads_passes():
    from hydra import compose, initialize_config_dir

    from kgb.config import CONF_DIR, register
    from kgb.preflight import to_config

    register()
    with initialize_config_dir(version_base="1.3", config_dir=str(CONF_DIR)):
        for overrides in (["+tag=x", "tracking.experiment=${tag}"], ["+tag=x", "hydra.run.dir=out/${tag}"],
                          ["+hydra.job.env_set.X=1"]):
            to_config(compose("config", overrides=overrides, return_hydra_config=True))


def test_the_settings_of_a_sweep_with_commas_pass_the_check():
    from kgb.config import register
    from kgb.preflight import main_guard

    register()
    main_guard(["-m", "method=expert,files", "method.dir=.", "eval.cases=smoke,all", "ops=[aten::add,aten::abs]",
                "model=replay", "model.from=x", "chip=cpu,auto", "method.samples=1,2", "+extra=1", "hydra.job.chdir=false"])


def test_a_setting_checked_without_a_composed_config_is_looked_up_in_every_schema_of_its_group():
    """Where the config cannot be composed in this process, a group's setting is looked up in
    every schema of the group: `method.k` is one (passk's), `method.sample` none."""
    from kgb.command_line import unknown_setting
    from kgb.config import ConfigError, register

    register()
    unknown_setting("method.k", None)
    with pytest.raises(ConfigError, match="unknown setting method.sample for any method; did you mean method.samples?"):
        unknown_setting("method.sample", None)
    with pytest.raises(ConfigError, match="unknown setting evl.cases; did you mean eval?"):
        unknown_setting("evl.cases", None)


@pytest.mark.parametrize(("args", "says"), [
    (("ops=aten::softmax",), "ops takes a list: ops=[aten::softmax]"),
    (("ops=aten::softmax,aten::add",), "ops takes a list: ops=[aten::softmax,aten::add] (one job over all), "
                                       "or -m 'ops=[aten::softmax],[aten::add]' (a job each)"),
    (("-m", "ops=aten::softmax,aten::add"), "ops takes a list: ops=[aten::softmax,aten::add]"),
    (("ops=null",), "ops takes a list: ops=[]"),
    (("chip.slurm.setup=module load x",), "chip.slurm.setup takes a list: chip.slurm.setup=[module load x]"),
])
def test_a_list_setting_given_a_plain_value(tmp_path, args, says):
    """Not Hydra's "Invalid value assigned: str is not a ListConfig" (or, with a comma, its
    "Ambiguous value" lines; under -m, a job per string that each failed so)."""
    assert refused(tmp_path, *args).startswith(f"error: {says}")


def test_a_list_setting_given_lists_passes_the_check():
    from kgb.config import register
    from kgb.preflight import main_guard

    register()
    main_guard(["ops=[aten::add]", "ops=[]", "chip.slurm.setup=null"])
    main_guard(["-m", "ops=[aten::add],[aten::abs]"])


@pytest.mark.parametrize(("args", "says"), [
    (("aten::nope", "f.py"), "error: unknown operator 'aten::nope'; did you mean aten::neg"),
    (("aten::softmax", "/no/such/file.py"), "error: no such candidate file: /no/such/file.py"),
    # a misspelt tag selected no case: "correct: all 0 cases correct" (session 45's user walk)
    (("aten::softmax", "--cases", "smok"), "error: --cases smok: no case tag 'smok'; the tags are smoke, check, bench"),
])
def test_evaluate_refuses_a_bad_operator_or_file_in_one_line(capsys, args, says):
    """`python -m kgb.evaluate`: not a FileNotFoundError's traceback."""
    from kgb.evaluate.__main__ import main

    assert main(list(args)) == 1
    out, err = capsys.readouterr()
    (line,) = err.splitlines()
    assert out == "" and line.startswith(says), line


def test_help_into_a_reader_that_stops_early_ends_quietly(tmp_path):
    """`python run.py --help | head`: a BrokenPipeError's traceback before."""
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line is written
    try:
        done = subprocess.run([sys.executable, str(REPO_ROOT / "run.py"), "--help"], cwd=tmp_path, env=CLEAN_ENV,
                              stdout=write, stderr=subprocess.PIPE, text=True, timeout=180)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, "")


def test_a_store_that_fails_mid_job_is_given_up_and_the_trials_go_on(tmp_path, monkeypatch, capsys):
    """The MLflow projection is derived from the event log: a store that fails once trials
    run (a server gone, a full disk) ended the job until session 45, its other trials lost
    with it. The job now says so in one line and judges on; its next run projects the log."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from kgb import run
    from kgb.config import register
    from kgb.tracking.log import read_events

    class FailsOnItsSecondCall:
        calls = 0

        def project(self, events, blobs):
            FailsOnItsSecondCall.calls += 1
            if FailsOnItsSecondCall.calls == 2:
                raise OSError("database or disk is full")

    monkeypatch.setattr(run, "open_projection", lambda cfg: FailsOnItsSecondCall())
    register()
    with initialize_config_dir(config_dir=str(REPO_ROOT / "conf"), version_base="1.3"):
        cfg = OmegaConf.to_object(compose("config", overrides=["ops=[aten::neg,aten::add,aten::sin]",
                                                               f"tracking.root={tmp_path}", "method.concurrency=1"]))
    summary = run.run_job(cfg)
    assert summary.correct == 3
    err = capsys.readouterr().err
    assert err.count("warning: the MLflow projection failed (OSError: database or disk is full)") == 1, err
    assert f"python -m kgb.tracking rebuild {tmp_path}" in err
    assert FailsOnItsSecondCall.calls == 2  # given up, not asked again
    (log,) = tmp_path.glob("jobs/*/events.jsonl")
    assert sum(type(e).__name__ == "TrialFinished" for e in read_events(log)) == 3
