"""The workspace of one agent trial: a git repository the agent works in, beside its own
HOME, with the task, the protocol, kernel.py and the check command.

Layout of a trial's directory (a fresh temporary directory, removed after the trial; its
files reach the log as snapshots):

    workspace/   git repository: TASK.md, PROTOCOL.md, kernel.py, check, notes the agent writes
    home/        HOME and XDG dirs of every process the agent starts (no user settings)
    check.sock   the harness's check server (kgb/agents/checks.py)

The agent's file tools resolve paths inside workspace/ only; its commands run there with
an environment built from nothing but what they need (no keys, no user config).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from kgb.agents.commands import confined
from kgb.agents.nofollow import read_text
from kgb.agents.reaper import stop
from kgb.evaluate import workdirs
from kgb.operators import REPO_ROOT, Problem
from kgb.tracking.blobs import BlobStore

KERNEL = "kernel.py"
SNAPSHOT_MAX_BYTES = 1_000_000  # bigger files (a profiler dump) are left out of snapshots
GIT_TIMEOUT_S = 60
# A trial's folder in the temporary directory, named after the host and harness process that
# made it (kgb.evaluate.workdirs): a run that ends as it should removes it, and one killed or
# ended by Ctrl-C (os._exit) left it behind, a git repository each, until session 44
PREFIX = "kgb-agent-"
_swept = False
CHECK_SCRIPT = f"""#!/bin/sh
# kgb's check tool: judges kernel.py (or the file given) on the cases you may see.
exec "{sys.executable}" -m kgb.agents.check "$@"
"""


def _sweep_once() -> None:
    """Remove the trial folders that ended harness processes of this user on this host left."""
    global _swept
    if not _swept:
        _swept = True
        workdirs.remove_left_behind(PREFIX)


class OutsideWorkspace(ValueError):
    """A path that leaves the workspace."""


def task_text(problem: Problem) -> str:
    """TASK.md: what the Problem lets a method see, for an agent that works in files."""
    parts = [
        f"# Implement `{problem.name}` (`{problem.op}`) with Triton kernels\n",
        problem.task.strip(),
        "\n## Entry points\n\nDefine these Python functions in `kernel.py`, with exactly these signatures. "
        "They are called in place of the operator, with the same arguments:\n",
        f"```python\n{problem.signatures.strip()}\n```",
    ]
    if problem.reference.strip():
        parts.append(f"\n## Reference semantics (PyTorch)\n\n```python\n{problem.reference.strip()}\n```")
    if problem.chip_notes.strip():
        parts.append(f"\n## Target chip\n\n{problem.chip_notes.strip()}")
    parts.append(
        "\n## Rules\n\n- The computation must happen in Triton kernels (`@triton.jit`) that the entry points launch; "
        "use torch only to allocate outputs and read shapes, strides and dtypes.\n"
        "- Handle every shape, stride, dtype and edge case the task describes, including sizes that are not "
        "multiples of your block sizes.\n- Do not modify inputs unless the task says so.\n"
        "- `./check` judges `kernel.py` on the cases you may see; the final judgement also uses cases you never see."
    )
    return "\n".join(parts) + "\n"


@dataclass
class Workspace:
    trial_dir: Path
    device: str  # the job's torch device type; cpu runs Triton in its interpreter

    @property
    def root(self) -> Path:
        return self.trial_dir / "workspace"

    @property
    def home(self) -> Path:
        return self.trial_dir / "home"

    @property
    def socket(self) -> Path:
        return self.trial_dir / "check.sock"

    @property
    def kernel(self) -> Path:
        return self.root / KERNEL

    @classmethod
    def create(cls, problem: Problem, protocol: str, kernel: str, device: str) -> Workspace:
        _sweep_once()
        ws = cls(workdirs.new(PREFIX).resolve(), device)
        ws.root.mkdir()
        for d in (ws.home, ws.home / ".config", ws.home / ".cache"):
            d.mkdir(parents=True, exist_ok=True)
        (ws.root / "TASK.md").write_text(task_text(problem))
        (ws.root / "PROTOCOL.md").write_text(protocol)
        ws.kernel.write_text(kernel)
        check = ws.root / "check"
        check.write_text(CHECK_SCRIPT)
        check.chmod(0o755)
        (ws.root / ".gitignore").write_text("__pycache__/\n*.pyc\n")
        ws.git("init", "-q", "-b", "main")
        ws.commit("the task")
        return ws

    def remove(self) -> None:
        shutil.rmtree(self.trial_dir, ignore_errors=True)

    def resolve(self, path: str) -> Path:
        """`path` (relative to the workspace, or absolute inside it), or OutsideWorkspace."""
        target = (self.root / path).resolve()
        if target != self.root and self.root not in target.parents:
            raise OutsideWorkspace(f"{path}: outside the workspace; only files under {self.root} can be used")
        if ".git" in target.relative_to(self.root).parts:
            raise OutsideWorkspace(f"{path}: the workspace's git metadata is the harness's")
        return target

    def env(self, check_ticket: str = "") -> dict[str, str]:
        """The environment of the agent's processes: built up, not filtered down, so that no
        key or user setting of the harness's environment can reach them."""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "TMPDIR": str(self.home / ".cache"),
            "LANG": "C.UTF-8",
            "PYTHONPATH": str(REPO_ROOT),
            "PYTHONDONTWRITEBYTECODE": "1",
            "TRITON_CACHE_DIR": str(self.home / ".cache" / "triton"),
            "KGB_CHECK_SOCKET": str(self.socket),
            "KGB_CHECK_TICKET": check_ticket,
            "GIT_AUTHOR_NAME": "agent", "GIT_AUTHOR_EMAIL": "agent@kgb.invalid",
            "GIT_COMMITTER_NAME": "agent", "GIT_COMMITTER_EMAIL": "agent@kgb.invalid",
        }
        if self.device == "cpu":
            env["TRITON_INTERPRET"] = "1"
        return env

    # --- git: the harness's record of versions, and the revert of keep-or-revert methods ---

    def git(self, *args: str) -> str:
        # in the agent's sandbox: .git and HOME are the agent's to write (hooks, core.hooksPath,
        # core.fsmonitor, filters), and git runs what they name
        argv, env = confined(["git", *args], self.trial_dir, self.env())
        proc = subprocess.Popen(argv, cwd=self.root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, process_group=0)
        try:
            out, err = proc.communicate(timeout=GIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            stop(proc)  # git, and what a hook of the agent's started
            out, err = proc.communicate()
            raise RuntimeError(f"git {' '.join(args)} ran past {GIT_TIMEOUT_S} s: {err.strip()[-500:]}") from None
        if proc.returncode != 0:
            raise RuntimeError(f"git {' '.join(args)} failed: {err.strip()[-500:]}")
        return out.strip()

    def commit(self, message: str) -> str:
        """Commit every change (even none) and return the commit's hash."""
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")

    def restore_kernel(self, commit: str) -> None:
        """kernel.py as it was at `commit` (the other files stay: notes, logs)."""
        self.git("checkout", commit, "--", KERNEL)

    # --- snapshots ---

    def files(self) -> dict[str, Path]:
        out = {}
        for path in sorted(self.root.rglob("*")):
            rel = path.relative_to(self.root)
            if ".git" in rel.parts or "__pycache__" in rel.parts or not path.is_file() or path.is_symlink():
                continue
            if path.stat().st_size <= SNAPSHOT_MAX_BYTES:
                out[str(rel)] = path
        return out

    def snapshot(self, blobs: BlobStore) -> tuple[str, int]:
        """Store every file as a blob; return the manifest's blob hash and the file count."""
        texts = {rel: read_text(path) for rel, path in self.files().items()}
        manifest = {rel: blobs.put(text) for rel, text in texts.items() if text is not None}
        return blobs.put(json.dumps(manifest, indent=1, sort_keys=True)), len(manifest)

    def read_kernel(self) -> str:
        return read_text(self.kernel) or ""
