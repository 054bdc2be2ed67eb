"""Files of an agent's trial, read and written by the harness without following a link.

The agent writes its trial folder, and a link may point where its sandbox cannot reach (the
expert's solution.py, a module the harness imports); a process it left running can put one
in place of a file or folder between a look and an open. So every folder on the way is
opened with O_NOFOLLOW from the root down, and the file too: a link fails (ELOOP, ENOTDIR).
Paths are absolute and made by the harness with no link in them (the trial is resolved)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def open_nofollow(path: Path, flags: int, parents: bool = False) -> int:
    """`path` opened with `flags`, following no link; `parents`: make missing folders."""
    path = Path(path)
    if not path.is_absolute() or ".." in path.parts:
        raise OSError(errno.EINVAL, "not an absolute path without ..", str(path))
    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in path.parts[1:-1]:
            if parents:
                try:
                    os.mkdir(part, 0o755, dir_fd=fd)
                except FileExistsError:
                    pass
            child = os.open(part, _DIR, dir_fd=fd)
            os.close(fd)
            fd = child
        return os.open(path.name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644, dir_fd=fd)
    finally:
        os.close(fd)


# What the harness reads of an agent's file for a kernel (its check, the final kernel): one byte
# past the largest source the judge takes (kgb.evaluate.static.MAX_SOURCE_BYTES), so a larger one
# is still refused as too large, and a file of gigabytes does not fill the harness's memory.
KERNEL_BYTES = (1 << 20) + 1


def read_text(path: Path, max_bytes: int | None = None) -> str | None:
    """A regular file's text, of its first `max_bytes` where given; None where there is none
    (or a link, a fifo, a device)."""
    try:
        fd = open_nofollow(path, os.O_RDONLY)
    except OSError:
        return None
    with open(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return None
        return (f.read() if max_bytes is None else f.read(max_bytes)).decode(errors="replace")


def size_of(path: Path) -> int:
    """A file's size in bytes, its link's own where it is one."""
    return os.stat(path, follow_symlinks=False).st_size


def write_text(path: Path, text: str, append: bool = False, parents: bool = False) -> None:
    """Write (or append) `text` to a regular file; OSError where a link is in the way."""
    fd = open_nofollow(path, os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC), parents)
    with open(fd, "w") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        f.write(text)
