"""An agent's shell sandbox: what a command of an agent (and an agent CLI) may do.

Applied by the wrapper of kgb.agents.commands to the child that then becomes the command,
before anything of the agent runs. It is the candidate's sandbox (kgb.evaluate.sandbox)
loosened where a shell needs it and tightened where a shell could do more harm: it may fork
and exec the system's programs, but it runs behind judging for the cores, first to go when
memory runs out, and with no capability even as root. Its file and network rules are
Landlock's, applied with kgb.evaluate.sandbox's primitives; its seccomp filter is
kgb.evaluate.seccomp_filter.shell_program.

See docs/design/threat-model.md for what each layer stops.
"""

from __future__ import annotations

import os
import platform
import resource
import sys
from pathlib import Path

from kgb.evaluate import seccomp_filter
from kgb.evaluate.sandbox import (
    Applied,
    Limits,
    Paths,
    SandboxLevel,
    apply_landlock,
    apply_seccomp,
    default_paths,
    landlock_abi,
    lock_down,
)


def confine_shell(workspace: Path, limits: Limits | None = None, tcp_connect: tuple[int, ...] = (),
                  extra_exec: tuple[str, ...] = (), extra_read: tuple[str, ...] = ()) -> Applied:
    """The sandbox of an agent's shell command: like a candidate's, but a shell must fork and
    exec the system's programs, so its seccomp filter refuses only what would undo the rest
    (seccomp_filter.shell_program); Landlock, rlimits and a network namespace of its own keep
    it to the workspace, the system and no network, behind judging for the cores, with no
    capability. With
    `tcp_connect` (an agent CLI that talks to kgb's model proxy on the host), the host's
    network stays and Landlock allows TCP connections to those ports only."""
    _first_to_go()
    _behind_judging()
    notes = lock_down(limits or Limits(), own_network=not tcp_connect)
    if platform.machine() in seccomp_filter.SYSCALLS:
        apply_seccomp(seccomp_filter.shell_program())
    else:
        notes.append(f"no seccomp filter for {platform.machine()}: a session of its own would put the "
                     "command's processes level with judging for the cores")
    abi = landlock_abi()
    if not abi:
        notes.append("Landlock is not available: the file system is not confined")
        return Applied(SandboxLevel.NONE, notes)
    if tcp_connect and abi < 4:
        notes.append(f"Landlock ABI {abi} cannot restrict TCP: the network is open")
    paths = shell_paths(workspace, extra_exec)
    apply_landlock(Paths(paths.read + extra_read, paths.execute, paths.write, paths.devices), abi, tcp_connect)
    # the level names the candidates' seccomp filter, which a shell's is not
    return Applied(SandboxLevel.LANDLOCK_ONLY, notes)


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
