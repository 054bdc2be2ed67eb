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
import random
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
# a process group of its own (bash's job control; a session of its own is refused since session
# 44); its duration names it: in the command's PID namespace its pid is not ours
LEAVE = "set -m; sleep {token} > /dev/null 2>&1 < /dev/null & set +m;"


@pytest.fixture
def trial(tmp_path):
    for d in ("workspace", "home"):
        (tmp_path / d).mkdir()
    return tmp_path


@pytest.fixture
def token():
    return str(random.randrange(10**6, 10**7))


def _env(trial: Path) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "HOME": str(trial / "home"), "TMPDIR": str(trial / "home")}


def _sleeping(token: str) -> list[int]:
    """The live processes running `sleep TOKEN`, by their pids here."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")[:2]
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if cmdline == [b"sleep", token.encode()] and stat[stat.rindex(")") + 2] not in "ZX":
            found.append(int(entry))
    return found


def _running(token: str) -> bool:
    """Whether what the command left behind still runs, a moment after it returned."""
    deadline = time.monotonic() + 5  # the kernel's delivery of a kill is not instant
    while _sleeping(token) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = _sleeping(token)
    for pid in left:  # not left behind by the test either
        os.kill(pid, signal.SIGKILL)
    return bool(left)


def _started(token: str) -> None:
    deadline = time.monotonic() + 30
    while not _sleeping(token):
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_a_process_in_a_group_of_its_own_ends_with_its_command(trial, token):
    done = run_command(LEAVE.format(token=token), trial / "workspace", _env(trial), 60, 4000, confine_to=trial)
    assert done.exit_code == 0, done.output
    assert not _running(token)


def test_it_ends_when_its_command_is_killed_at_the_timeout(trial, token):
    done = run_command(LEAVE.format(token=token) + " sleep 300", trial / "workspace", _env(trial), 1.5, 4000,
                       confine_to=trial)
    assert done.timed_out
    assert done.duration_s < 30
    assert not _running(token)


def test_orphans_of_orphans_end_too(trial, token):
    """A double fork: the middle process exits at once, its child is reparented."""
    command = f"( ( {LEAVE.format(token=token)} ) & ) ; sleep 0.5"
    done = run_command(command, trial / "workspace", _env(trial), 60, 4000, confine_to=trial)
    assert done.exit_code == 0, done.output
    assert not _running(token)


def test_a_git_hooks_leftover_neither_holds_the_harness_nor_outlives_git(tmp_path, token):
    ws = Workspace(tmp_path, "cpu")
    for d in (ws.root, ws.home / ".cache"):
        d.mkdir(parents=True)
    ws.git("init", "-q", "-b", "main")
    hook = ws.root / ".git" / "hooks" / "post-commit"
    # it keeps git's stderr, which the harness reads to its end
    hook.write_text(f"#!/bin/bash\n{LEAVE.format(token=token)}\n")
    hook.chmod(0o755)
    started = time.monotonic()
    ws.commit("one")
    assert time.monotonic() - started < 30  # git's own timeout is 60 s
    assert not _running(token)


def test_the_exit_status_is_the_commands(trial):
    assert run_command("exit 3", trial / "workspace", _env(trial), 60, 4000, confine_to=trial).exit_code == 3
    argv, env = confined(["bash", "-c", "kill -TERM $$"], trial, _env(trial))
    # 128 + the signal, as a shell says, from a PID namespace's first process (which cannot die of its own)
    assert subprocess.run(argv, env=env, cwd=trial / "workspace").returncode in (-signal.SIGTERM, 128 + signal.SIGTERM)


def test_they_end_when_the_harness_is_killed(trial, token):
    """kill -9 of a run: the wrapper's parent dies without a word to it."""
    argv, env = confined(["bash", "-c", LEAVE.format(token=token) + " sleep 300"], trial, _env(trial))
    harness = subprocess.Popen([sys.executable, "-c", "import subprocess, sys, time; "
                                f"subprocess.Popen({argv!r}, env={env!r}, cwd={str(trial / 'workspace')!r}); "
                                "time.sleep(300)"])
    _started(token)
    harness.kill()
    harness.wait()
    assert not _running(token)


def _pid_namespaces() -> bool:
    """Whether this machine gives a command a PID namespace of its own (user namespaces allowed)."""
    probe = "from kgb.agents.reaper import _own_pids; print(_own_pids() is None)"
    return subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout.strip() == "True"


def test_a_command_sees_and_signals_no_process_outside_it(trial, token):
    """`kill -9 -1` or `pkill python` in an agent's command must not reach the harness, the
    engine or other trials' judges: Landlock scopes signals only from ABI 6 (Linux 6.12), and
    until session 43 an older kernel let a command kill every process of the user."""
    namespaces = _pid_namespaces()
    if not namespaces and landlock_abi() < 6:
        pytest.skip("neither a PID namespace nor Landlock's signal scoping here: kill -1 would reach this test")
    outside = subprocess.Popen(["sleep", token])
    try:
        done = run_command(f"kill -0 {os.getpid()}; kill -9 -1; echo survived", trial / "workspace", _env(trial),
                           60, 4000, confine_to=trial)
        assert "survived" in done.output, done.output
        assert outside.poll() is None  # kill -1 reached nothing outside the command
        if namespaces:
            assert "No such process" in done.output, done.output  # this test's process is not there to see
    finally:
        outside.kill()
        outside.wait()


def test_a_command_is_the_first_the_kernel_ends_when_memory_runs_out(trial, token):
    """An agent's command that eats the host's memory must not get the harness, an engine or
    another trial's judge killed in its place: it runs with the highest OOM score, which it
    cannot lower (raising one's own needs no privilege; lowering does)."""
    import threading

    ran = threading.Thread(target=run_command, args=(f"exec sleep {token}", trial / "workspace", _env(trial), 5,
                                                     4000), kwargs={"confine_to": trial})
    ran.start()
    try:
        _started(token)
        (pid,) = _sleeping(token)
        assert Path(f"/proc/{pid}/oom_score_adj").read_text().strip() == "1000"
        assert Path("/proc/self/oom_score_adj").read_text().strip() != "1000"  # not the harness's
    finally:
        ran.join()


def test_a_command_sees_its_own_processes_in_proc(trial, token):
    """`ps`, `top` and a child's /proc/self work in a command, and show its processes only: a
    procfs of its PID namespace over /proc. Until session 43 the sandbox left the host's
    /proc unreadable, but for the shell's own /proc/self: `ps` said to mount one."""
    if not _pid_namespaces():
        pytest.skip("no PID namespace here")
    outside = subprocess.Popen(["sleep", token])
    try:
        # ps once the background child has become sleep (until it execs, it is a copy of bash)
        done = run_command("sleep 30 & until [ \"$(cat /proc/$!/comm)\" = sleep ]; do :; done; "
                           "ps -e -o comm= ; cat /proc/self/stat > /dev/null && echo read-self; "
                           "ls /proc | grep -c '^[0-9]'", trial / "workspace", _env(trial), 60, 4000, confine_to=trial)
    finally:
        outside.kill()
        outside.wait()
    names = done.output.split()
    assert "ps" in names and "sleep" in names and "read-self" in names, done.output
    assert "pytest" not in done.output and token not in done.output, done.output  # nothing outside it
    assert int(names[-1]) < 10, done.output  # the init, bash, sleep, ls, grep: not the host's processes


def test_a_killed_harnesss_trial_folders_are_removed_by_the_next(monkeypatch, tmp_path):
    """A harness killed (or ended by Ctrl-C, which leaves by os._exit) left each running agent
    trial's folder in the temporary directory, a git repository each: seventeen on one machine
    in a day of tests until session 44. The next harness that makes a trial folder removes
    those whose process has ended, and no other's."""
    from kgb.agents import workspace
    from kgb.evaluate import workdirs

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    monkeypatch.setattr(workspace, "_swept", False)
    ended = subprocess.Popen(["true"])
    ended.wait()
    ours = workdirs.host_prefix(workspace.PREFIX)
    left = tmp_path / f"{ours}{ended.pid}-abc123"  # a harness process that is gone
    live = tmp_path / f"{ours}{os.getpid()}-def456"  # this one's
    other = tmp_path / "kgb-agent-xyz789"  # named before session 44: left alone
    for folder in (left, live, other):
        (folder / "workspace").mkdir(parents=True)
    workspace._sweep_once()
    assert not left.exists() and live.exists() and other.exists()
    assert workspace.PREFIX in workdirs.new(workspace.PREFIX).name  # where Workspace.create makes one
