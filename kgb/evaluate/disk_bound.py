"""A bound on the disk a folder a candidate or an agent writes may hold: a watcher that measures it.

RLIMIT_FSIZE bounds each file a process writes, not their sum. An agent's command keeps its
files in its trial folder until the trial ends, a candidate process in its workspace until
its evaluation ends; both lie on the disk of $TMPDIR, beside the judges' folders: one could
fill that disk (session 47's red team), and an ENOSPC the harness then meets ends a trial as
infra_error (kgb.trial.MACHINE_ERRNOS), no result and retried by every run; on a tmpfs it is
memory. A quota or a size-limited filesystem of their own would stop the writes at the bound,
but they need root or mounts, which the containers kgb runs in mostly lack.

So the harness measures the folder while the command or the evaluation runs (`Watch`): the
bytes of disk its files hold (st_blocks: a sparse file takes none), each file once however
many links it has, no link followed out of the folder. The moment it holds more than the
bound, the watcher ends what writes there: an agent's command is ended whole, as at its
timeout, and what it wrote is taken back, the most first, until the folder is under the
bound again, its output telling the agent so (kgb.agents.commands, kgb.agents.cli); a judge
is killed and its candidate rejected (kgb.evaluate). The folder is measured again once the
writer has ended, for what it wrote after the last look.

The bound is checked by polling: for the moment between two looks a writer faster than the
interval allows holds more, up to its write speed times the interval, and no file more than
RLIMIT_FSIZE, which the agents' sandbox wrapper sets no larger than the bound
(kgb.agents.commands). See docs/design/threat-model.md for what the walk does not see.
"""

from __future__ import annotations

import math
import os
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

# The bytes of disk an agent's trial folder may hold while a command runs. A trial's folder
# holds its workspace (the task, a few kernel versions, their git history: some MB), the
# Triton cache of what it compiled (its ptx and cubins, a few hundred KB a kernel and an
# autotune config: some tens of MB, a few hundred with a wide autotune) and a CLI's home (a
# session's logs: some tens of MB). 2 GiB is several times all of that together, and small
# beside the disks kgb runs on: a GPU host's 20 trials a GPU at their bound at once hold 40 GiB
# a GPU at the most.
COMMAND_DISK_BYTES = 2 << 30
# The bytes of disk a candidate's workspace may hold while it is judged: its Triton, CUDA
# and inductor caches (kgb.evaluate.environment.workspace_env), some tens of MB for an honest
# candidate, a few hundred with a wide autotune; 16-20 judges of a GPU host at their bound at
# once hold 40 GiB at the most.
WORKSPACE_DISK_BYTES = 2 << 30
# How often the folder is measured at the most: a walk of 5,000 small files in 100 folders
# (`held`) took 15 ms on a loaded 2-core host, so such a folder is measured every 0.15 s
# (WALK_SHARE), a smaller one every 0.1 s; a command writing 1 GB/s (the page cache) holds
# some 100 MB past the bound for the moment before it is ended
POLL_S = 0.1
# The share of a core the watcher may spend walking: a folder of very many files (hundreds of
# thousands, made to slow the walk) is measured less often, not at the harness's expense
WALK_SHARE = 0.1
# How deep the walk goes, holding one open folder a level: a Triton cache or a CLI's home
# nests some 5 levels; the harness's open files stay few whatever the agent nests
MAX_DEPTH = 64

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

FileId = tuple[int, int]  # (st_dev, st_ino): one file, whatever its names


@dataclass(frozen=True, slots=True)
class File:
    """A regular file of the folder that holds disk, as one walk found it."""

    parent: Path  # its folder's path, one object for all the files in it
    name: str
    allocated: int  # bytes of disk it holds (st_blocks * 512)
    size: int  # its length

    @property
    def path(self) -> Path:
        return self.parent / self.name


def held(folder: Path, files: dict[FileId, File] | None = None) -> int:
    """The bytes of disk `folder` and everything beneath it hold, each file once however
    many links it has, no link followed, folders past MAX_DEPTH levels not counted. Where
    `files` is given, each regular file that holds disk is put there (empty ones, however
    many, cost the harness no memory). Never raises OSError: what cannot be read counts
    nothing."""
    try:
        fd = os.open(folder, _DIR)  # the watched folder itself: the harness's, named without a link
    except OSError:
        return 0
    try:
        return os.fstat(fd).st_blocks * 512 + _beneath(fd, folder, 1, set(), files)
    finally:
        os.close(fd)


def _beneath(fd: int, path: Path, depth: int, linked: set[FileId], files: dict[FileId, File] | None) -> int:
    """What the entries of the open folder `fd` (at `path`) hold, those of its folders with them."""
    try:
        with os.scandir(fd) as listing:  # read whole and closed: one descriptor a level
            entries = list(listing)
    except OSError:
        return 0
    total = 0
    for entry in entries:
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue  # gone since the listing
        key = (st.st_dev, st.st_ino)
        if st.st_nlink > 1 and not stat.S_ISDIR(st.st_mode):  # a folder's count is its subfolders'
            if key in linked:
                continue
            linked.add(key)
        total += st.st_blocks * 512
        if stat.S_ISREG(st.st_mode) and st.st_blocks and files is not None:
            files[key] = File(path, entry.name, st.st_blocks * 512, st.st_size)
        elif stat.S_ISDIR(st.st_mode) and depth < MAX_DEPTH:
            child = _open_folder(entry.name, fd, st)
            if child is None:
                continue
            try:
                total += _beneath(child, path / entry.name, depth + 1, linked, files)
            finally:
                os.close(child)
    return total


def _open_folder(name: str, parent: int, st: os.stat_result) -> int | None:
    """Folder `name` of `parent` opened to be walked, following no link. A folder the agent
    took its owner's rights from (`chmod 0`, while a file in it is still open for writing)
    would hide what is written there: the owner, whom the harness runs as, gets them back,
    through a handle opened without following a link."""
    if st.st_mode & 0o700 != 0o700 and os.geteuid() != 0:  # root reads and lists it as it is
        try:
            handle = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
            try:
                os.chmod(f"/proc/self/fd/{handle}", stat.S_IMODE(st.st_mode) | 0o700)
            finally:
                os.close(handle)
        except OSError:
            pass
    try:
        return os.open(name, _DIR, dir_fd=parent)
    except OSError:
        return None


class Watch:
    """The disk a command keeps in its trial folder, watched while it runs: made before the
    command starts (what the folder held then is not the command's), `start`ed with how to
    end the command, `finish`ed once it has ended."""

    def __init__(self, folder: Path, bound: int = COMMAND_DISK_BYTES, writer: str = "the command"):
        self.folder = folder.resolve()  # the nofollow opens of the clean-up want no link in it
        self.bound = bound
        self.writer = writer  # what writes there, as the note names it
        self._before: dict[FileId, File] = {}
        started = time.perf_counter()
        at_start = held(self.folder, self._before)
        self._interval = _interval(time.perf_counter() - started)
        # a folder already past the bound (what an earlier writer left) may not grow, but its
        # commands run, and can remove what it holds
        self.limit = max(bound, at_start)
        self.breached = False  # the command was ended for it
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, end_command: Callable[[], None]) -> None:
        """Measure the folder every interval until `finish`, and call `end_command` (which
        returns once everything of the command has ended) the first time it holds more than
        the limit."""
        self._thread = threading.Thread(target=self._poll, args=(end_command,), daemon=True, name="disk-bound")
        self._thread.start()

    def _poll(self, end_command: Callable[[], None]) -> None:
        while not self._done.wait(self._interval):
            started = time.perf_counter()
            total = held(self.folder)
            self._interval = _interval(time.perf_counter() - started)
            if total > self.limit:
                self.breached = True
                end_command()
                return

    def finish(self) -> str | None:
        """Once the command has ended: stop watching, and where the folder holds more than the
        limit, take back what the command wrote; the line that tells the agent, or None."""
        self._done.set()
        if self._thread is not None:
            self._thread.join()
        if held(self.folder) <= self.limit and not self.breached:
            return None
        now: dict[FileId, File] = {}  # walked again for its files, only where they are wanted
        total = held(self.folder, now)
        taken = self._take_back(now, total)
        return self._note(total, taken, held(self.folder))

    def _take_back(self, now: dict[FileId, File], total: int) -> list[Taken]:
        """Bring the folder under the limit with what the command wrote, the most first: a
        file it made is removed; a file older than the command that it grew is cut back to its
        length before it (an appended log keeps what it held), and removed if that freed too
        little (space it preallocated past that length); one that held no disk before counts
        as made. A file older than the command that it did not grow is never touched: what was
        there before is not the command's to lose."""
        added = []
        for key, file in now.items():
            was = self._before.get(key)
            if was is None or file.allocated > was.allocated:
                added.append((file.allocated - (was.allocated if was else 0), key, file, was))
        added.sort(key=lambda a: a[0], reverse=True)
        taken = []
        for _, key, file, was in added:
            if total <= self.limit:
                break
            done = _take(self.folder, file, key, was)
            if done is not None:
                total -= done.freed
                taken.append(done)
        return taken

    def _note(self, total: int, taken: list[Taken], after: int) -> str:
        """One line: what the folder held, its bound, what was taken back, what it holds now."""
        limit = _size(self.limit) + (f" (its size when {self.writer} started, already past the bound of "
                                     f"{_size(self.bound)})" if self.limit > self.bound else "")
        ended = f"{self.writer} was ended and" if self.breached else f"after {self.writer},"
        if taken:
            names = ", ".join(t.describe(self.folder) for t in taken[:SHOWN])
            more = f" and {len(taken) - SHOWN} more" if len(taken) > SHOWN else ""
            what = f"{ended} what it added was taken back: {names}{more}"
        else:
            what = f"{ended} nothing it added could be taken back"
        return (f"[kgb disk bound: the folder {self.folder} held {_size(total)}, past its bound of {limit}: "
                f"{what}; it now holds {_size(after)}]")


SHOWN = 5  # files named in the note


class Taken(NamedTuple):
    """A file the clean-up took back: removed, or cut back to its length before the command."""

    file: File
    freed: int  # bytes of disk
    cut_to: int | None = None  # the length it was cut back to; None: removed

    def describe(self, folder: Path) -> str:
        name = self.file.path.relative_to(folder)
        if self.cut_to is None:
            return f"{name} ({_size(self.file.allocated)}, removed)"
        return f"{name} ({_size(self.file.allocated)}, cut back to its {self.cut_to} bytes before the command)"


def _take(top: Path, file: File, key: FileId, was: File | None) -> Taken | None:
    """Remove `file`, or cut it back to `was`'s length, if it is still the file `key`, found
    by opening each folder on the way down from `top` without following a link; None where
    it is not."""
    try:
        parent = _open_beneath(top, file.parent)
    except (OSError, ValueError):
        return None
    try:
        name = file.name
        if was is not None:
            cut = _cut_back(name, parent, key, was)
            if cut is not None:
                return Taken(file, file.allocated - cut, was.size)
        st = os.stat(name, dir_fd=parent, follow_symlinks=False)
        if (st.st_dev, st.st_ino) != key:
            return None
        os.unlink(name, dir_fd=parent)
        return Taken(file, file.allocated)
    except OSError:
        return None
    finally:
        os.close(parent)


def _open_beneath(top: Path, folder: Path) -> int:
    """`folder`, inside `top`, opened from `top` down one folder at a time, following no link:
    what a writer left running may put a link in place of a folder between a look and an open."""
    fd = os.open(top, _DIR)
    try:
        for part in folder.relative_to(top).parts:
            child = os.open(part, _DIR, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _cut_back(name: str, parent: int, key: FileId, was: File) -> int | None:
    """Cut file `name` of `parent` back to `was`'s length; the bytes of disk it holds then, or
    None where that is more than before (or it could not be cut: one the agent made
    unwritable, which is removed instead)."""
    try:
        fd = os.open(name, os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=parent)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != key:
            return None
        os.ftruncate(fd, was.size)
        left = os.fstat(fd).st_blocks * 512
    except OSError:
        return None
    finally:
        os.close(fd)
    return left if left <= was.allocated else None


def _interval(walk_s: float) -> float:
    return max(POLL_S, walk_s / WALK_SHARE)


def _size(n: int) -> str:
    """`n` bytes in GiB or MiB, rounded up: a folder just past its bound does not read as at it."""
    unit, name = (1 << 30, "GiB") if n >= 1 << 30 else (1 << 20, "MiB")
    return f"{math.ceil(n * 10 / unit) / 10:.1f} {name}"
