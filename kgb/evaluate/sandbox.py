"""The candidate's sandbox: what the process that runs candidate code may do.

Applied by the candidate process to itself after it has imported torch and Triton (and,
on a GPU, started CUDA) and before it reads the candidate's source. Every layer is a
kernel mechanism that the process cannot undo once applied:

- Landlock: the file system is read-only and limited to the Python environment and the
  system's libraries; the candidate's workspace is the only writable place; the repo
  (operator specs, other candidates, event logs), home directories and other processes'
  /proc entries are out of reach; no TCP; no signals or abstract sockets out of the domain.
- seccomp (kgb.evaluate.seccomp_filter): no new threads, no fork, no exec (a GPU run may
  exec Triton's ptxas, and only binaries under the paths granted execute), no new socket
  (its channel to the judge and its CUDA context are open before), no ptrace, no namespace or mount changes, no io_uring (it would bypass it).
- rlimits: CPU seconds, file size, no core dumps.
- A network namespace of its own where the kernel allows one.

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


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 24, 47, 4
CAPSET = {"x86_64": 126, "aarch64": 91}  # the capset system call's number
SECCOMP_MODE_FILTER = 2


def die_with_parent() -> None:
    """Ask the kernel to kill this process when its parent dies (kill -9 of a run included)."""
    _libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)


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
READ = FS_READ_FILE | FS_READ_DIR
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1, 2


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 where Landlock is missing or disabled."""
    numbers = _SYS_LANDLOCK.get(platform.machine())
    if numbers is None:
        return 0
    version = _libc.syscall(numbers[0], None, ctypes.c_size_t(0), ctypes.c_uint32(1))
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


def _landlock(paths: Paths, abi: int, tcp_connect: tuple[int, ...] = ()) -> None:
    """Restrict this process to `paths`; no TCP but connections to the `tcp_connect` ports
    (Landlock ABI 4+; with an older ABI, TCP is not restricted by Landlock)."""
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
    ruleset = _check(_libc.syscall(create, buf, ctypes.c_size_t(size), ctypes.c_uint32(0)), "landlock_create_ruleset")
    try:
        file_only = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | (FS_TRUNCATE if abi >= 3 else 0) | (FS_IOCTL_DEV if abi >= 5 else 0)
        rules = [(p, READ) for p in paths.read] + [(p, READ | FS_EXECUTE) for p in paths.execute]
        rules += [(p, handled) for p in paths.write]
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
                _check(_libc.syscall(add_rule, ruleset, 1, rule, 0), f"landlock_add_rule {path}")
            finally:
                os.close(fd)
        for port in tcp_connect if net else ():
            rule = ctypes.create_string_buffer(struct.pack("=QQ", NET_CONNECT_TCP, port), 16)
            _check(_libc.syscall(add_rule, ruleset, 2, rule, 0), f"landlock_add_rule tcp {port}")  # LANDLOCK_RULE_NET_PORT
        _check(_libc.syscall(restrict, ruleset, 0), "landlock_restrict_self")
    finally:
        os.close(ruleset)


# ---------------------------------------------------------------------------- seccomp

def _seccomp(program: bytes) -> None:
    n = len(program) // 8
    filt = ctypes.create_string_buffer(program, len(program))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    prog = SockFprog(n, ctypes.addressof(filt))
    _check(_libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(prog), 0, 0), "seccomp")


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
    if _libc.unshare(CLONE_NEWNET) == 0:
        return None
    if _libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0:
        return None
    return f"no network namespace ({os.strerror(ctypes.get_errno())}); TCP is still refused where Landlock has it"


def confine(workspace: Path, allow_exec: bool, limits: Limits, extra_read: tuple[str, ...] = (),
            extra_write: tuple[str, ...] = ()) -> Applied:
    """Apply the sandbox to this process, as far as this machine allows. Irreversible."""
    notes = []
    _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # its memory and /proc entries stay private
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 5))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
    note = _own_network()
    if note:
        notes.append(note)
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    abi = landlock_abi()
    if abi:
        paths = default_paths(workspace, allow_exec)
        paths = Paths(paths.read + extra_read, paths.execute, paths.write + extra_write, paths.devices)
        _landlock(paths, abi)
    else:
        notes.append("Landlock is not available: the file system is not confined")
    seccomp = platform.machine() in seccomp_filter.SYSCALLS
    if seccomp:
        _seccomp(seccomp_filter.program(allow_exec))
    else:
        notes.append(f"no seccomp filter for {platform.machine()}")
    return Applied(_level(abi > 0, seccomp), notes)


def confine_shell(workspace: Path, limits: Limits | None = None, tcp_connect: tuple[int, ...] = (),
                  extra_exec: tuple[str, ...] = (), extra_read: tuple[str, ...] = ()) -> Applied:
    """The sandbox of an agent's shell command: like a candidate's, but a shell must fork and
    exec the system's programs, so its seccomp filter refuses only what would undo the rest
    (seccomp_filter.shell_program); Landlock, rlimits and a network namespace of its own keep
    it to the workspace, the system and no network, behind judging for the cores, with no
    capability. With
    `tcp_connect` (an agent CLI that talks to kgb's model proxy on the host), the host's
    network stays and Landlock allows TCP connections to those ports only."""
    limits = limits or Limits()
    notes = []
    _first_to_go()
    _behind_judging()
    _no_capabilities()
    _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 5))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
    note = None if tcp_connect else _own_network()
    if note:
        notes.append(note)
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    if platform.machine() in seccomp_filter.SYSCALLS:
        _seccomp(seccomp_filter.shell_program())
    else:
        notes.append(f"no seccomp filter for {platform.machine()}: a session of its own would put the "
                     "command's processes level with judging for the cores")
    abi = landlock_abi()
    if not abi:
        notes.append("Landlock is not available: the file system is not confined")
        return Applied(_level(False, False), notes)
    if tcp_connect and abi < 4:
        notes.append(f"Landlock ABI {abi} cannot restrict TCP: the network is open")
    paths = shell_paths(workspace, extra_exec)
    _landlock(Paths(paths.read + extra_read, paths.execute, paths.write, paths.devices), abi, tcp_connect)
    return Applied(_level(True, False), notes)


# An agent's command's nice value: a weight of 110 against a judge's 1024 (nice 0) for a core
# both want. Not 19 (a weight of 15): the agent CLIs run at it too, and at 19 a test's CLI,
# started beside a loaded host, made no model call within its 6 s wall-clock budget.
COMMAND_NICE = 10


def _behind_judging() -> None:
    """Put this process, and what it starts, behind the harness and the judges for the cores
    (COMMAND_NICE), for good: judges' verdicts run against wall-clock timeouts, and an
    agent's command that keeps every core busy would otherwise slow every other trial's
    judging; a core nobody else wants is still the command's. Raising one's own nice value
    needs no privilege; lowering it needs RLIMIT_NICE, set to none here (a host's
    limits.conf may grant some), as is RLIMIT_RTPRIO (a real-time policy). Nice values weigh
    only within one autogroup (a session, where the kernel's autogroup scheduling is on): the
    harness starts each command in its own session, a process group of its own in it, and
    the seccomp filter keeps it there (kgb.evaluate.seccomp_filter.shell_program)."""
    resource.setrlimit(resource.RLIMIT_NICE, (0, 0))
    resource.setrlimit(resource.RLIMIT_RTPRIO, (0, 0))
    os.setpriority(os.PRIO_PROCESS, 0, COMMAND_NICE)


def _no_capabilities() -> None:
    """No capability for this process nor for any program it runs, even as root: where the
    harness runs as root and the kernel refuses the command a user namespace, root's
    CAP_SYS_NICE and CAP_SYS_RESOURCE overrode the limits above (a command reniced itself to
    -20 and took SCHED_FIFO, session 44's second red team), and CAP_NET_RAW opens packet
    sockets. The bounding set is what an exec of a root program gets; dropping from it needs
    CAP_SETPCAP, which a process without capabilities has no need of."""
    try:
        last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    except (OSError, ValueError):
        last = 63
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    for cap in range(last + 1):
        _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    number = CAPSET.get(platform.machine())
    if number is not None:
        header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
        data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable, twice (64 capabilities): none
        _libc.syscall(number, header, data)


def _first_to_go() -> None:
    """Make this process, and what it starts, the kernel's first choice when the host runs
    out of memory: an agent's command that eats it is ended, not the harness, an engine or
    another trial's judge (whose candidate would be recorded as having died). Raising one's
    own score needs no privilege; a process cannot lower it again."""
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
    except OSError:
        pass  # no /proc here: the kernel chooses as it would have


def shell_paths(workspace: Path, extra_exec: tuple[str, ...] = ()) -> Paths:
    """What an agent's shell command may reach: a candidate's paths, the system's programs to
    run, and what those programs read of /etc."""
    base = default_paths(workspace, allow_exec=False)
    programs = ("/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/lib", "/usr/libexec", "/lib", "/lib64",
                "/usr/local/bin", sys.prefix, sys.base_prefix, sys.exec_prefix)
    etc = ("/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/hosts", "/etc/ssl", "/etc/alternatives",
           "/etc/gitconfig", "/etc/bash.bashrc", "/etc/profile", "/etc/inputrc", "/etc/terminfo")  # not /etc/shadow
    return Paths(base.read + etc, programs + extra_exec, base.write, base.devices)


# Where hosts keep their Unix sockets (/var/run is mostly a link to /run)
SOCKET_PLACES = ("/run", "/var/run", "/tmp", "/var/tmp")


def socket_places(paths: Paths) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The folders of SOCKET_PLACES that an agent's command's mount namespace covers, each with
    what of `paths` lies beneath it (its trial, under $TMPDIR by default; a Python environment
    or a CLI's install there), which is mounted again inside the cover. Not a folder that is a
    link, nor one that a granted path holds whole."""
    granted = [Path(p) for p in (*paths.read, *paths.execute, *paths.write)]
    places = []
    for place in map(Path, SOCKET_PLACES):
        if not place.is_dir() or place.is_symlink() or any(g == place or g in place.parents for g in granted):
            continue
        beneath = sorted({g for g in granted if place in g.parents and g.exists()})
        outermost = [g for g in beneath if not any(o in g.parents for o in beneath)]
        places.append((str(place), tuple(map(str, outermost))))
    return tuple(places)


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
