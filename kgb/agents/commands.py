"""Running one shell command of the agent in its workspace.

This is the one place where an agent's command is executed. It runs in its own process
group (killed whole at the timeout), with the workspace as working directory and the
workspace's built-up environment (no keys, no user settings), inside the shell sandbox
(`kgb.evaluate.sandbox.confine_shell`): the trial's folder is the only writable place,
the system and the Python environment are read-only, kgb's own package is readable (the
check command imports it) but not the operators' specs, other trials, event logs or home
folders, and there is no network. A small Python step applies the sandbox to itself and
then becomes bash, so the harness (which has threads) never confines a forked child.

    python -m kgb.agents.commands TRIAL_DIR COMMAND
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
        argv = [sys.executable, "-m", "kgb.agents.commands", str(confine_to), command]
        env = {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(PACKAGE.parent), env.get("PYTHONPATH")]))}
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


def _confined_shell(trial_dir: str, command: str) -> None:
    applied = confine_shell(Path(trial_dir), extra_read=(str(PACKAGE),))
    for note in applied.notes:
        print(f"[kgb sandbox: {note}]", file=sys.stderr, flush=True)
    os.execvp("bash", ["bash", "-c", command])


if __name__ == "__main__":
    _confined_shell(sys.argv[1], sys.argv[2])
