"""Running one shell command of the agent in its workspace.

This is the one place where an agent's command is executed. It runs in its own process
group (killed whole at the timeout), with the workspace as working directory and the
workspace's built-up environment (no keys, no user settings), inside the shell sandbox
(`kgb.evaluate.sandbox.confine_shell`): the trial's folder is the only writable place,
the system and the Python environment are read-only, kgb's own package is readable (the
check command imports it) but not the operators' specs, other trials, event logs or home
folders, and there is no network. A small Python step applies the sandbox to itself and
then becomes bash, so the harness (which has threads) never confines a forked child.

    python -m kgb.agents.commands [--tcp PORT] [--exec DIR] TRIAL_DIR -- PROGRAM [ARG ...]

runs PROGRAM in that sandbox; `--tcp` keeps the host's network for TCP to PORT alone (an
agent CLI and kgb's model proxy), `--exec` grants DIR (the CLI's install) read and execute.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from kgb.evaluate.sandbox import confine_shell

PACKAGE = Path(__file__).resolve().parent.parent  # kgb/, not the repo: the specs stay out of reach


@dataclass(frozen=True)
class CommandResult:
    exit_code: int | None  # None: killed at the timeout
    output: str  # stdout and stderr together, the tail the agent is shown
    duration_s: float

    @property
    def timed_out(self) -> bool:
        return self.exit_code is None


def run_command(command: str, cwd: Path, env: dict[str, str], timeout_s: float, output_chars: int,
                confine_to: Path | None = None) -> CommandResult:
    """Run `command` with bash in `cwd`, confined to `confine_to` (the trial's folder) if
    given; kill its whole process group at `timeout_s`."""
    started = time.perf_counter()
    argv = ["bash", "-c", command]
    if confine_to is not None:
        argv, env = confined(argv, confine_to, env)
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=max(timeout_s, 0.1))
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        code = None
    text = out.decode(errors="replace")
    if len(text) > output_chars:
        text = f"[... {len(text) - output_chars} characters cut ...]\n" + text[-output_chars:]
    return CommandResult(code, text, time.perf_counter() - started)


def confined(argv: list[str], trial_dir: Path, env: dict[str, str], tcp_port: int | None = None,
             exec_dirs: tuple[str, ...] = ()) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that run `argv` inside the shell sandbox."""
    # options before the folder: after it, argparse's REMAINDER would take them as the program
    wrapper = [sys.executable, "-m", "kgb.agents.commands"]
    if tcp_port is not None:
        wrapper += ["--tcp", str(tcp_port)]
    for d in exec_dirs:
        wrapper += ["--exec", d]
    wrapper.append(str(trial_dir))
    env = {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(import_root(trial_dir)), env.get("PYTHONPATH")]))}
    return [*wrapper, "--", *argv], env


def import_root(trial_dir: Path) -> Path:
    """A folder in the trial whose one entry, `kgb`, links to kgb's package. Inside the
    sandbox the repo's folder cannot be listed (only kgb/ under it can be read), and Python
    finds a package on a path entry by listing it; so the entry is this folder, which can
    be. An editable install that points at another checkout then cannot shadow this one."""
    root = trial_dir / "pylib"
    root.mkdir(exist_ok=True)
    if not (root / "kgb").exists():
        (root / "kgb").symlink_to(PACKAGE, target_is_directory=True)
    return root


def _main(args: list[str]) -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m kgb.agents.commands")
    parser.add_argument("trial_dir", type=Path)
    parser.add_argument("--tcp", type=int, action="append", default=[])
    parser.add_argument("--exec", dest="exec_dirs", action="append", default=[])
    parser.add_argument("program", nargs=argparse.REMAINDER)
    ns = parser.parse_args(args)
    program = ns.program[1:] if ns.program[:1] == ["--"] else ns.program
    applied = confine_shell(ns.trial_dir, extra_read=(str(PACKAGE),), tcp_connect=tuple(ns.tcp),
                            extra_exec=tuple(ns.exec_dirs))
    for note in applied.notes:
        print(f"[kgb sandbox: {note}]", file=sys.stderr, flush=True)
    os.execvp(program[0], program)


if __name__ == "__main__":
    _main(sys.argv[1:])
