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

import itertools
import json
import os
import stat
import subprocess
import sys
from collections import Counter, deque
from dataclasses import dataclass
from pathlib import Path

from kgb.agents.commands import confined
from kgb.agents.nofollow import KERNEL_BYTES, open_nofollow, read_text
from kgb.agents.reaper import stop
from kgb.evaluate import workdirs
from kgb.evaluate.output_tail import Tail, communicate
from kgb.evaluate.tree_removal import remove_tree
from kgb.operators import REPO_ROOT, Problem
from kgb.tracking.blobs import BlobStore

KERNEL = "kernel.py"
SNAPSHOT_MAX_BYTES = 1_000_000  # bigger files (a profiler dump) are left out of snapshots
# A snapshot's bounds, far above what a kernel workspace holds (a dozen files, some 100 KB: the
# task, the protocol, kernel.py, check, the harness's tables, the agent's notes and scripts).
# Until session 45 every file up to 1 MB was copied into the blob store at every snapshot,
# binaries too, inflated by their decoding: 100 MB of random files became 181 MB of blobs.
SNAPSHOT_MAX_FILES = 1_000
SNAPSHOT_MAX_TOTAL = 16_000_000  # bytes of all the files' text together
SNAPSHOT_MAX_ENTRIES = 20_000  # files and folders looked at: the walk's own memory
# What a snapshot left out and why, beside its files in the manifest (a name the agent's own
# file cannot take: such a file is left out)
SNAPSHOT_NOTE = "kgb-snapshot-left-out.txt"
NOTE_PATHS = 50  # files the note names; the rest are counted
GIT_OUTPUT_CHARS = 64_000  # the tail of git's stdout and stderr the harness keeps (a hook's output)
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
        remove_tree(self.trial_dir)

    def resolve(self, path: str) -> Path:
        """`path` (relative to the workspace, or absolute inside it), or OutsideWorkspace."""
        target = (self.root / path).resolve()
        if target != self.root and self.root not in target.parents:
            # in words without the workspace's own path, which the agent does not need (its tools
            # take relative paths); the log writes that path as TRIAL_DIR anyway, so a resumed
            # trial's requests match whatever a message says (kgb.models.model.TrialModel)
            raise OutsideWorkspace(f"{path}: outside the workspace; only files under the workspace (the "
                                   "commands' working directory) can be used")
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
        # core.fsmonitor, filters), and git runs what they name; their output, however long,
        # leaves the harness a bounded tail (kgb.evaluate.output_tail.Tail)
        argv, env = confined(["git", *args], self.trial_dir, self.env())
        proc = subprocess.Popen(argv, cwd=self.root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, process_group=0)
        assert proc.stdout is not None and proc.stderr is not None
        pipes = {proc.stdout: Tail(GIT_OUTPUT_CHARS), proc.stderr: Tail(GIT_OUTPUT_CHARS)}
        try:
            communicate(proc, pipes, GIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            stop(proc)  # git, and what a hook of the agent's started
            communicate(proc, pipes)
            raise RuntimeError(f"git {' '.join(args)} ran past {GIT_TIMEOUT_S} s: "
                               f"{pipes[proc.stderr].tail().strip()[-500:]}") from None
        if proc.returncode != 0:
            raise RuntimeError(f"git {' '.join(args)} failed: {pipes[proc.stderr].tail().strip()[-500:]}")
        return pipes[proc.stdout].tail().strip()

    def commit(self, message: str) -> str:
        """Commit every change (even none) and return the commit's hash."""
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")

    def restore_kernel(self, commit: str) -> None:
        """kernel.py as it was at `commit` (the other files stay: notes, logs)."""
        self.git("checkout", commit, "--", KERNEL)

    # --- snapshots ---

    def snapshot(self, blobs: BlobStore) -> tuple[str, int]:
        """Store the workspace's files as blobs; return the manifest's blob hash and the count
        of files stored. Within the bounds above: text files only (a NUL byte makes a file
        binary), kernel.py first, then the folders breadth first; the manifest's entry
        SNAPSHOT_NOTE, if any, names what was left out and why."""
        manifest: dict[str, str] = {}
        left_out: list[tuple[str, str]] = []
        total = 0
        paths, walk_note = self._walk(left_out)
        for rel in paths:
            if len(manifest) >= SNAPSHOT_MAX_FILES:
                left_out.append((rel, f"past {SNAPSHOT_MAX_FILES} files"))
                continue
            data, why = _read_bounded(self.root / rel, SNAPSHOT_MAX_BYTES, SNAPSHOT_MAX_TOTAL - total)
            if data is None:
                left_out.append((rel, why))
                continue
            text = data.decode(errors="replace")
            size = len(text.encode())  # stored: an invalid byte takes three
            if total + size > SNAPSHOT_MAX_TOTAL:
                left_out.append((rel, f"past {SNAPSHOT_MAX_TOTAL} bytes in all"))
                continue
            total += size
            manifest[rel] = blobs.put(text)
        stored = len(manifest)
        if left_out or walk_note:
            manifest[SNAPSHOT_NOTE] = blobs.put(_note(left_out, walk_note))
        return blobs.put(json.dumps(manifest, indent=1, sort_keys=True)), stored

    def _walk(self, left_out: list[tuple[str, str]]) -> tuple[list[str], str]:
        """The workspace's files as relative paths, kernel.py first, then breadth first in name
        order (what the bounds cut is what lies deepest); .git and __pycache__ not entered.
        Links and other non-files go to `left_out`. At most SNAPSHOT_MAX_ENTRIES entries are
        looked at: past them, the walk stops and says so (the second value)."""
        kernel = self.kernel.is_file() and not self.kernel.is_symlink()
        files: list[str] = [KERNEL] if kernel else []
        folders: deque[str] = deque([""])
        room = SNAPSHOT_MAX_ENTRIES
        while folders and room > 0:
            folder = folders.popleft()
            try:  # never through a link the agent put in place of a folder (kgb.agents.nofollow)
                fd = open_nofollow(self.root / folder, os.O_RDONLY | os.O_DIRECTORY)
            except OSError as e:
                left_out.append((folder, f"a folder that could not be read ({e.strerror})"))
                continue
            try:
                with os.scandir(fd) as it:
                    entries = list(itertools.islice(it, room + 1))
            finally:
                os.close(fd)
            full = len(entries) > room
            entries = sorted(entries[:room], key=lambda e: e.name)
            room -= len(entries)
            for entry in entries:
                rel = f"{folder}/{entry.name}" if folder else entry.name
                if entry.name in (".git", "__pycache__") or (rel == KERNEL and kernel):
                    continue
                if entry.is_symlink():
                    left_out.append((rel, "a link"))
                elif entry.is_dir(follow_symlinks=False):
                    folders.append(rel)
                elif not entry.is_file(follow_symlinks=False):
                    left_out.append((rel, "not a regular file"))
                elif rel == SNAPSHOT_NOTE:
                    left_out.append((rel, "its name is the harness's, for this note"))
                else:
                    files.append(rel)
            if full or (room == 0 and folders):
                return files, (f"The walk of the workspace stopped after {SNAPSHOT_MAX_ENTRIES} files and folders: "
                               "what lies past them is neither stored nor named here.")
        return files, ""

    def read_kernel(self) -> str:
        return read_text(self.kernel, max_bytes=KERNEL_BYTES) or ""


def _read_bounded(path: Path, max_bytes: int, room: int) -> tuple[bytes | None, str]:
    """A regular file's bytes if it is text (no NUL byte) of at most `max_bytes` and fits in
    `room`; else None and why. Reads no more than that, following no link."""
    try:
        fd = open_nofollow(path, os.O_RDONLY)
    except OSError as e:
        return None, f"could not be read ({e.strerror})"
    with open(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            return None, "not a regular file"
        if st.st_size > max_bytes:
            return None, f"over {max_bytes} bytes"
        if st.st_size > room:
            return None, f"past {SNAPSHOT_MAX_TOTAL} bytes in all"
        data = f.read(max_bytes + 1)  # it may have grown since
    if len(data) > max_bytes:
        return None, f"over {max_bytes} bytes"
    if b"\0" in data:
        return None, "binary (a NUL byte)"
    return data, ""


def _note(left_out: list[tuple[str, str]], walk_note: str) -> str:
    """The snapshot's note of the files it left out: the first NOTE_PATHS by name, a count
    for each reason."""
    def shown(rel: str) -> str:  # a name that is not UTF-8 as its escapes
        return os.fsencode(rel).decode(errors="backslashreplace")

    lines = [f"kgb left {len(left_out)} of the workspace's files out of this snapshot:"]
    lines += [f"{shown(rel)}: {why}" for rel, why in sorted(left_out)[:NOTE_PATHS]]
    if len(left_out) > NOTE_PATHS:
        lines.append(f"[... {len(left_out) - NOTE_PATHS} more not named]")
    lines.append("In all: " + "; ".join(f"{why}: {n}" for why, n in Counter(why for _, why in left_out).items()))
    if walk_note:
        lines.append(walk_note)
    return "\n".join(lines) + "\n"
