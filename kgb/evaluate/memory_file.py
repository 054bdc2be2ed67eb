"""Memory files (memfd) that carry a message's bytes between the judge and a candidate
process: the sender copies the bytes in once, passes the file's descriptor over the socket
beside the message, and the receiver maps it (kgb.evaluate.codec decides when).

The judge's files go to its candidate process open: the judge never writes one again once
passed. A candidate process's reply goes to the judge only in a file sealed against writes
(F_SEAL_WRITE), which the kernel grants only once no writable shared mapping of it is left and
after which nobody, its maker included, can change a byte of it: what the judge checked is
what stays there (memfd_create(2), "File sealing")."""

from __future__ import annotations

import fcntl
import mmap
import os
import socket
from collections.abc import Callable
from enum import StrEnum
from multiprocessing.connection import Connection

import torch


class WireError(ValueError):
    """A message that does not describe a valid value (from a broken or hostile peer);
    kgb.evaluate.codec raises it too, under its own name."""


# A message whose buffers hold this much or more can travel in a memory file (memfd) passed
# with it over the socket: the sender copies the bytes in once (off the GPU, straight into the
# file), the receiver reads them where they lie. Through the socket they were copied into the
# kernel, out again into fresh pages, and only then onto the receiver's GPU: on the H200
# (session 22) the inputs' crossing to the candidate processes took 732 s of a 210-operator
# sweep's evaluations, more than compiling them with a warm cache.
MEMORY_FILE_MIN_BYTES = 1 << 20
# A sender's memory file is kept for its next message (`Outbox`) up to this size; a larger
# message gets a file of its own, let go of once sent (host memory: a sweep runs 16 judges
# with a candidate process each).
OUTBOX_MAX_BYTES = 1 << 30
OUTBOX_MIN_BYTES = 64 << 20  # a kept file's least size: most messages fit at once
# A candidate process makes its next reply's file's pages this many bytes at a time, looking
# for the judge's next message between two steps (`SealedOutbox.make_spare`).
SPARE_STEP_BYTES = 32 << 20
TAG = b"m"  # the one byte that carries the file's descriptor


class Accepted(StrEnum):
    """Which memory files a receiver takes a message's buffers in."""

    NONE = "none"  # only the socket
    SEALED = "sealed"  # only one sealed against writes (the judge, from its candidate process)
    ANY = "any"  # any (the candidate process, from its judge)


SIZE_SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW
WRITE_SEALS = SIZE_SEALS | fcntl.F_SEAL_WRITE


class MemoryFile:
    """A memory file of a fixed size, sealed at it (a receiver that shrank it would fault the
    sender on its next touch of the mapping), mapped here."""

    def __init__(self, fd: int, nbytes: int):
        self.fd, self.nbytes = fd, nbytes
        self.mapping = mmap.mmap(fd, nbytes, flags=mmap.MAP_SHARED)
        self.made_bytes = 0  # how far `make_pages` has made its pages

    @classmethod
    def made(cls, nbytes: int, sealed_later: bool = False) -> MemoryFile | None:
        """A new one; None where the system makes none (the message then goes through the
        socket). `sealed_later`: its writes are sealed once it is written (`seal_writes`),
        so its seals are not closed yet. Its pages are made (and zeroed) as the bytes land,
        or ahead by `make_pages`."""
        try:
            fd = os.memfd_create("kgb-message", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        except (AttributeError, OSError):  # not Linux, or a container that forbids it
            return None
        try:
            os.ftruncate(fd, nbytes)  # past the sandbox's RLIMIT_FSIZE: EFBIG (Python ignores SIGXFSZ)
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, SIZE_SEALS | (0 if sealed_later else fcntl.F_SEAL_SEAL))
            return cls(fd, nbytes)
        except OSError:
            os.close(fd)
            return None
        except BaseException:
            os.close(fd)
            raise

    def buffers(self, sizes: list[int]) -> list[torch.Tensor]:
        return buffers_over(self.mapping, sizes)

    def make_pages(self, stop: Callable[[], bool]) -> None:
        """Make its pages ahead of the bytes (the kernel makes and zeroes each page at its
        first write: one byte written per page), SPARE_STEP_BYTES at a time, until all are
        made or `stop()` says to leave the rest to land with the bytes. A file whose pages
        are all made is left as it is, with no buffer made over it."""
        if self.made_bytes >= self.nbytes:
            return
        pages = torch.frombuffer(self.mapping, dtype=torch.uint8)
        try:
            while self.made_bytes < self.nbytes and not stop():
                end = min(self.nbytes, self.made_bytes + SPARE_STEP_BYTES)
                pages[self.made_bytes:end:mmap.PAGESIZE].zero_()
                self.made_bytes = end
        finally:
            del pages  # a buffer over the mapping would keep `seal_writes` from closing it

    def seal_writes(self) -> bool:
        """Unmap it here and seal it against every write, for good; whether the kernel did.
        Every buffer over the mapping must be gone first (else the mapping stays, writable,
        and the kernel refuses the seal)."""
        try:
            self.mapping.close()
            fcntl.fcntl(self.fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SEAL)
            return True
        except (BufferError, OSError):
            return False

    def close(self) -> None:
        """The descriptor; the mapping goes with the last buffer over it."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class Outbox:
    """One sender's memory file, written again for each message to one receiver. A fresh
    file's every page faults in and is zeroed before the bytes land (256 MB sent one way on
    the 2-core machine: 0.218 s in a new file, 0.097 s in a kept one; benchmarks/wire.py). The receiver
    answers each message after it has copied the message's bytes out, and the sender writes
    the next only after that answer, so the receiver never reads half of two messages;
    what it could read of a later one from its old mapping was sent to it anyway (one outbox
    per receiver: no other process of the judge's reads what its candidate process is sent)."""

    def __init__(self) -> None:
        self._file: MemoryFile | None = None

    def file_for(self, nbytes: int) -> tuple[MemoryFile | None, bool]:
        """A file of at least `nbytes`, and whether it is this outbox's own (kept) or one for
        this message alone."""
        if nbytes > OUTBOX_MAX_BYTES:
            return MemoryFile.made(nbytes), False
        if self._file is None or self._file.nbytes < nbytes:
            grown = 2 * self._file.nbytes if self._file is not None else 0  # messages grow: bench cases come last
            self.close()
            self._file = MemoryFile.made(min(OUTBOX_MAX_BYTES, max(nbytes, OUTBOX_MIN_BYTES, grown)))
        return self._file, self._file is not None

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class SealedOutbox:
    """A candidate process's replies, each in a new file sealed once written (a sealed file is
    never written again). The file for the next reply is made once this one is sent, sized
    like it, and its pages made ahead while the judge reads the reply: making and zeroing a
    file's pages cost more than copying into them (as for the judge's kept `Outbox`). The
    candidate's sandbox starts no thread, so the process makes them itself, between messages,
    a step at a time, and stops at the judge's next message (`make_spare`): on an H100 a
    768 MB spare made whole took longer than the judge's work between two messages of
    aten::reshape, so the judge's next message waited for it (session 60)."""

    def __init__(self) -> None:
        self._spare: MemoryFile | None = None
        self._last_nbytes = 0  # the size of the last reply a file was asked for

    def file_for(self, nbytes: int) -> MemoryFile | None:
        """The spare where it holds `nbytes` and not more than twice, else a new file."""
        self._last_nbytes = nbytes
        spare, self._spare = self._spare, None
        if spare is not None and nbytes <= spare.nbytes <= 2 * nbytes:
            return spare
        if spare is not None:
            spare.close()
        return MemoryFile.made(nbytes, sealed_later=True)

    def make_spare(self, stop: Callable[[], bool] = lambda: False) -> None:
        """Make the next reply's file, the last reply's size (up to OUTBOX_MAX_BYTES), if none
        is made, and its pages until `stop()` (the judge's next message has come): those left
        are made as the reply's bytes land, as in a new file."""
        if self._spare is None and 0 < self._last_nbytes <= OUTBOX_MAX_BYTES:
            self._spare = MemoryFile.made(self._last_nbytes, sealed_later=True)
        if self._spare is not None:
            self._spare.make_pages(stop)


def pass_descriptor(conn: Connection, fd: int) -> None:
    """Send the memory file's descriptor beside the message just written to `conn`."""
    with socket.fromfd(conn.fileno(), socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        socket.send_fds(sock, [TAG], [fd])


def received_buffers(conn: Connection, sizes: list[int], accepted: Accepted) -> list[torch.Tensor]:
    """The buffers of a message that came in a memory file: mapped, not copied. The mapping
    is private, so what the receiver writes into them stays its own. With `accepted` SEALED,
    a file whose sender could still change it (its writes or its size not sealed, or not a
    memory file at all) is a WireError."""
    with socket.fromfd(conn.fileno(), socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        data, fds, _, _ = socket.recv_fds(sock, 1, 1)
    if not data:
        raise EOFError("the peer closed the connection before its memory file")
    if data != TAG or len(fds) != 1:
        for fd in fds:
            os.close(fd)
        raise WireError("a message's memory file did not come with it")
    try:
        if accepted is Accepted.SEALED and _seals(fds[0]) & WRITE_SEALS != WRITE_SEALS:
            raise WireError("a memory file its sender can still change (its writes and size not sealed)")
        total = sum(sizes)
        if total == 0 or os.fstat(fds[0]).st_size < total:
            raise WireError("a memory file that does not hold its message's buffers")
        try:
            mapped = mmap.mmap(fds[0], total, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
        except OSError as exc:  # a file of huge pages, mapped in part
            raise WireError(f"a memory file that cannot be mapped: {exc}") from exc
    finally:
        os.close(fds[0])
    return buffers_over(mapped, sizes)


def _seals(fd: int) -> int:
    try:
        return fcntl.fcntl(fd, fcntl.F_GET_SEALS)
    except OSError as exc:  # EINVAL: a descriptor of anything else (a pipe, a device, a disk file)
        raise WireError("a message's buffers in something that is not a memory file") from exc


def buffers_over(mapped: mmap.mmap, sizes: list[int]) -> list[torch.Tensor]:
    """One flat uint8 tensor per buffer, each over its own stretch of the mapping (each its
    own storage, as a buffer read from the socket is), which they keep alive."""
    buffers, offset = [], 0
    for n in sizes:
        buffers.append(torch.frombuffer(mapped, dtype=torch.uint8, count=n, offset=offset) if n
                       else torch.empty(0, dtype=torch.uint8))
        offset += n
    return buffers
