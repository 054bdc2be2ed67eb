"""A Unix socket's address for a path of any length.

A socket's address holds at most 107 bytes of path (`sockaddr_un`). An agent trial's check
socket lies in its trial folder, under $TMPDIR and named after the host: a deep temporary
folder or a long host name ran past it, and every agent trial ended method_error ("AF_UNIX
path too long"), counted against the method. Such a path is reached through its folder,
held open and named by /proc/self/fd, which the server's bind and the client's connect
both follow (the client's own PID namespace has its /proc: kgb.agents.commands).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

SUN_PATH_MAX = 107  # bytes of path in sockaddr_un, with room for its NUL


@contextlib.contextmanager
def address(path: str) -> Iterator[str]:
    """`path` itself where it fits a socket's address, else a short name for it that lasts
    while the context is open."""
    if len(os.fsencode(path)) <= SUN_PATH_MAX:
        yield path
        return
    folder = os.open(os.path.dirname(path) or ".", os.O_PATH | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{folder}/{os.path.basename(path)}"
    finally:
        os.close(folder)
