"""Evaluation folders in the temporary directory. Each is named after the host and harness
process that made it, so that a harness that starts later removes the folders a killed one
left (SIGKILL runs no cleanup: every killed run left its evaluation in flight and its spare
judge's folder behind, workspaces of compiled kernels and copies of inputs). The host is in
the name because a temporary directory may be shared between hosts, where another host's
process numbers mean nothing here."""

from __future__ import annotations

import os
import socket
import tempfile
from pathlib import Path

from kgb.evaluate.tree_removal import remove_tree

PREFIX = "kgb-eval-"


def new(prefix: str = PREFIX) -> Path:
    """A new evaluation folder of this process (or another kind of folder, by its prefix:
    an agent trial's, kgb.agents.workspace)."""
    return Path(tempfile.mkdtemp(prefix=f"{host_prefix(prefix)}{os.getpid()}-"))


def remove_left_behind(prefix: str = PREFIX) -> list[Path]:
    """Remove the folders of this kind that this user made on this host whose harness process
    has ended; the ones removed. A folder left so holds what a candidate or an agent made
    there (a nest of 1,500 folders, session 49), which `remove_tree` copes with."""
    removed = []
    ours = host_prefix(prefix)
    for folder in Path(tempfile.gettempdir()).glob(f"{ours}*-*"):
        pid = folder.name[len(ours):].partition("-")[0]
        try:
            mine = folder.lstat().st_uid == os.getuid() and folder.is_dir() and not folder.is_symlink()
        except OSError:
            continue
        if pid.isdigit() and mine and not alive(int(pid)) and remove_tree(folder):
            removed.append(folder)
    return removed


def users_own(name: str) -> Path:
    """A folder of the temporary directory that this user's judges on this machine share (what
    they compile for themselves, which they load and run), which no other user can write: a
    fixed name such as /tmp/kgb-triton-driver-cache let any local user plant a launcher there
    that every judge would load. Refused where another user made it or may write it."""
    parent = Path(tempfile.gettempdir()) / f"kgb-user-{os.getuid()}"
    for folder in (parent, parent / name):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            pass
        st = folder.lstat()
        if folder.is_symlink() or st.st_uid != os.getuid() or st.st_mode & 0o022:
            raise RuntimeError(f"{folder} is not this user's own folder (owner {st.st_uid}, mode "
                               f"{oct(st.st_mode & 0o777)}): remove it, or point TMPDIR elsewhere")
    return parent / name


def host_prefix(prefix: str = PREFIX) -> str:
    """The start of this host's names of that kind (mkdtemp's random part holds no "-"): a
    folder, or an agent command's cgroup (kgb.agents.process_bound)."""
    return f"{prefix}{socket.gethostname().replace('/', '_')}-"


def alive(pid: int) -> bool:
    """Whether a process holds the number: a folder named after a dead one is a leftover."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process holds the number: not ours to judge
        return True
    return True
