"""Where the host's CPUs go while a command runs, by the role of each process; prints tables.

    python benchmarks/host_profile.py [--every 0.25] [--json F] -- python3 benchmarks/throughput.py ...

A sweep on the H200 leaves its 16 cores 40-50% idle after its first minute, with a quarter of
their time in the kernel (vmstat, session 31), and no one knew what that kernel time was.
This runs the command and samples /proc every `--every` seconds: each process of its tree
by role (the harness; the engine; a judge, spare or not; a candidate process; a compiler
those start, by name), its CPU time user and system, and for each of its threads running at
the sample, whether on a CPU or in which system call it waits (/proc/PID/task/TID/syscall;
a thread on a CPU reads "running" there, in user space or in the kernel alike, and is
counted as "user": its process's user and system times tell the two apart).
Roles come from the tree: the engine is the process running `kgb.evaluate.engine_process`,
its children are judges and theirs candidate processes; gcc, ptxas and the like are named.
A process's last fraction of a sample interval before it ends is lost, but what its parent
reaped is counted in the parent's row, as "reaped". Reading other processes' syscall files
needs root (or ptrace rights over them): without, threads read as "unreadable".
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")
# x86-64's numbers of the system calls a sweep's processes were expected to wait or spin in
SYSCALLS = {0: "read", 1: "write", 3: "close", 7: "poll", 9: "mmap", 10: "mprotect", 11: "munmap", 12: "brk",
            14: "rt_sigprocmask", 16: "ioctl", 17: "pread64", 23: "select", 24: "sched_yield", 25: "mremap",
            28: "madvise", 35: "nanosleep", 44: "sendto", 45: "recvfrom", 46: "sendmsg", 47: "recvmsg",
            56: "clone", 57: "fork", 59: "execve", 61: "wait4", 72: "fcntl", 73: "flock", 202: "futex",
            228: "clock_gettime", 230: "clock_nanosleep", 232: "epoll_wait", 257: "openat", 262: "newfstatat",
            270: "pselect6", 271: "ppoll", 281: "epoll_pwait", 293: "pipe2", 319: "memfd_create", 435: "clone3"}
COMPILERS = {"ptxas", "gcc", "cc", "cc1", "as", "ld", "collect2", "x86_64-linux-gnu-gcc", "nvlink", "fatbinary"}


def _stat(pid: int) -> tuple[str, int, list[int]] | None:
    """comm, ppid, [utime, stime, cutime, cstime] in ticks; None once it has ended."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    comm = text[text.index("(") + 1:text.rindex(")")]
    rest = text[text.rindex(")") + 2:].split()
    return comm, int(rest[1]), [int(x) for x in rest[11:15]]


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _running_threads(pid: int) -> list[str]:
    """What each thread of `pid` that is running now is doing: "user", a system call's name."""
    doing = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return doing
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                text = f.read()
            if text[text.rindex(")") + 2] != "R":
                continue
            with open(f"/proc/{pid}/task/{tid}/syscall") as f:
                first = f.read().split()[0]
        except (OSError, IndexError):
            doing.append("unreadable")
            continue
        if first == "running":
            doing.append("user")
        else:
            number = int(first)
            doing.append(SYSCALLS.get(number, f"syscall {number}") if number >= 0 else "in the kernel")
    return doing


class Tree:
    """The command's processes, their roles and their CPU time so far."""

    def __init__(self, root: int):
        self.root = root
        self.roles: dict[int, str] = {}
        self.last: dict[int, list[int]] = {}
        self.cpu: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
        self.doing: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        self.samples = 0

    def _role(self, pid: int, comm: str, ppid: int) -> str:
        if comm in COMPILERS:
            return f"compiler: {comm}"
        if pid == self.root:
            return "harness"
        if "kgb.evaluate.engine_process" in _cmdline(pid):
            parent = self.roles.get(ppid, "")
            return {"engine": "judge", "judge": "candidate process"}.get(parent, "engine")
        parent = self.roles.get(ppid, "other")
        return "compiler: other" if parent == "candidate process" else f"child of {parent}"

    def sample(self) -> None:
        self.samples += 1
        stats = {}
        for name in os.listdir("/proc"):
            if name.isdigit() and (s := _stat(int(name))) is not None:
                stats[int(name)] = s
        members = {self.root} if self.root in stats else set()
        frontier = list(members)
        children = collections.defaultdict(list)
        for pid, (_, ppid, _) in stats.items():
            children[ppid].append(pid)
        while frontier:  # the tree below the root, parents before children
            pid = frontier.pop(0)
            for child in children.get(pid, []):
                if child not in members:
                    members.add(child)
                    frontier.append(child)
        for pid in sorted(members, key=lambda p: self._depth(p, stats)):
            comm, ppid, times = stats[pid]
            if pid not in self.roles:
                self.roles[pid] = self._role(pid, comm, ppid)
            role = self.roles[pid]
            before = self.last.get(pid, [0, 0, 0, 0])
            for i in range(4):
                self.cpu[role][i] += max(0, times[i] - before[i]) / TICK
            self.last[pid] = times
            # every thread: a process's own state is its main thread's only
            self.doing[role].update(_running_threads(pid))

    def _depth(self, pid: int, stats: dict) -> int:
        depth = 0
        while pid != self.root and pid in stats and depth < 64:
            pid, depth = stats[pid][1], depth + 1
        return depth


def _system_cpu() -> list[int]:
    with open("/proc/stat") as f:
        return [int(x) for x in f.readline().split()[1:8]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=float, default=0.25, help="seconds between samples")
    parser.add_argument("--json", help="write the tables here too")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to profile after --")
    began, system_before = time.monotonic(), _system_cpu()
    timeline, last_mark, mark_cpu = [], began, system_before
    proc = subprocess.Popen(command)
    tree = Tree(proc.pid)
    while proc.poll() is None:
        try:
            tree.sample()
        except (OSError, ValueError, IndexError):  # a process read as it ended: the next sample
            pass  # counts it; the command it profiles (a GPU check's whole job) goes on regardless
        now = time.monotonic()
        if now - last_mark >= 5:  # the whole machine's use, 5 s at a time
            cpu = _system_cpu()
            delta = [a - b for a, b in zip(cpu, mark_cpu, strict=True)]
            total = sum(delta) or 1
            timeline.append((round(now - began), round(100 * (delta[0] + delta[1]) / total),
                             round(100 * (delta[2] + delta[5] + delta[6]) / total), round(100 * delta[3] / total)))
            last_mark, mark_cpu = now, cpu
        time.sleep(args.every)
    wall = time.monotonic() - began
    _report(tree, timeline, wall)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"wall_s": wall, "samples": tree.samples, "cpu_s": dict(tree.cpu),
                       "doing": {k: dict(v) for k, v in tree.doing.items()}, "timeline": timeline}, f, indent=1)
    sys.exit(proc.returncode)


def _report(tree: Tree, timeline: list, wall: float) -> None:
    print(f"\nhost profile: {wall:.1f} s, {tree.samples} samples, {len(tree.roles)} processes, {os.cpu_count()} CPUs")
    print("\n| role | processes | user s | system s | reaped children: user s | system s |")
    print("|---|---|---|---|---|---|")
    counts = collections.Counter(tree.roles.values())
    for role, (u, s, cu, cs) in sorted(tree.cpu.items(), key=lambda kv: -sum(kv[1])):
        print(f"| {role} | {counts[role]} | {u:.1f} | {s:.1f} | {cu:.1f} | {cs:.1f} |")
    print("\nthreads running at the samples, by what they were doing (count of thread-samples):")
    print("\n| role | " + " | ".join(["top 1", "top 2", "top 3", "top 4", "top 5", "top 6"]) + " |")
    print("|---|---|---|---|---|---|---|")
    for role, counter in sorted(tree.doing.items(), key=lambda kv: -sum(kv[1].values())):
        top = [f"{what} {n}" for what, n in counter.most_common(6)]
        print(f"| {role} | " + " | ".join(top + [""] * (6 - len(top))) + " |")
    print("\nthe whole machine, each 5 s: seconds in, % user, % system (with interrupts), % idle")
    print("  " + "  ".join(f"{t}:{u}/{s}/{i}" for t, u, s, i in timeline))


if __name__ == "__main__":
    main()
