"""The tail of a child's output, read as it comes: memory bounded by what is kept, however
much the child prints. An agent's `yes`, or a print in a loop, once took the harness to 5.7
GB (session 45's red team); a candidate's step of the compile check could print as much
into the harness's memory before its timeout (session 49's red team)."""

from __future__ import annotations

import codecs
import os
import selectors
import subprocess
import time
from typing import IO

READ_CHUNK = 1 << 16


class Tail:
    """The last `chars` characters of a stream of bytes, decoded as UTF-8 (errors replaced,
    as `bytes.decode(errors="replace")` does the whole), and the count of those before them:
    memory bounded by the tail, whatever the stream's length."""

    def __init__(self, chars: int):
        self.chars = max(chars, 0)
        self.cut = 0  # characters dropped before the tail
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pieces: list[str] = []
        self._held = 0  # characters in _pieces

    def feed(self, data: bytes, final: bool = False) -> None:
        piece = self._decoder.decode(data, final)
        if not piece:
            return
        self._pieces.append(piece)
        self._held += len(piece)
        if self._held > 2 * self.chars + READ_CHUNK:  # trimmed now and then: amortised, not per chunk
            self._trim()

    def _trim(self) -> None:
        if self._held > self.chars:
            whole = "".join(self._pieces)
            keep = whole[len(whole) - self.chars:]
            self.cut += len(whole) - len(keep)
            self._pieces, self._held = [keep], len(keep)

    def tail(self) -> str:
        """The kept characters, no note."""
        self._trim()
        return "".join(self._pieces)

    def text(self) -> str:
        """The kept characters, after a note of how many were cut before them, if any."""
        kept = self.tail()
        return f"[... {self.cut} characters cut ...]\n" + kept if self.cut else kept


def communicate(proc: subprocess.Popen, pipes: dict[IO[bytes], Tail], timeout_s: float | None = None) -> int:
    """As `proc.communicate(timeout_s)`, with each pipe read into its Tail: every pipe read to
    its end, then `proc` waited for; its exit status. subprocess.TimeoutExpired past
    `timeout_s`, the pipes left open for a second call to read on (as communicate's are)."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    with selectors.DefaultSelector() as selector:
        for pipe in pipes:
            if not pipe.closed:
                selector.register(pipe, selectors.EVENT_READ)
        while selector.get_map():
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise subprocess.TimeoutExpired(proc.args, timeout_s or 0.0)
            for key, _ in selector.select(remaining):
                pipe = key.fileobj
                data = os.read(key.fd, READ_CHUNK)
                pipes[pipe].feed(data, final=not data)
                if not data:  # its end
                    selector.unregister(pipe)
                    pipe.close()
    return proc.wait(timeout=None if deadline is None else deadline - time.monotonic())
