"""What one process's CUDA start and end cost the host, alone and side by side; prints a table.

    python3 benchmarks/start_cost.py [--together 1,4,8] [--rounds 3] [--env NAME=VALUE ...]

A sweep on the H200 starts two CUDA processes per evaluation (a judge and its candidate
process) and 16 evaluations are in flight: in session 32's sweep 222 judges' starts took a
median 4.9 s with 6 others starting beside each, and judges and candidate processes spent
about 1000 CPU-seconds in the kernel between them (benchmarks/host_profile.py), a third of
all the CPU time the sweep used. This forks children from a parent that imported torch and
Triton without touching CUDA, as the engine does, `--together` at a time, each starting what
a spare judge starts (a CUDA context, then the kernel clock's first profiler session) and
exiting, and reads each child's wall time per step and its CPU time, user and system, from
wait4. With `--env NAME=VALUE` (repeatable) each row is run again with that variable set in
the children before they start CUDA, so that settings of the CUDA driver can be compared.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402  imported before any fork, CUDA untouched here, as in the engine
import triton  # noqa: E402, F401

from kgb.evaluate import kernel_clock  # noqa: E402

COLUMNS = ("context", "clock", "exit", "user", "sys")  # per child: seconds of each step, and its CPU time


def _child(env: dict[str, str], go_fd: int, report_fd: int) -> None:
    os.environ.update(env)
    os.read(go_fd, 1)  # all of a round's children start together
    began = time.monotonic()
    torch.empty(1, device="cuda").add_(1)
    torch.cuda.synchronize()
    context = time.monotonic()
    kernel_clock.warm_up()
    clock = time.monotonic()
    os.write(report_fd, json.dumps({"pid": os.getpid(), "context": context - began, "clock": clock - context,
                                    "ended_at": time.time()}).encode() + b"\n")
    os._exit(0)  # what a judge does once its verdict is written: the driver tears the context down


def _round(together: int, env: dict[str, str]) -> list[dict]:
    go_r, go_w = os.pipe()
    report_r, report_w = os.pipe()
    pids = []
    for _ in range(together):
        pid = os.fork()
        if pid == 0:
            os.close(go_w)
            os.close(report_r)
            try:
                _child(env, go_r, report_w)
            finally:
                os._exit(1)  # never back into the parent's loop
        pids.append(pid)
    os.close(go_r)
    os.close(report_w)
    os.write(go_w, b"x" * together)
    rows = {}
    for _ in pids:  # in the order they end
        pid, status, usage = os.wait4(-1, 0)
        rows[pid] = {"exited_at": time.time(), "user": usage.ru_utime, "sys": usage.ru_stime, "status": status}
    for line in os.read(report_r, 1 << 20).decode().splitlines():
        report = json.loads(line)
        rows[report.pop("pid")].update(report)
    os.close(report_r)
    os.close(go_w)
    for row in rows.values():
        row["exit"] = max(0.0, row["exited_at"] - row.get("ended_at", row["exited_at"]))
    return list(rows.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--together", default="1,4,8")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE set in the children (repeatable)")
    args = parser.parse_args()
    variants = [{}] + [dict([kv.split("=", 1)]) for kv in args.env]
    print("| children's environment | together | starts | context s | clock s | exit s | user s | system s |")
    print("|---|---|---|---|---|---|---|---|")
    for env in variants:
        for together in (int(n) for n in args.together.split(",")):
            rows = [r for _ in range(args.rounds) for r in _round(together, env)]
            ok = [r for r in rows if r["status"] == 0 and "context" in r]
            med = {k: statistics.median(r[k] for r in ok) for k in COLUMNS} if ok else {}
            name = " ".join(f"{k}={v}" for k, v in env.items()) or "(as the engine's)"
            print(f"| {name} | {together} | {len(ok)} of {len(rows)} | " + " | ".join(
                f"{med[k]:.2f}" if med else "-" for k in COLUMNS) + " |")


if __name__ == "__main__":
    main()
