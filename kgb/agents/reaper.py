"""The end of an agent's command: every process it started ends with it.

A process group is not enough: a process can leave it (`setsid`, a double fork) and would
keep running after its command, its CLI session and the trial, beside the next commands,
the harness's reads of the trial and other trials' timings. So the sandbox's wrapper
(kgb.agents.commands) forks the command's side (process 1 of a PID namespace of its own,
which forks the command; the command confines itself) and stays, unconfined but running
nothing of the agent's, as the command's *subreaper*:
the kernel hands it every orphan below it, whatever session the orphan made. When the
command exits, or the harness asks (SIGTERM), or the harness dies (the parent-death
signal), it kills every process below it, removes the command's pids cgroup
(kgb.agents.process_bound), and then leaves with the command's status.

The agent's processes cannot end the wrapper first, nor any other process of the user's:
the command runs in a PID namespace of its own, where they cannot name one (and, with
Landlock ABI 6 or later, their domain may signal no process outside it anyway).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from typing import NoReturn

from kgb.agents.process_bound import Bound, BoundKind
from kgb.evaluate.sandbox import landlock_abi

_libc = ctypes.CDLL(None, use_errno=True)
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 32, 4096, 1 << 14, 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNS = 0x10000000, 0x20000000, 0x00020000
ENDINGS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)  # what asks the wrapper to end the command
SWEEP_S = 5.0  # a process that forks faster than it is killed is given up on after this
# The command's pids cgroup (kgb.agents.process_bound), which the wrapper removes however it ends
_bound = Bound(BoundKind.NONE)


def supervise(child: Callable[[], NoReturn], hide: tuple[tuple[str, tuple[str, ...]], ...] = (),
              bound: Bound | None = None) -> NoReturn:
    """Fork `child` (which confines itself and becomes the command), stay as its subreaper
    until it exits, end everything below, and leave as the command did. `hide`: folders
    that the command's mount namespace covers with an empty one, each with the paths beneath
    it that stay (`_hide`). `bound`: the pids cgroup the command's side enters as it starts."""
    global _bound
    _bound = bound or Bound(BoundKind.NONE)
    parent = os.getppid()
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    for sig in ENDINGS:
        signal.signal(sig, _ended_by)
    why_not = _own_pids()
    if why_not and landlock_abi() < 6:  # without signal scoping, it is the only fence
        print(f"[kgb sandbox: {why_not}: the command's processes can signal this user's others]",
              file=sys.stderr, flush=True)
    pid = os.fork()
    if pid == 0:
        for sig in ENDINGS:
            signal.signal(sig, signal.SIG_DFL)
        _enter(_bound)
        if why_not:
            child()
        _init(child, hide)
    if os.getppid() != parent:  # the harness died before the death signal was asked for
        _ended_by(signal.SIGTERM, None)
    status = _wait_for(pid)
    end_descendants()
    _bound.remove()
    _leave(status)


def _enter(bound: Bound) -> None:
    """Put the command's side in its pids cgroup, before it runs anything of the agent's."""
    note = bound.enter()
    if note:
        print(f"[kgb sandbox: {note}]", file=sys.stderr, flush=True)


def _own_pids() -> str | None:
    """Give the children this process forks from now on a PID namespace of their own (in a
    user namespace that maps this user's ids to themselves): they see no process outside it,
    so they can signal none (`kill -9 -1`, `pkill python` reach the harness and other
    trials' judges where Landlock cannot scope signals, before ABI 6, Linux 6.12), and
    when its first process ends the kernel kills the rest. None, or why not."""
    uid, gid = os.getuid(), os.getgid()
    if _libc.unshare(CLONE_NEWUSER | CLONE_NEWPID) != 0:
        return f"no PID namespace of its own ({os.strerror(ctypes.get_errno())})"
    try:
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    except OSError as e:  # it keeps its own ids; programs see them as nobody's
        print(f"[kgb sandbox: the user namespace's ids are not mapped ({e.strerror})]", file=sys.stderr, flush=True)
    return None


def _init(child: Callable[[], NoReturn], hide: tuple[tuple[str, tuple[str, ...]], ...]) -> NoReturn:
    """Process 1 of the command's PID namespace: fork the command (process 2, where signals
    work as anywhere else: the kernel spares process 1 every signal it has no handler for),
    reap every orphan of the namespace, and leave as the command did (exit status 128 +
    the signal that killed it, as a shell says; process 1 cannot die of its own signal). Its
    end, and the wrapper's (the death signal), ends the whole namespace."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    global own_proc
    own_proc = _own_proc()
    if own_proc:
        _hide(hide)
    pid = os.fork()
    if pid == 0:
        child()
    status = _wait_for(pid)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))


# Whether the command's /proc is a procfs of its own PID namespace (`_own_proc`), which its
# sandbox may then let it read whole: set in the namespace's process 1 before it forks the command
own_proc = False


def _own_proc() -> bool:
    """Mount a procfs of this PID namespace over /proc, in a mount namespace of its own: the
    command's `ps`, `top` and a child's /proc/self then work, and show its own processes
    only (the host's /proc, which the sandbox cannot open to it, shows every process's).
    False where the kernel refuses (a container whose /proc has masked entries)."""
    return (_libc.unshare(CLONE_NEWNS) == 0
            and _libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) == 0  # nothing of it reaches the host
            and _libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None) == 0)


def _hide(places: tuple[tuple[str, tuple[str, ...]], ...]) -> None:
    """Cover each folder with an empty, read-only one, in the command's mount namespace, with
    the paths given beside it mounted again at their places inside: where a host keeps its
    Unix sockets (/run: docker's, the D-Bus, databases', a user's ssh-agent; /tmp: ssh-agent,
    X11). Landlock governs no connect() to a socket's path, nor does a network namespace, and
    until session 44 a command reached a daemon listening there. A folder whose paths cannot
    all be mounted again is left as it was."""
    for folder, keep in places:
        held = {}
        try:
            for path in keep:  # reached through a descriptor once the cover hides the path
                held[path] = os.open(path, os.O_PATH)
            _check_mount(_libc.mount(b"tmpfs", folder.encode(), b"tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                                     b"size=64k,mode=755"))
            try:
                for path, fd in held.items():
                    if os.path.isdir(f"/proc/self/fd/{fd}"):
                        os.makedirs(path, exist_ok=True)
                    else:
                        os.makedirs(os.path.dirname(path), exist_ok=True)
                        open(path, "a").close()
                    _check_mount(_libc.mount(f"/proc/self/fd/{fd}".encode(), path.encode(), None, MS_BIND | MS_REC, None))
                _check_mount(_libc.mount(None, folder.encode(), None,
                                         MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, None))
            except OSError:
                _libc.umount2(folder.encode(), MNT_DETACH)  # the cover and what was mounted inside it
        except OSError:
            pass  # this folder stays as it is
        finally:
            for fd in held.values():
                os.close(fd)


def _check_mount(result: int) -> None:
    if result != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))


def _ended_by(sig: int, _frame: object) -> NoReturn:
    end_descendants()
    _bound.remove()
    _die_of(sig)  # as the command would have, killed by the same signal


def _wait_for(pid: int) -> int:
    """Reap the orphans handed over until `pid` exits; its wait status."""
    while True:
        reaped, status = os.waitpid(-1, 0)
        if reaped == pid:
            return status


def _leave(status: int) -> NoReturn:
    """Exit with the command's exit code, or die of the signal that killed it."""
    if os.WIFEXITED(status):
        os._exit(os.WEXITSTATUS(status))
    _die_of(os.WTERMSIG(status))


def _die_of(sig: int) -> NoReturn:
    signal.signal(sig, signal.SIG_DFL)
    os.kill(os.getpid(), sig)
    os._exit(128 + sig)  # a signal this process cannot die of


def end_descendants() -> None:
    """Kill every live process below this one, until none is left (or SWEEP_S runs out)."""
    deadline = time.monotonic() + SWEEP_S
    while True:
        alive = descendants(os.getpid())
        for pid in alive:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        _reap()
        if not alive or time.monotonic() > deadline:
            return
        time.sleep(0.01)


def descendants(root: int) -> list[int]:
    """The live processes below `root`, from /proc (zombies have ended)."""
    children: dict[int, list[int]] = defaultdict(list)
    live = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue  # it ended
        state, ppid = stat[stat.rindex(")") + 2:].split()[:2]  # after the name, which may hold anything
        children[int(ppid)].append(int(entry))
        if state not in "ZX":
            live.add(int(entry))
    below, todo = [], [root]
    while todo:
        for pid in children.get(todo.pop(), ()):
            below.append(pid)
            todo.append(pid)
    return [pid for pid in below if pid in live]


def _reap() -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


def stop(proc: subprocess.Popen, grace_s: float = SWEEP_S + 2) -> None:
    """The harness's side: ask the wrapper `proc` to end its command and all below it, then
    kill its process group whatever it did (a wrapper that is not there, a plain program)."""
    proc.send_signal(signal.SIGTERM)  # not once it has been reaped: its pid may be another's by then
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace_s)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
