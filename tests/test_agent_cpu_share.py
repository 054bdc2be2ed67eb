"""An agent's commands stay behind judging for the host's cores.

Until session 44 each command ran at the harness's priority in a session of its own, which
the kernel's autogroup scheduling (on wherever the kernel is built with it, unless booted with `noautogroup`; on here) weighs as much as the
harness's whole session, every judge in it: one agent's command spinning on every core took
half of the cores from judging, four of them four fifths (`python
benchmarks/command_share.py`), and judges' verdicts run against wall-clock timeouts. A
command now runs at nice 10 in the harness's session, and can neither lower its nice value
nor start a session of its own (kgb.agents.shell_sandbox.confine_shell)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kgb.agents.commands import run_command
from kgb.agents.shell_sandbox import COMMAND_NICE
from kgb.agents.workspace import Workspace
from kgb.evaluate.sandbox import landlock_abi

pytestmark = pytest.mark.skipif(landlock_abi() == 0, reason="this kernel has no Landlock")
AUTOGROUP = Path("/proc/self/autogroup")  # where the kernel has autogroup scheduling


def _harness_autogroup() -> str:
    """The harness's autogroup, or "" where the kernel has none to show (CI's machine has the
    file, and it reads empty)."""
    try:
        return AUTOGROUP.read_text().strip()
    except OSError:
        return ""


@pytest.fixture
def trial(tmp_path):
    for d in ("workspace", "home"):
        (tmp_path / d).mkdir()
    return tmp_path


def _run(trial: Path, command: str) -> str:
    env = {"PATH": os.environ["PATH"], "HOME": str(trial / "home"), "TMPDIR": str(trial / "home")}
    done = run_command(command, trial / "workspace", env, 60, 4000, confine_to=trial)
    assert done.exit_code == 0, done.output
    return done.output


def test_a_command_runs_at_the_lowest_priority_and_cannot_raise_it(trial):
    out = _run(trial, "nice; renice -n 0 $$ > /dev/null 2>&1 || echo renice-refused; "
                      "python3 -c 'import os; os.setpriority(os.PRIO_PROCESS, 0, 5)' 2> /dev/null || echo refused; "
                      "python3 -c 'import os; os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))' "
                      "2> /dev/null || echo fifo-refused; nice")
    nice = str(COMMAND_NICE)
    assert out.split() == [nice, "renice-refused", "refused", "fifo-refused", nice], out
    assert os.getpriority(os.PRIO_PROCESS, 0) < COMMAND_NICE  # the harness's own is untouched


def test_a_command_cannot_leave_the_harnesss_session(trial):
    """A session of its own would be an autogroup of its own: its processes would weigh as
    much as the harness and its judges together, whatever their nice value."""
    out = _run(trial, "setsid true 2>&1; python3 -c 'import os; os.setsid()' 2>&1 | tail -1; "
                      "echo \"group:$(cat /proc/self/autogroup 2> /dev/null)\"")
    assert "setsid failed: Operation not permitted" in out, out
    assert "PermissionError" in out, out
    group = out.splitlines()[-1].removeprefix("group:").strip()
    assert group == _harness_autogroup(), out  # the harness's autogroup


def test_git_runs_behind_judging_too(tmp_path):
    """The harness's git runs hooks the agent wrote; they get the commands' priority."""
    ws = Workspace(tmp_path, "cpu")
    for d in (ws.root, ws.home / ".cache"):
        d.mkdir(parents=True)
    ws.git("init", "-q", "-b", "main")
    hook = ws.root / ".git" / "hooks" / "post-commit"
    hook.write_text('#!/bin/sh\nnice > seen\necho "group:$(cat /proc/self/autogroup 2> /dev/null)" >> seen\n')
    hook.chmod(0o755)
    ws.commit("one")
    nice, group = (ws.root / "seen").read_text().splitlines()
    assert nice == str(COMMAND_NICE)
    assert group.removeprefix("group:").strip() == _harness_autogroup()
