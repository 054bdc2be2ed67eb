"""A bound on the processes an agent's command may run at once: a pids cgroup of its own.

RLIMIT_NPROC cannot bound one command: it counts every process of the user, the harness's
and the judges' among them, and root (kgb often runs as root on GPU hosts and in CI) has no
such limit. A fork bomb in a command, though its PID namespace ends it with the command
(kgb.agents.reaper), meanwhile took every free pid of the host, and the judges and the
harness's threads had none to start. The pids controller of a cgroup counts the command's
processes alone, whoever runs them.

The sandbox's wrapper (kgb.agents.commands) makes the cgroup before it forks the command's
side, which enters it before anything of the agent's runs; the wrapper stays outside it and
removes it when the command has ended. It is a child of the harness's own cgroup: in the
unified hierarchy (cgroup v2) where that cgroup offers the pids controller, else in a v1
pids hierarchy. Where the host lets kgb make neither (no pids controller, a read-only
cgroup file system, a user without a delegated subtree) the command runs without one, and
the job says so once at its start (kgb.run.unbounded_commands): in every command's output
the note was noise to the agent's model.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from kgb.evaluate.workdirs import alive, host_prefix

# The tasks (processes and threads: the pids controller counts both) an agent's command may
# run at once, its CLI's where the command is a CLI with the commands it runs. A compile starts
# some tens (the compiler's driver, cc1, as, ld, Triton's ptxas), node (an agent CLI) a dozen
# threads, a PyTorch process one thread a core for its CPU work: on a 128-core GPU host a
# `pytest -n 4` of such processes runs some 600. A fork bomb stops here, where the host has
# at least 32768 pids (pid_max: 1024 a core, 32768 at the least) for the harness and the
# judges; only every trial's command at its bound at once (kgb runs up to 1.25 trials a core)
# could come near the host's.
COMMAND_TASKS = 1024
# Each command's cgroup is named after the host and the wrapper that made it, so that a later
# one can tell a cgroup whose wrapper was killed (SIGKILL runs no cleanup) from one in use: a
# cgroup file system may be shared by containers, whose process numbers mean nothing here
PREFIX = "kgb-command-"
# How long the wrapper tries to remove its cgroup after the command: the kernel empties it
# when it has released the namespace's last task, a moment after the wrapper has reaped them
REMOVE_S = 2.0


class BoundKind(StrEnum):
    """Where a command's processes are counted; said with every command that has none."""

    CGROUP2 = "cgroup2"  # a child of the harness's cgroup in the unified hierarchy
    CGROUP1 = "cgroup1"  # a child of the harness's cgroup in the v1 pids hierarchy
    NONE = "none"  # the host lets kgb make no pids cgroup: as many as the user may run


@dataclass
class Bound:
    kind: BoundKind
    folder: Path | None = None  # the command's cgroup
    note: str | None = None  # where kind is NONE, why, as the job says it
    # its cgroup.procs, opened by the wrapper: the kernel weighs a write there by its opener's
    # credentials, not by those of the command's side, which is in a user namespace of its own
    procs: int | None = None

    def enter(self) -> str | None:
        """Move the calling process (the command's side, just forked) into the cgroup, which
        all it forks from then on inherits; None, or a note on why it could not."""
        if self.procs is None:
            return None
        try:
            os.write(self.procs, b"0")  # "0": the writer itself, whatever PID namespace it is in
        except OSError as e:
            return _unbounded(f"{self.folder} refused the command ({e.strerror})")
        finally:  # nothing of the agent's may move a process of its choosing
            procs, self.procs = self.procs, None
            os.close(procs)
        return None

    def remove(self) -> None:
        """Remove the cgroup, once the kernel has released what the command ran in it; a
        cgroup that stays (a task the wrapper could not end) is a later wrapper's to sweep."""
        procs, self.procs = self.procs, None
        if procs is not None:
            os.close(procs)
        if self.folder is None:
            return
        deadline = time.monotonic() + REMOVE_S
        while True:
            try:
                self.folder.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    return
                time.sleep(0.01)


def make(tasks: int = COMMAND_TASKS) -> Bound:
    """A new pids cgroup of at most `tasks` tasks for one command, a child of this process's
    own, where the host offers one; the stale ones of ended wrappers beside it are removed."""
    place = _place()
    if isinstance(place, str):
        return Bound(BoundKind.NONE, note=_unbounded(place))
    kind, parent = place
    sweep(parent)
    folder = parent / name(os.getpid())
    try:
        folder.mkdir()
    except OSError as e:
        return Bound(BoundKind.NONE, note=_unbounded(f"{folder} cannot be made ({e.strerror})"))
    try:
        (folder / "pids.max").write_text(str(tasks))
        procs = os.open(folder / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)
    except OSError as e:
        Bound(kind, folder).remove()
        return Bound(BoundKind.NONE, note=_unbounded(f"{folder} took no bound ({e.strerror})"))
    return Bound(kind, folder, procs=procs)


def sweep(parent: Path) -> list[Path]:
    """Remove the commands' cgroups under `parent` whose wrapper has ended (killed before it
    removed its own); the ones removed. A cgroup that still holds a task stays (rmdir refuses)."""
    removed = []
    try:
        names = os.listdir(parent)
    except OSError:
        return removed
    ours = host_prefix(PREFIX)
    for entry in names:
        pid = entry[len(ours):]
        if entry.startswith(ours) and pid.isdigit() and not alive(int(pid)):
            with contextlib.suppress(OSError):
                (parent / entry).rmdir()
                removed.append(parent / entry)
    return removed


def name(pid: int) -> str:
    """The name of the cgroup that wrapper `pid` of this host makes."""
    return f"{host_prefix(PREFIX)}{pid}"


def _unbounded(why: str) -> str:
    return f"no pids cgroup: {why}; the command may start as many processes as the user may"


def _place() -> tuple[BoundKind, Path] | str:
    """Where this process's commands' cgroups go: its own cgroup's folder in the hierarchy
    that holds the pids controller; or why there is none."""
    try:
        own = _own_cgroups()
        mounts = _cgroup_mounts()
    except OSError as e:
        return f"/proc tells no cgroup ({e.strerror})"
    unified = own.get("")
    if unified is not None:
        folder = _folder(mounts, "cgroup2", "", unified)
        if folder is not None and "pids" in _words(folder / "cgroup.controllers"):
            why_not = _delegate_pids(folder)
            return why_not if why_not else (BoundKind.CGROUP2, folder)
    v1 = next((path for controllers, path in own.items() if "pids" in controllers.split(",")), None)
    if v1 is None:
        return "the pids controller is in no hierarchy of this process"
    folder = _folder(mounts, "cgroup", "pids", v1)
    if folder is None:
        return "the v1 pids hierarchy is not mounted here"
    return BoundKind.CGROUP1, folder


def _delegate_pids(folder: Path) -> str | None:
    """Let `folder`'s children have the pids controller (cgroup v2); None, or why not. The
    controller is threaded, so the kernel allows it beside the harness's own processes in
    that cgroup where no domain controller (memory, io) is on for its children."""
    control = folder / "cgroup.subtree_control"
    if "pids" in _words(control):
        return None
    try:
        control.write_text("+pids")
    except OSError as e:
        return f"{control} cannot enable pids ({e.strerror})"
    return None


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup in each hierarchy, by its controllers ("" for the unified one)."""
    own = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        own[controllers] = path
    return own


@dataclass(frozen=True)
class _Mount:
    root: str  # the cgroup shown at the mount point
    point: Path
    fstype: str
    options: tuple[str, ...]  # its super options: a v1 hierarchy's controllers among them


def _cgroup_mounts() -> list[_Mount]:
    mounts = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields, _, tail = line.partition(" - ")
        mine, theirs = fields.split(), tail.split()
        if len(mine) >= 5 and len(theirs) >= 3 and theirs[0] in ("cgroup", "cgroup2"):
            mounts.append(_Mount(_unescape(mine[3]), Path(_unescape(mine[4])), theirs[0],
                                 tuple(theirs[2].split(","))))
    return mounts


def _folder(mounts: list[_Mount], fstype: str, controller: str, path: str) -> Path | None:
    """The folder of cgroup `path` under a mount of that hierarchy that shows it."""
    for mount in mounts:
        if mount.fstype != fstype or (controller and controller not in mount.options):
            continue
        inside = os.path.relpath(path, mount.root)
        if inside == "." or not inside.startswith(".."):
            folder = mount.point / inside
            if folder.is_dir():
                return folder
    return None


def _unescape(field: str) -> str:
    """A path of /proc/self/mountinfo, whose spaces and the like are octal escapes."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def _words(path: Path) -> list[str]:
    try:
        return path.read_text().split()
    except OSError:
        return []
