"""Running one shell command of the agent in its workspace.

This is the one place where an agent's command is executed. It runs in its own process
group (killed whole at the timeout), with the workspace as working directory and the
workspace's built-up environment (no keys, no user settings), inside the shell sandbox
(`kgb.agents.shell_sandbox.confine_shell`): the trial's folder is the only writable place,
the system and the Python environment are read-only, and there is no network. Nothing of
the repo is readable: not the operators' specs, other trials, event logs or home folders,
and not kgb's own package either, whose family modules hold the operators' known-good
solutions (kernels/, the solutions' text); the few modules the check command imports are
copied into the trial (`import_root`). A small Python step forks a child that applies the
sandbox to itself and then becomes bash, so the harness (which has threads) never confines a
forked child; the step itself stays, to end everything the command leaves running, and
gives the command a PID namespace of its own, where it can signal nothing outside
(kgb.agents.reaper), and a pids cgroup of its own, which bounds how many processes it runs at
once where the host lets kgb make one (kgb.agents.process_bound). The harness measures the
trial's folder while the command runs, and ends it and takes back what it wrote past a bound
(kgb.evaluate.disk_bound).

    python -m kgb.agents.commands [--tcp PORT] [--exec DIR] [--pythonpath PATH] [--disk-bytes N] TRIAL_DIR -- PROGRAM [ARG ...]

runs PROGRAM in that sandbox; `--tcp` keeps the host's network for TCP to PORT alone (an
agent CLI and kgb's model proxy), `--exec` grants DIR (the CLI's install) read and execute,
`--pythonpath` is PROGRAM's PYTHONPATH, `--disk-bytes` the trial folder's bound, past which
no file of PROGRAM's grows (RLIMIT_FSIZE).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from kgb.agents import process_bound, reaper
from kgb.agents.nofollow import write_text
from kgb.agents.shell_sandbox import confine_shell, shell_paths, socket_places
from kgb.evaluate import disk_bound
from kgb.evaluate.output_tail import Tail, communicate
from kgb.evaluate.sandbox import Limits
from kgb.evaluate.tree_removal import remove_tree

PACKAGE = Path(__file__).resolve().parent.parent  # kgb/
# What `./check` (kgb.agents.check) imports of kgb, and all an agent's sandbox holds of it
CHECK_MODULES = ("__init__.py", "agents/__init__.py", "agents/check.py", "agents/dialects.py", "agents/socket_address.py")


@dataclass(frozen=True)
class CommandResult:
    exit_code: int | None  # None: killed at the timeout
    output: str  # stdout and stderr together, the tail the agent is shown, and the disk bound's note if any
    duration_s: float

    @property
    def timed_out(self) -> bool:
        return self.exit_code is None


def run_command(command: str, cwd: Path, env: dict[str, str], timeout_s: float, output_chars: int,
                confine_to: Path | None = None, disk_bytes: int = disk_bound.COMMAND_DISK_BYTES) -> CommandResult:
    """Run `command` with bash in `cwd`, confined to `confine_to` (the trial's folder) if
    given; kill its whole process group at `timeout_s`, or as soon as that folder holds more
    than `disk_bytes`, and then take back what it wrote past them (kgb.evaluate.disk_bound).
    Its output is read as it comes and only its last `output_chars` characters are kept:
    `yes`, or a print in a loop, once took the harness to 5.7 GB (session 45's red team)."""
    started = time.perf_counter()
    argv = ["bash", "-c", command]
    watch = None
    if confine_to is not None:
        argv, env = confined(argv, confine_to, env, disk_bytes=disk_bytes)
        watch = disk_bound.Watch(confine_to, disk_bytes)  # before the command: what is there now is not its
    # a process group of its own (to end it whole), but the harness's session: a session of its
    # own would be an autogroup of its own, level with all of judging for the cores however
    # low its priority (kgb.agents.shell_sandbox.confine_shell)
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, process_group=0,
    )
    assert proc.stdout is not None
    out = {proc.stdout: Tail(output_chars)}
    code: int | None
    note = None
    try:
        if watch is not None:
            watch.start(lambda: reaper.stop(proc))
        try:  # proc.communicate(timeout=...), keeping only the tail
            code = communicate(proc, out, max(timeout_s, 0.1))
        except subprocess.TimeoutExpired:
            reaper.stop(proc)
            communicate(proc, out)
            code = None
        try:  # what it left running in its group, where it ran unconfined (the wrapper ended the rest)
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    finally:  # once nothing of the command runs: what it wrote cannot grow while it is taken back
        if watch is not None:
            note = watch.finish()
    output = out[proc.stdout].text()
    if note:  # after the tail, which cannot cut it
        output += ("" if output.endswith("\n") or not output else "\n") + note + "\n"
    return CommandResult(code, output, time.perf_counter() - started)


def confined(argv: list[str], trial_dir: Path, env: dict[str, str], tcp_port: int | None = None,
             exec_dirs: tuple[str, ...] = (), disk_bytes: int = disk_bound.COMMAND_DISK_BYTES,
             ) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that run `argv` inside the shell sandbox, where no
    file grows past `disk_bytes` (the trial folder's bound)."""
    # options before the folder: after it, argparse's REMAINDER would take them as the program
    # -P: not the working directory (the agent's workspace) first on the path, and -s: not the
    # user's site folder (under the agent's HOME): the wrapper runs before it confines itself,
    # and a `kgb` package or a .pth file the agent wrote there would run outside the sandbox
    wrapper = [sys.executable, "-P", "-s", "-m", "kgb.agents.commands"]
    if tcp_port is not None:
        wrapper += ["--tcp", str(tcp_port)]
    for d in exec_dirs:
        wrapper += ["--exec", d]
    wrapper += ["--disk-bytes", str(disk_bytes)]
    # the program's import path: the trial's copy of the check's modules first
    wrapper += ["--pythonpath", os.pathsep.join(filter(None, [str(import_root(trial_dir)), env.get("PYTHONPATH")]))]
    wrapper.append(str(trial_dir))
    # the wrapper's own: this checkout's package, which an editable install of another cannot shadow
    env = {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(PACKAGE.parent), env.get("PYTHONPATH")]))}
    return [*wrapper, "--", *argv], env


def import_root(trial_dir: Path) -> Path:
    """A folder in the trial holding a copy of the modules of kgb that the check command
    imports (CHECK_MODULES), as the package `kgb`: the sandbox lets the agent read nothing
    else of kgb. An editable install that points at another checkout cannot shadow it, the
    folder being first on the program's import path."""
    root = trial_dir / "pylib"
    package = root / "kgb"
    if package.is_symlink():  # a trial folder made before, which linked the whole package
        package.unlink()
    def copy() -> None:  # never through a link the agent left in the trial (kgb.agents.nofollow)
        for name in CHECK_MODULES:
            write_text(package / name, (PACKAGE / name).read_text(), parents=True)

    try:
        copy()
    except OSError:  # a link on the way: the folder made again
        if root.is_symlink():
            root.unlink()
        else:
            remove_tree(root)  # follows no link, and copes with a nest the agent left there
        copy()
    return root


def check_hidden_from_agents() -> None:
    """Raise where the shell sandbox cannot keep kgb's package from an agent: a checkout under a
    folder it must leave readable (/opt, /usr), or a copy installed into the Python environment,
    which agents' commands run. Either would show an agent the operators' known-good solutions."""
    from kgb.evaluate.sandbox import exposed, landlock_abi

    if not landlock_abi():
        return  # nothing is confined, and every command's output says so
    installed = [Path(p) / "kgb" for p in sys.path if (Path(p) / "kgb" / "aten_families").is_dir()]
    readable = shell_paths(Path("/nonexistent"))
    for package in (PACKAGE, *installed):
        folder = exposed(package, readable)
        if folder is not None:
            raise ValueError(f"kgb's package at {package} lies under {folder}, which an agent's sandbox leaves readable: "
                             "its commands could read the operators' known-good solutions there. Run agent methods "
                             "from a checkout elsewhere, installed with `pip install -e .`")


def _main(args: list[str]) -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m kgb.agents.commands")
    parser.add_argument("trial_dir", type=Path)
    parser.add_argument("--tcp", type=int, action="append", default=[])
    parser.add_argument("--exec", dest="exec_dirs", action="append", default=[])
    parser.add_argument("--pythonpath", default="")
    parser.add_argument("--disk-bytes", type=int, default=disk_bound.COMMAND_DISK_BYTES)
    parser.add_argument("program", nargs=argparse.REMAINDER)
    ns = parser.parse_args(args)
    program = ns.program[1:] if ns.program[:1] == ["--"] else ns.program

    # one file past the trial folder's bound breaches it alone: RLIMIT_FSIZE stops it there, so
    # that what a file adds between two looks of the harness's watcher is no more than the bound
    limits = Limits(file_bytes=min(ns.disk_bytes, Limits().file_bytes))

    def command() -> NoReturn:
        applied = confine_shell(ns.trial_dir, limits, tcp_connect=tuple(ns.tcp), extra_exec=tuple(ns.exec_dirs),
                                extra_read=("/proc",) if reaper.own_proc else ())
        for note in applied.notes:
            print(f"[kgb sandbox: {note}]", file=sys.stderr, flush=True)
        os.environ["PYTHONPATH"] = ns.pythonpath
        try:
            os.execvp(program[0], program)
        except OSError as e:
            print(f"{program[0]}: {e.strerror}", file=sys.stderr, flush=True)
            os._exit(127)

    # made before the fork, so that the command's side enters it before anything else; where
    # the host lets kgb make none, the job says so once (kgb.run.unbounded_commands), not
    # every command's output to the agent
    bound = process_bound.make()
    # the wrapper stays, to end whatever the command leaves running
    reaper.supervise(command, hide=socket_places(shell_paths(ns.trial_dir, tuple(ns.exec_dirs))), bound=bound)


if __name__ == "__main__":
    _main(sys.argv[1:])
