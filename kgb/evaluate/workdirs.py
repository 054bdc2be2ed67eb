"""Evaluation folders in the temporary directory. Each is named after the harness process
that made it, so that a harness that starts later removes the folders a killed one left
(SIGKILL runs no cleanup: every killed run left its evaluation in flight and its spare
judge's folder behind, workspaces of compiled kernels and copies of inputs)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

PREFIX = "kgb-eval-"


def new() -> Path:
    """A new evaluation folder of this process."""
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))


def remove_left_behind() -> list[Path]:
    """Remove this user's evaluation folders whose harness process has ended; the ones removed."""
    removed = []
    for folder in Path(tempfile.gettempdir()).glob(f"{PREFIX}*-*"):
        pid = folder.name[len(PREFIX):].partition("-")[0]
        try:
            mine = folder.lstat().st_uid == os.getuid() and folder.is_dir() and not folder.is_symlink()
        except OSError:
            continue
        if pid.isdigit() and mine and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process holds the number: not ours to judge
        return True
    return True
