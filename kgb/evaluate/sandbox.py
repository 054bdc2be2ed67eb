"""The candidate's sandbox: what the process that runs candidate code may do.

Applied by the candidate process to itself after it has imported torch and Triton (and,
on a GPU, started CUDA) and before it reads the candidate's source. Every layer is a
kernel mechanism that the process cannot undo once applied:

- Landlock: the file system is read-only and limited to the Python environment and the
  system's libraries; the candidate's workspace is the only writable place; the repo
  (operator specs, other candidates, event logs), home directories and other processes'
  /proc entries are out of reach; no device node made; no TCP; no signals or abstract
  sockets out of the domain.
- seccomp (kgb.evaluate.seccomp_filter): no new threads, no fork, no exec (a GPU run may
  exec Triton's ptxas, and only binaries under the paths granted execute), no new socket
  (its channel to the judge and its CUDA context are open before), limits, priorities, CPU
  sets and signals of itself only, no pidfd, no ptrace, no namespace or mount changes, no
  io_uring (it would bypass it).
- rlimits: CPU seconds, file size, no core dumps; no capability, even as root.
- A network namespace of its own where the kernel allows one.

The primitives the layers are built from (`apply_landlock`, `apply_seccomp`, `lock_down`)
build an agent's shell sandbox too (kgb.agents.shell_sandbox), which loosens and tightens
this one where a shell differs.

See docs/design/threat-model.md for what each layer stops.
"""

from __future__ import annotations

import ctypes
import os
import platform
import resource
import struct
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import NoReturn

from kgb.evaluate import seccomp_filter


class SandboxLevel(StrEnum):
    """How much of the sandbox this machine could apply; recorded on every job."""

    FULL = "landlock+seccomp"  # both kernel mechanisms are in force
    SECCOMP_ONLY = "seccomp"  # no Landlock: the file system is not confined
    LANDLOCK_ONLY = "landlock"  # no seccomp filter for this architecture
    NONE = "none"  # neither: the candidate runs unconfined


libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
SECCOMP_MODE_FILTER = 2
PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 24, 47, 4
CAPSET = {"x86_64": 126, "aarch64": 91}  # the capset system call's number


def die_with_parent() -> None:
    """Ask the kernel to kill this process when its parent dies (kill -9 of a run included)."""
    libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)


def exit_after(body: Callable[[], None]) -> NoReturn:
    """Run the body of a forked child, then leave without the parent's atexit handlers or
    cleanup: exit status 0, or 70 with the traceback on stderr."""
    code = 0
    try:
        body()
    except BaseException:  # noqa: BLE001 - reported on stderr, which the parent reads
        traceback.print_exc()
        code = 70
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


# ---------------------------------------------------------------------------- Landlock

_SYS_LANDLOCK = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}
FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1, 2, 4, 8
FS_ALL_V1 = (1 << 13) - 1  # execute .. make_sym
FS_REFER, FS_TRUNCATE, FS_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
# No device node made anywhere, the writable folders included: a node is opened by its own
# path, so one for /dev/kmsg (or a disk) made in the workspace read what the rules deny at
# /dev (session 46's red team, as root; the capability is dropped too)
FS_MAKE_CHAR, FS_MAKE_BLOCK = 1 << 6, 1 << 11
# Nor, for a candidate process, a FIFO or a socket file: it needs neither (Triton, PyTorch and
# the C toolchain make none; seccomp refuses it a socket anyway), and a FIFO put where the
# harness reads a report of the compile check's steps had the harness wait on it for ever
# (session 49's red team; the reader no longer waits either, kgb.evaluate.crosscompile._report)
FS_MAKE_SOCK, FS_MAKE_FIFO = 1 << 9, 1 << 10
READ = FS_READ_FILE | FS_READ_DIR
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1, 2


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 where Landlock is missing or disabled."""
    numbers = _SYS_LANDLOCK.get(platform.machine())
    if numbers is None:
        return 0
    version = libc.syscall(numbers[0], None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return max(int(version), 0)


@dataclass(frozen=True)
class Paths:
    """What the candidate process may reach on the file system."""

    read: tuple[str, ...]  # read (and list) beneath these
    execute: tuple[str, ...]  # also execute beneath these
    write: tuple[str, ...]  # full access beneath these (the workspace)
    devices: tuple[str, ...] = ()  # read, write and ioctl (GPU device files)


def default_paths(workspace: Path, allow_exec: bool) -> Paths:
    """The Python environment, system libraries and devices; the workspace writable."""
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, *(p for p in sys.path if p.endswith("-packages"))}
    read = {*prefixes, "/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/opt", "/etc/ld.so.cache",
            "/etc/localtime", "/sys", "/proc/self", "/proc/thread-self", "/dev/null", "/dev/zero",
            "/dev/urandom", "/dev/random", "/proc/cpuinfo", "/proc/meminfo", "/proc/stat"}
    execute: set[str] = set()
    if allow_exec:
        # ptxas (Triton's bundled binary), the dynamic loader, and the C toolchain with which
        # some Triton versions build a launcher per kernel signature. Not the Python binary.
        import triton

        execute |= {str(Path(triton.__file__).parent / "backends"), "/lib", "/lib64", "/usr/lib", "/usr/lib64",
                    "/usr/libexec/gcc", *(str(p) for p in Path("/usr/bin").glob("*gcc*")),
                    *(str(p) for p in Path("/usr/bin").glob("*-ld*")), "/usr/bin/cc", "/usr/bin/as", "/usr/bin/ld",
                    *_compiler_prefixes()}
    devices = tuple(str(p) for p in Path("/dev").glob("nvidia*")) + ("/dev/null",)
    return Paths(tuple(sorted(read)), tuple(sorted(execute)), (str(workspace),), devices)


def _compiler_prefixes() -> set[str]:
    """Where the C compiler Triton would call lives (it may be a toolchain under /opt): its
    bin folder and the prefix above it, whose libexec holds cc1 and the linker's helpers."""
    import shutil

    found = set()
    for name in (os.environ.get("CC"), "gcc", "cc", "clang"):
        path = shutil.which(name) if name else None
        if path:
            real = Path(path).resolve()
            found |= {str(real.parent), str(real.parent.parent / "libexec"), str(real.parent.parent / "lib")}
            found |= {str(Path(path).parent), str(real)}
            found |= _interpreter_of(real)
    found = {f for f in found if f not in ("/usr/bin", "/bin")}  # they hold python: only named tools there
    return found | {"/bin/sh", "/usr/bin/sh", "/bin/dash", "/usr/bin/dash", "/bin/bash", "/usr/bin/bash"}


def _interpreter_of(path: Path) -> set[str]:
    """A compiler that is a wrapper script runs under its #! interpreter, which needs exec too."""
    try:
        with open(path, "rb") as f:
            head = f.read(256)
    except OSError:
        return set()
    if not head.startswith(b"#!"):
        return set()
    return {head[2:].split(b"\n")[0].strip().split()[0].decode(errors="replace")}


def apply_landlock(paths: Paths, abi: int, tcp_connect: tuple[int, ...] = (), fifos_and_sockets: bool = True) -> None:
    """Restrict this process to `paths`; no TCP but connections to the `tcp_connect` ports
    (Landlock ABI 4+; with an older ABI, TCP is not restricted by Landlock). No device node
    is made anywhere, nor, without `fifos_and_sockets` (an agent's shell keeps them), a FIFO
    or a socket file."""
    create, add_rule, restrict = _SYS_LANDLOCK[platform.machine()]
    handled = FS_ALL_V1
    if abi >= 2:
        handled |= FS_REFER
    if abi >= 3:
        handled |= FS_TRUNCATE
    if abi >= 5:
        handled |= FS_IOCTL_DEV
    net = NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0
    attr = struct.pack("=QQQ", handled, net, scoped)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    buf = ctypes.create_string_buffer(attr[:size], size)
    ruleset = _check(libc.syscall(create, buf, ctypes.c_size_t(size), ctypes.c_uint32(0)), "landlock_create_ruleset")
    try:
        file_only = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | (FS_TRUNCATE if abi >= 3 else 0) | (FS_IOCTL_DEV if abi >= 5 else 0)
        rules = [(p, READ) for p in paths.read] + [(p, READ | FS_EXECUTE) for p in paths.execute]
        never_made = FS_MAKE_CHAR | FS_MAKE_BLOCK | (0 if fifos_and_sockets else FS_MAKE_SOCK | FS_MAKE_FIFO)
        rules += [(p, handled & ~never_made) for p in paths.write]
        rules += [(p, FS_READ_FILE | FS_WRITE_FILE | (FS_IOCTL_DEV if abi >= 5 else 0)) for p in paths.devices]
        for path, access in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # absent on this machine
            try:
                if not os.path.isdir(path):
                    access &= file_only
                rule = ctypes.create_string_buffer(struct.pack("=Qi", access & handled, fd), 12)
                _check(libc.syscall(add_rule, ruleset, 1, rule, 0), f"landlock_add_rule {path}")
            finally:
                os.close(fd)
        for port in tcp_connect if net else ():
            rule = ctypes.create_string_buffer(struct.pack("=QQ", NET_CONNECT_TCP, port), 16)
            _check(libc.syscall(add_rule, ruleset, 2, rule, 0), f"landlock_add_rule tcp {port}")  # LANDLOCK_RULE_NET_PORT
        _check(libc.syscall(restrict, ruleset, 0), "landlock_restrict_self")
    finally:
        os.close(ruleset)


# ---------------------------------------------------------------------------- seccomp

def apply_seccomp(program: bytes) -> None:
    """Install `program` (classic BPF, kgb.evaluate.seccomp_filter) as this process's filter."""
    n = len(program) // 8
    filt = ctypes.create_string_buffer(program, len(program))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    prog = SockFprog(n, ctypes.addressof(filt))
    _check(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(prog), 0, 0), "seccomp")


# ---------------------------------------------------------------------------- applying


def available_level() -> SandboxLevel:
    """The confinement candidates will get on this machine (checked without applying it)."""
    return _level(landlock_abi() > 0, platform.machine() in seccomp_filter.SYSCALLS)


def _level(landlock: bool, seccomp: bool) -> SandboxLevel:
    if landlock and seccomp:
        return SandboxLevel.FULL
    if seccomp:
        return SandboxLevel.SECCOMP_ONLY
    return SandboxLevel.LANDLOCK_ONLY if landlock else SandboxLevel.NONE


@dataclass
class Limits:
    cpu_s: int = 600
    file_bytes: int = 4 << 30


@dataclass
class Applied:
    level: SandboxLevel
    notes: list[str] = field(default_factory=list)


def _own_network() -> str | None:
    """A network namespace with no interfaces but loopback, where the kernel allows it."""
    CLONE_NEWNET, CLONE_NEWUSER = 0x40000000, 0x10000000
    if libc.unshare(CLONE_NEWNET) == 0:
        return None
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0:
        return None
    return f"no network namespace ({os.strerror(ctypes.get_errno())}); TCP is still refused where Landlock has it"


def lock_down(limits: Limits, own_network: bool) -> list[str]:
    """The first steps of every sandbox here, a candidate's or an agent's shell command's
    (kgb.agents.shell_sandbox): memory and /proc entries private, no core dumps, CPU and file
    size limits, a network namespace of its own where `own_network`, and no new privileges
    for it or what it runs. Returns notes on what this machine would not do."""
    notes = []
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # its memory and /proc entries stay private
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 5))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
    note = _own_network() if own_network else None
    if note:
        notes.append(note)
    drop_capabilities()  # after the network namespace, which root makes with one
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    return notes


def drop_capabilities() -> None:
    """No capability for this process nor for any program it runs, even as root. Where the
    harness runs as root, root's CAP_SYS_NICE and CAP_SYS_RESOURCE overrode the limits set
    here (an agent's command reniced itself to -20 and took SCHED_FIFO, session 44's second
    red team); a candidate process kept CAP_MKNOD, CAP_SYS_BOOT and CAP_SYS_ADMIN until
    session 46's red team, which made a node for /dev/kmsg in its workspace and read what
    Landlock denied at /dev/kmsg; and CAP_NET_RAW opens packet sockets. The bounding set is
    what an exec of a root program gets; dropping from it needs CAP_SETPCAP, which a process
    without capabilities has no need of."""
    try:
        last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    except (OSError, ValueError):
        last = 63
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    for cap in range(last + 1):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    number = CAPSET.get(platform.machine())
    if number is not None:
        header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
        data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable, twice (64 capabilities): none
        libc.syscall(number, header, data)


def first_to_go() -> None:
    """Make this process, and what it starts, the kernel's first choice when the host runs out
    of memory, whatever memory it holds. A candidate's memory need not be its own to count: a
    memory file it never maps, a reply of untouched pages that its judge reads into its own
    memory. With the score of its judge (0, until session 47's red team) a candidate that filled
    memory so had the kernel end the judge (SIGKILL, an infrastructure failure: no verdict,
    retried by every run), an engine or the harness. Raising one's own score needs no
    privilege, and Landlock leaves /proc/self read-only: it cannot be lowered again."""
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
    except OSError:
        pass  # no /proc here: the kernel chooses as it would have


def confine(workspace: Path, allow_exec: bool, limits: Limits, extra_read: tuple[str, ...] = (),
            extra_write: tuple[str, ...] = ()) -> Applied:
    """Apply the sandbox to this process, as far as this machine allows. Irreversible."""
    first_to_go()
    notes = lock_down(limits, own_network=True)
    abi = landlock_abi()
    if abi:
        paths = default_paths(workspace, allow_exec)
        paths = Paths(paths.read + extra_read, paths.execute, paths.write + extra_write, paths.devices)
        apply_landlock(paths, abi, fifos_and_sockets=False)
    else:
        notes.append("Landlock is not available: the file system is not confined")
    seccomp = platform.machine() in seccomp_filter.SYSCALLS
    if seccomp:
        apply_seccomp(seccomp_filter.program(allow_exec))
    else:
        notes.append(f"no seccomp filter for {platform.machine()}")
    return Applied(_level(abi > 0, seccomp), notes)


def exposed(path: Path, paths: Paths) -> str | None:
    """The folder among `paths` (read or execute) that holds `path`, if any does: a sandbox
    with those paths cannot hide what lies there (a checkout under /opt, a package installed
    into the Python environment)."""
    resolved = path.resolve()
    for folder in (*paths.read, *paths.execute):
        if resolved == Path(folder) or Path(folder) in resolved.parents:
            return folder
    return None


def check_hidden_from_candidates(repo: Path) -> None:
    """Raise where the candidates' sandbox cannot keep the repo from them: a checkout under a
    folder it must leave readable (/opt, /usr) would show a candidate every operator's spec,
    seeds and known-good solution."""
    if not landlock_abi():
        return  # nothing is confined, and every verdict's `sandbox` says so
    folder = exposed(repo, default_paths(Path("/nonexistent"), allow_exec=False))
    if folder is not None:
        raise ValueError(f"kgb's checkout at {repo} lies under {folder}, which the candidates' sandbox leaves "
                         "readable: a candidate could read the operators' specs and known-good solutions. "
                         "Clone kgb elsewhere to judge anything but method=expert")
