"""The candidate's seccomp filter, as the kernel's BPF bytecode (`program`): which system
calls the candidate process may make once kgb.evaluate.sandbox installs it. No new threads,
no fork, no exec (unless allowed: a GPU run may exec Triton's ptxas, vfork+exec only), no
new socket (its channel to the judge and its CUDA context are open before), signals, limits,
priorities and CPU sets only of itself, no pidfd, no ptrace, no namespace or mount changes, no
io_uring (it would bypass the filter), no new session or process group and no change of its
parent-death signal (what it starts dies with its group, and it with its judge); a system
call of another architecture's numbering is refused. docs/design/threat-model.md says what each rule stops.
"""

from __future__ import annotations

import os
import platform
import struct

AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
# name -> syscall number, per architecture (only those the filter names)
SYSCALLS = {
    "x86_64": dict(clone=56, fork=57, vfork=58, execve=59, execveat=322, clone3=435, socket=41,
                   ptrace=101, process_vm_readv=310, process_vm_writev=311, kill=62, tkill=200,
                   tgkill=234, unshare=272, setns=308, mount=165, umount2=166, pivot_root=155,
                   chroot=161, bpf=321, perf_event_open=298, userfaultfd=323, io_uring_setup=425,
                   io_uring_enter=426, io_uring_register=427, keyctl=250, add_key=248,
                   request_key=249, init_module=175, finit_module=313, kexec_load=246,
                   open_by_handle_at=304, name_to_handle_at=303, fsopen=430, fsmount=432,
                   move_mount=429, open_tree=428, personality=135, seccomp=317, setsid=112,
                   prlimit64=302, setpriority=141, sched_setaffinity=203, sched_setscheduler=144,
                   sched_setparam=142, sched_setattr=314, ioprio_set=251, migrate_pages=256,
                   move_pages=279, rt_sigqueueinfo=129, rt_tgsigqueueinfo=297, pidfd_open=434,
                   pidfd_send_signal=424, pidfd_getfd=438, process_madvise=440, process_mrelease=448,
                   kcmp=312, reboot=169, sethostname=170, setdomainname=171, prctl=157, setpgid=109,
                   fallocate=285),
    "aarch64": dict(clone=220, execve=221, execveat=281, clone3=435, socket=198, ptrace=117,
                    process_vm_readv=270, process_vm_writev=271, kill=129, tkill=130, tgkill=131,
                    unshare=97, setns=268, mount=40, umount2=39, pivot_root=41, chroot=51, bpf=280,
                    perf_event_open=241, userfaultfd=282, io_uring_setup=425, io_uring_enter=426,
                    io_uring_register=427, keyctl=219, add_key=217, request_key=218,
                    init_module=105, finit_module=273, kexec_load=104, open_by_handle_at=265,
                    name_to_handle_at=264, fsopen=430, fsmount=432, move_mount=429, open_tree=428,
                    personality=92, setsid=157, prlimit64=261, setpriority=140, sched_setaffinity=122,
                    sched_setscheduler=119, sched_setparam=118, sched_setattr=274, ioprio_set=30,
                    migrate_pages=238, move_pages=239, rt_sigqueueinfo=138, rt_tgsigqueueinfo=240,
                    pidfd_open=434, pidfd_send_signal=424, pidfd_getfd=438, process_madvise=440,
                    process_mrelease=448, kcmp=272, reboot=142, sethostname=161, setdomainname=162,
                    prctl=167, setpgid=154, fallocate=47),
}
CLONE_VM, CLONE_VFORK, CLONE_THREAD = 0x100, 0x4000, 0x10000
# System calls that act on a process named by its pid, in their first argument, or in their
# second where the first says "a process" (PRIO_PROCESS, IOPRIO_WHO_PROCESS). Landlock scopes
# none of them, and a candidate process shares the host's PID namespace: prlimit(2) on the
# harness's pid (in the name of the candidate's HOME) lowered its limits, RLIMIT_CPU to a
# second killed the engine every judge is forked from, and setpriority(2) and
# sched_setaffinity(2) reniced and pinned its judge (session 46's red team). The candidate
# may still set its own: pid 0, or its own pid.
BY_PID = ("prlimit64", "sched_setaffinity", "sched_setscheduler", "sched_setparam", "sched_setattr",
          "migrate_pages", "move_pages", "rt_sigqueueinfo", "rt_tgsigqueueinfo")
BY_WHO = {"setpriority": 0, "ioprio_set": 1}  # the `which` that names one process
# A process's file descriptors, memory or signals reached through a pidfd, which no pid check
# sees (pidfd_send_signal SIGKILLed another process where kill(2) was refused), and what root
# may do to the host itself
OTHER_PROCESSES = ("pidfd_open", "pidfd_send_signal", "pidfd_getfd", "process_madvise", "process_mrelease",
                   "kcmp", "reboot", "sethostname", "setdomainname")
# What would let a candidate's processes outlive its evaluation (session 47's red team): a
# parent-death signal cleared (prctl(PR_SET_PDEATHSIG, 0): killed from outside at its timeout,
# the judge took its candidate process along no more, which slept on past the harness's exit),
# and a session or process group of its own for what it starts (a GPU's candidate process and
# the compile check's steps may vfork and exec `sh`), which a kill of its group would miss.
# The candidate process makes its session and sets its parent-death signal before it confines
# itself; nothing it runs afterwards needs either.
PR_SET_PDEATHSIG = 1
LEAVE_THE_GROUP = ("setsid", "setpgid")
# fallocate(2) with FALLOC_FL_KEEP_SIZE takes disk without growing the file, which RLIMIT_FSIZE
# bounds: one call took any amount at once, where kgb.evaluate.disk_bound's watcher sees it only
# at its next look (session 49). Refused as a filesystem without it would, so that a program
# that asks falls back to writing; plain fallocate (mode 0) grows the file and stays bounded.
FALLOC_FL_KEEP_SIZE = 0x01
AF_INET, AF_INET6, AF_PACKET = 2, 10, 17
SOCK_STREAM, SOCK_TYPE_MASK, IPPROTO_TCP = 1, 0xF, 6
EPERM, ENOSYS, EOPNOTSUPP = 1, 38, 95
RET_ALLOW, RET_ERRNO = 0x7FFF0000, 0x00050000
_LD_W_ABS, _JEQ_K, _JSET_K, _RET_K, _JA, _ALU_AND_K = 0x20, 0x15, 0x45, 0x06, 0x05, 0x54


class _Program:
    """A tiny BPF assembler: instructions with symbolic jump targets."""

    def __init__(self) -> None:
        self.code: list[tuple] = []

    def load(self, offset: int) -> None:
        self.code.append((_LD_W_ABS, 0, 0, offset))

    def jump_if(self, op: int, k: int, true: str | None, false: str | None) -> None:
        self.code.append((op, true, false, k))

    def mask(self, k: int) -> None:
        """The accumulator ANDed with k."""
        self.code.append((_ALU_AND_K, None, None, k))

    def ret(self, value: int) -> None:
        self.code.append((_RET_K, 0, 0, value))

    def label(self, name: str) -> None:
        self.code.append(("label", name))

    @staticmethod
    def _offset(positions: dict[str, int], target: object, index: int) -> int:
        """A jump's offset: instructions to skip after the one at `index`."""
        return positions[target] - index - 1 if isinstance(target, str) else 0

    def assemble(self) -> bytes:
        positions, index = {}, 0
        for ins in self.code:
            if ins[0] == "label":
                positions[ins[1]] = index
            else:
                index += 1
        out, index = b"", 0
        for ins in self.code:
            if ins[0] == "label":
                continue
            code, jt, jf, k = ins
            out += struct.pack("=HBBI", code, self._offset(positions, jt, index), self._offset(positions, jf, index),
                               k & 0xFFFFFFFF)
            index += 1
        return out


def program(allow_exec: bool) -> bytes:
    arch = platform.machine()
    nr = SYSCALLS[arch]
    p = _Program()
    deny, nosys = RET_ERRNO | EPERM, RET_ERRNO | ENOSYS
    p.load(4)  # seccomp_data.arch
    p.jump_if(_JEQ_K, AUDIT_ARCH[arch], None, "deny")
    p.load(0)  # seccomp_data.nr
    if arch == "x86_64":
        p.jump_if(_JSET_K, 0x40000000, "deny", None)  # the x32 ABI would dodge every rule
    always_denied = ["ptrace", "process_vm_readv", "process_vm_writev", "tkill", "unshare", "setns",
                     "mount", "umount2", "pivot_root", "chroot", "bpf", "perf_event_open",
                     "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
                     "keyctl", "add_key", "request_key", "init_module", "finit_module",
                     "kexec_load", "open_by_handle_at", "name_to_handle_at", "fsopen", "fsmount",
                     "move_mount", "open_tree", "personality", "fork", *OTHER_PROCESSES, *LEAVE_THE_GROUP]
    if not allow_exec:
        always_denied += ["execve", "execveat", "vfork"]
    for name in always_denied:
        if name in nr:
            p.jump_if(_JEQ_K, nr[name], "deny", None)
    p.jump_if(_JEQ_K, nr["clone3"], "nosys", None)  # glibc falls back to clone, filtered below
    p.jump_if(_JEQ_K, nr["clone"], "clone", None)
    # No socket at all: Landlock governs no connect() to a Unix socket's path, so any daemon
    # listening under /run or /tmp was in reach (session 44's red team). What a candidate
    # process needs is open before it confines itself: its channel to the judge (a socket
    # pair) and its CUDA context, with an MPS daemon's connection where there is one.
    p.jump_if(_JEQ_K, nr["socket"], "deny", None)
    p.jump_if(_JEQ_K, nr["kill"], "kill", None)
    p.jump_if(_JEQ_K, nr["tgkill"], "tgkill", None)
    p.jump_if(_JEQ_K, nr["prctl"], "prctl", None)
    p.jump_if(_JEQ_K, nr["fallocate"], "fallocate", None)
    _to_pid_checks(p, nr)
    p.ret(RET_ALLOW)
    _fallocate_check(p)
    # prctl: any option but PR_SET_PDEATHSIG, which would let it outlive its judge
    p.label("prctl")
    p.load(16)
    p.jump_if(_JEQ_K, PR_SET_PDEATHSIG, "deny", "allow")
    # clone: flags are the first argument; a thread or a fork is refused, vfork+exec is not
    p.label("clone")
    p.load(16)
    p.jump_if(_JSET_K, CLONE_THREAD, "deny", None)
    if not allow_exec:
        p.ret(deny)
    else:
        p.jump_if(_JSET_K, CLONE_VFORK, None, "deny")
        p.jump_if(_JSET_K, CLONE_VM, "allow", "deny")
    own = os.getpid()
    _pid_checks(p, own)
    # signals only to itself (pid 0 is its own process group: it has a session of its own)
    p.label("kill")
    p.load(16)
    p.jump_if(_JEQ_K, own, "allow", None)
    p.jump_if(_JEQ_K, 0, "allow", "deny")
    p.label("tgkill")
    p.load(16)
    p.jump_if(_JEQ_K, own, "allow", "deny")
    p.label("allow")
    p.ret(RET_ALLOW)
    p.label("deny")
    p.ret(deny)
    p.label("nosys")
    p.ret(nosys)
    return p.assemble()


def _to_pid_checks(p: _Program, nr: dict[str, int]) -> None:
    """Jumps from the dispatch on the syscall's number to the checks `_pid_checks` places."""
    for name in (*BY_PID, *BY_WHO):
        p.jump_if(_JEQ_K, nr[name], name, None)


def _pid_checks(p: _Program, own: int) -> None:
    """The checks of BY_PID and BY_WHO, each at its syscall's label: on to "allow" where the
    call names this process (0, or `own`), to "deny" where it names another."""
    for name in (*BY_PID, *BY_WHO):
        p.label(name)
        if name in BY_WHO:
            p.load(16)
            p.jump_if(_JEQ_K, BY_WHO[name], None, "deny")
        p.load(24 if name in BY_WHO else 16)
        p.jump_if(_JEQ_K, 0, "allow", None)
        p.jump_if(_JEQ_K, own, "allow", "deny")


def _fallocate_check(p: _Program) -> None:
    """fallocate(fd, mode, offset, len) at its label: refused where `mode` keeps the size."""
    p.label("fallocate")
    p.load(24)
    p.jump_if(_JSET_K, FALLOC_FL_KEEP_SIZE, None, "allow")
    p.ret(RET_ERRNO | EOPNOTSUPP)


def shell_program() -> bytes:
    """The filter of an agent's shell commands, which must fork and exec: every system call but
    two kinds. setsid: a session of its own is where the kernel's autogroup scheduling would
    give a command's processes a share of the cores equal to the whole harness's, judges
    included, whatever their nice value (kgb.agents.shell_sandbox.confine_shell keeps them behind
    judging). IP sockets other than TCP streams, packet sockets, and io_uring (which makes
    sockets past this filter): an agent CLI keeps the host's network to reach kgb's model
    proxy, and Landlock limits plain TCP alone; a datagram reached any host until session 44
    (DNS tunnelling, QUIC), as did an MPTCP stream to any port. And the calls that act on a
    process by its pid (BY_PID, BY_WHO) on the calling process only (pid 0): where the kernel
    refuses the command a PID namespace of its own (kgb.agents.reaper), the harness's pid is
    in reach, and a confined command lowered its limits with prlimit(2) (session 46's red
    team). `renice -p` or `taskset -p` of another of the command's processes is refused too."""
    arch = platform.machine()
    nr = SYSCALLS[arch]
    p = _Program()
    p.load(4)  # seccomp_data.arch
    p.jump_if(_JEQ_K, AUDIT_ARCH[arch], None, "deny")  # another numbering would dodge the rules
    p.load(0)  # seccomp_data.nr
    if arch == "x86_64":
        p.jump_if(_JSET_K, 0x40000000, "deny", None)  # the x32 ABI
    for name in ("setsid", "io_uring_setup", "io_uring_enter", "io_uring_register"):
        p.jump_if(_JEQ_K, nr[name], "deny", None)
    p.jump_if(_JEQ_K, nr["socket"], "socket", None)
    p.jump_if(_JEQ_K, nr["fallocate"], "fallocate", None)
    _to_pid_checks(p, nr)
    p.ret(RET_ALLOW)
    _fallocate_check(p)
    _pid_checks(p, 0)
    p.label("socket")  # socket(domain, type, protocol): an IP socket only for TCP
    p.load(16)
    p.jump_if(_JEQ_K, AF_PACKET, "deny", None)  # raw frames, where the command has the host's network
    p.jump_if(_JEQ_K, AF_INET, "ip", None)
    p.jump_if(_JEQ_K, AF_INET6, "ip", "allow")
    p.label("ip")
    p.load(24)
    p.mask(SOCK_TYPE_MASK)  # less SOCK_NONBLOCK and SOCK_CLOEXEC
    p.jump_if(_JEQ_K, SOCK_STREAM, None, "deny")
    # and plain TCP: Landlock's port rules govern TCP alone, and MPTCP (or SCTP) streams to any
    # port passed them (session 44's second red team)
    p.load(32)
    p.jump_if(_JEQ_K, 0, "allow", None)
    p.jump_if(_JEQ_K, IPPROTO_TCP, "allow", "deny")
    p.label("allow")
    p.ret(RET_ALLOW)
    p.label("deny")
    p.ret(RET_ERRNO | EPERM)
    return p.assemble()
