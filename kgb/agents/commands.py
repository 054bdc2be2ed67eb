"""Running one shell command of the agent in its workspace.

This is the one place where an agent's command is executed, so that the judge's sandbox
can be put here without touching the drivers. Today it is a plain subprocess: its own
process group (killed whole at the timeout), the workspace as working directory and the
workspace's built-up environment (no keys, no user settings). It does not stop a command
from reading or writing files elsewhere; the sandbox will.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CommandResult:
    exit_code: int | None  # None: killed at the timeout
    output: str  # stdout and stderr together, the tail the agent is shown
    duration_s: float

    @property
    def timed_out(self) -> bool:
        return self.exit_code is None


def run_command(command: str, cwd: Path, env: dict[str, str], timeout_s: float, output_chars: int) -> CommandResult:
    """Run `command` with bash in `cwd`; kill its whole process group at `timeout_s`."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        ["bash", "-c", command], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
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
