"""Nothing an agent's command starts outlives the command.

Until session 43 the harness ended a command by killing its process group; a process that
left the group (`setsid`, a double fork into a session of its own) kept running after its
command, its CLI session and the trial: in the sandbox and under its CPU limit, but beside
the next commands, the harness's reads of the trial and the judge's timing of other trials,
and a git hook's such process held git's output open, so the harness waited a minute for it.
The sandbox's wrapper now stays as the command's subreaper and ends every process below it
(kgb/agents/reaper.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kgb.agents.commands import confined, run_command
from kgb.agents.workspace import Workspace
from kgb.evaluate.sandbox import landlock_abi

pytestmark = pytest.mark.skipif(landlock_abi() == 0, reason="this kernel has no Landlock")
LEAVE = "setsid sleep 300 > /dev/null 2>&1 < /dev/null & echo $! > {pidfile}"  # a session of its own


@pytest.fixture
def trial(tmp_path):
    for d in ("workspace", "home"):
        (tmp_path / d).mkdir()
    return tmp_path


def _env(trial: Path) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "HOME": str(trial / "home"), "TMPDIR": str(trial / "home")}


def _running(pidfile: Path) -> bool:
    """Whether the process whose pid the command wrote still runs (a zombie has ended)."""
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5  # the kernel's delivery of a kill is not instant
    while time.monotonic() < deadline:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            return False
        if stat[stat.rindex(")") + 2] in "ZX":
            return False
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)  # not left behind by the test either
    return True


def test_a_process_in_a_session_of_its_own_ends_with_its_command(trial):
    pidfile = trial / "workspace" / "pid"
    done = run_command(LEAVE.format(pidfile=pidfile), trial / "workspace", _env(trial), 60, 4000, confine_to=trial)
    assert done.exit_code == 0, done.output
    assert not _running(pidfile)


def test_it_ends_when_its_command_is_killed_at_the_timeout(trial):
    pidfile = trial / "workspace" / "pid"
    done = run_command(LEAVE.format(pidfile=pidfile) + "; sleep 300", trial / "workspace", _env(trial), 1.5, 4000,
                       confine_to=trial)
    assert done.timed_out
    assert done.duration_s < 30
    assert not _running(pidfile)


def test_orphans_of_orphans_end_too(trial):
    """A double fork: the middle process exits at once, its child is reparented."""
    pidfile = trial / "workspace" / "pid"
    command = f"( ( setsid sleep 300 > /dev/null 2>&1 < /dev/null & echo $! > {pidfile} ) & ) ; sleep 0.5"
    done = run_command(command, trial / "workspace", _env(trial), 60, 4000, confine_to=trial)
    assert done.exit_code == 0, done.output
    assert not _running(pidfile)


def test_a_git_hooks_leftover_neither_holds_the_harness_nor_outlives_git(tmp_path):
    ws = Workspace(tmp_path, "cpu")
    for d in (ws.root, ws.home / ".cache"):
        d.mkdir(parents=True)
    ws.git("init", "-q", "-b", "main")
    pidfile = ws.root / "pid"
    hook = ws.root / ".git" / "hooks" / "post-commit"
    # it keeps git's stderr, which the harness reads to its end
    hook.write_text(f"#!/bin/sh\nsetsid sleep 300 < /dev/null > /dev/null & echo $! > {pidfile}\n")
    hook.chmod(0o755)
    started = time.monotonic()
    ws.commit("one")
    assert time.monotonic() - started < 30  # git's own timeout is 60 s
    assert not _running(pidfile)


def test_the_exit_status_is_the_commands(trial):
    assert run_command("exit 3", trial / "workspace", _env(trial), 60, 4000, confine_to=trial).exit_code == 3
    argv, env = confined(["bash", "-c", "kill -TERM $$"], trial, _env(trial))
    assert subprocess.run(argv, env=env, cwd=trial / "workspace").returncode == -signal.SIGTERM


def test_they_end_when_the_harness_is_killed(trial):
    """kill -9 of a run: the wrapper's parent dies without a word to it."""
    pidfile = trial / "workspace" / "pid"
    argv, env = confined(["bash", "-c", LEAVE.format(pidfile=pidfile) + "; sleep 300"], trial, _env(trial))
    harness = subprocess.Popen([sys.executable, "-c", "import subprocess, sys, time; "
                                f"subprocess.Popen({argv!r}, env={env!r}, cwd={str(trial / 'workspace')!r}); "
                                "time.sleep(300)"])
    deadline = time.monotonic() + 30
    while not pidfile.exists() or not pidfile.read_text().strip():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    harness.kill()
    harness.wait()
    assert not _running(pidfile)
