"""Whether CUDA contexts starting and ending in other processes slow a timing turn; prints a table.

    python benchmarks/context_starts.py [--measures 30] [--starters 0,1,4] [--what both,start,exit,free]
        [--protocols kernels,clean-l2] [--child-mb 0] [--churners 0] [--first-call] [--gate]

In a sweep, judges and their candidate processes start CUDA all the time (session 23's call 6:
219 starts of about 4 s each), and those starts take no work section, so timing turns run
beside them. In that sweep's trace the turns whose measurement overlapped a start took a
median 0.153 s, the others 0.05 s. This checks the cause on its own: one process times a
fixed call with the judge's `kgb.evaluate.timing.measure` again and again, while N other
processes each start a CUDA context in a forked child (from a parent that imported torch,
as the engine does), run one op and exit, over and over. Per N: how long a measurement
held the GPU (its wall time), the latency it reported, and how long a child took. Which
part does it: `--what start` keeps each child's context until the measurements are done
(its start only), `exit` starts the children before them and lets one end every 50 ms
during them (its teardown only), `both` starts and ends them one after another, `free`
keeps them and has each allocate, fill and give back 1 GB over and over (the judges' and
candidate processes' `empty_cache` after each case, which runs beside the turns). With
`--child-mb` each child holds that much GPU memory, filled, from its start to its end, as a
candidate process holds its case's inputs. `--churners K` adds K `free` children to every
row: whether memory given back beside a start slows the start. Each protocol of `--protocols` is measured as
the judge measures it: a KERNELS measurement inside a kernel-clock session whose start and
stop are left out of its wall time, as the judge's turn leaves them out.

`--gate` has every start, end and free hold the GPU's quiet gate shared, and each measurement
hold it whole, as judge v31 measures the replays of an evaluation run again
(kgb.evaluate.quiet_gate); the last column then says how long the measurements waited.

`--first-call` measures as judge v29 on measures a replay: every call from one state (the
inputs loaded again from a pristine copy), the warm-up on the inputs turned
(kgb.evaluate.first_call.Turned), the first call on the timed values timed alone; with a call
over two 1 GB complex128 vectors besides (`torch.vdot`, cuBLAS's zdotc), the size of
cublasZdotc_v2's bench-64m, whose first call session 53's H100s found slowed 1.52-2.08 times
in 3 of 7 timings, each time with a start beside it. Its column: the first calls' ratios to
their repetitions' median (median, most, and how many over the judge's bound).
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402  imported before any fork, CUDA untouched here, as in the engine

CALLS = {"scale 2^16 (graph)": 1 << 16, "scale 2^24 (eager)": 1 << 24}
VDOT = "vdot 2 x 1 GB complex128 (eager)"  # --first-call's, besides
VDOT_N = 1 << 26
STARTED_AHEAD = 25  # children an `exit` starter starts before the measurements, to end during them


FREE_BYTES = 1 << 30  # what a `free` child allocates, fills and gives back each time


def _child(ready, go, hold_mb: int, churn: bool) -> None:
    """A process with a CUDA context holding `hold_mb` of filled GPU memory: says so on
    `ready`, then allocates and frees FREE_BYTES over and over if `churn`, and exits when `go`
    says (or closes)."""
    _close_the_gate()
    held = torch.ones(hold_mb << 18, device="cuda") if hold_mb else torch.empty(1, device="cuda").add_(1)
    torch.cuda.synchronize()
    ready.send(True)
    try:
        while churn and not go.poll():
            with _changing():
                torch.ones(FREE_BYTES // 4, device="cuda")
                torch.cuda.synchronize()
                torch.cuda.empty_cache()
        go.recv()
    except EOFError:
        pass
    del held
    os._exit(0)


HOLD_MB = 0  # each child's GPU memory (--child-mb), set before any starter forks
GATE: str | None = None  # --gate's file (kgb.evaluate.quiet_gate), set before any starter forks


def _changing():
    from kgb.evaluate import quiet_gate

    return quiet_gate.changing(GATE)


def _close_the_gate() -> None:
    """In a forked child: the descriptor its parent held the gate by, closed, so that the lock
    ends with the parent's (a candidate process closes all it inherits so)."""
    if GATE is None:
        return
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == GATE:
                os.close(int(fd))
        except OSError:
            pass


def _fork_child(churn: bool = False) -> tuple[int, object, object]:
    """A child forked and started (its CUDA context up), holding the gate shared meanwhile."""
    ready_r, ready_w = multiprocessing.Pipe(duplex=False)
    go_r, go_w = multiprocessing.Pipe(duplex=False)
    with _changing():
        pid = os.fork()
        if pid == 0:
            _child(ready_w, go_r, HOLD_MB, churn)
        ready_r.recv()
    return pid, ready_r, go_w


def _end(pid: int, go) -> None:
    """A child told to end and reaped, holding the gate shared meanwhile."""
    with _changing():
        go.send(True)
        os.waitpid(pid, 0)


def _starter(what: str, stop, took) -> None:
    """Until `stop`: starts CUDA in forked children and ends them (both), starts them and
    keeps them (start), or ends, one every 50 ms, children started beforehand (exit); sends
    how long each start or end took on `took` (a pipe, not a queue: a queue's feeder thread
    would make every fork here the fork of a threaded process), then None."""
    kept: list[tuple[int, object]] = []
    if what == "free":
        pid, ready, go = _fork_child(churn=True)
        took.send("ready")
        stop.wait()
        go.send(True)
        os.waitpid(pid, 0)
        took.send(None)
        return
    if what == "exit":
        for _ in range(STARTED_AHEAD):
            pid, ready, go = _fork_child()
            kept.append((pid, go))
        took.send("ready")
    while not stop.is_set():
        began = time.monotonic()
        if what == "exit":
            if not kept:
                break
            _end(*kept.pop())
            time.sleep(0.05)
        elif what == "start" and len(kept) >= STARTED_AHEAD:
            time.sleep(0.05)  # enough contexts kept: no more GPU memory for them
            continue
        else:
            pid, ready, go = _fork_child()
            if what == "both":
                _end(pid, go)
            else:
                kept.append((pid, go))
        took.send(time.monotonic() - began)
    took.send(None)
    for pid, go in kept:
        go.send(True)
        os.waitpid(pid, 0)


def _calls(first_call: bool) -> dict[str, tuple[object, list[torch.Tensor]]]:
    """Each call by name: the call, and the tensors it reads (which --first-call loads again
    before every call and turns for the warm-up)."""
    calls: dict[str, tuple[object, list[torch.Tensor]]] = {}
    for name, n in CALLS.items():
        x, y = torch.randn(n, device="cuda"), torch.empty(n, device="cuda")
        calls[name] = (lambda x=x, y=y: torch.mul(x, 2.0, out=y), [x])
    if first_call:
        a, b = (torch.randn(VDOT_N, dtype=torch.complex128, device="cuda") for _ in range(2))
        calls[VDOT] = (lambda: torch.vdot(a, b), [a, b])
    return calls


def _as_a_replay(fn, read: list[torch.Tensor]) -> dict[str, object]:
    """`prepare`'s arguments for measuring `fn` as judge v29 on measures a replay: each call
    from the inputs loaded again from a pristine copy, the warm-up on them turned."""
    from kgb.evaluate.first_call import Turned

    pairs = [(t.untyped_storage(), t.clone().untyped_storage()) for t in read]
    turned = Turned(pairs, read)

    def before_each() -> None:
        for dst, src in pairs:
            dst.copy_(src)

    def before_warm_up() -> None:
        before_each()
        turned.apply()

    return {"before_each": before_each, "before_warm_up": before_warm_up}


def _timer(conn, protocols: list[str], first_call: bool) -> None:
    """Times each call whenever asked: (wall s of each measure, median us of each, and with
    `first_call` the first call's ratio to the repetitions' median), per protocol and call."""
    from kgb.evaluate import kernel_clock, quiet_gate
    from kgb.evaluate.timing import Protocol, measure, prepare

    calls = _calls(first_call)
    kernel_clock.warm_up()
    while (count := conn.recv()) is not None:
        out = {}
        for protocol in map(Protocol, protocols):
            for name, (fn, read) in calls.items():
                walls, medians, ratios, waits = [], [], [], []
                for _ in range(count):
                    prepared = prepare(fn, protocol=protocol, **(_as_a_replay(fn, read) if first_call else {}))
                    session = kernel_clock.session() if protocol == Protocol.KERNELS else contextlib.nullcontext()
                    with session, quiet_gate.alone(GATE) as (_, waited):  # as a run again measures (judge v31)
                        waits.append(waited)
                        began = time.monotonic()
                        timing = measure(prepared, repeats=100, protocol=protocol)
                        walls.append(time.monotonic() - began)
                    timing = timing.counted()
                    medians.append(timing.repeated_us or timing.median_us)
                    if timing.first_us is not None and timing.repeated_us:
                        ratios.append(timing.first_us / timing.repeated_us)
                out[f"{name}, {protocol}"] = (walls, medians, ratios, waits)
        conn.send(out)


def first_calls(ratios: list[float]) -> str:
    """The first calls' ratios to their repetitions' median, as a table cell."""
    from kgb.evaluate.first_call import FIRST_RATIO

    if not ratios:
        return "-"
    return (f"{statistics.median(ratios):.3f}, {max(ratios):.3f}, "
            f"{sum(r > FIRST_RATIO for r in ratios)} of {len(ratios)} over {FIRST_RATIO:g}")


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--measures", type=int, default=30)
    parser.add_argument("--starters", default="0,1,4")
    parser.add_argument("--what", default="both", help="both, start, exit, free: comma-separated")
    parser.add_argument("--protocols", default="kernels", help="kernels, clean-l2: comma-separated")
    parser.add_argument("--child-mb", type=int, default=0, help="GPU memory each child holds, filled")
    parser.add_argument("--churners", type=int, default=0, help="`free` children beside every row's")
    parser.add_argument("--first-call", action="store_true", help="measure as the judge measures a replay (v29 on)")
    parser.add_argument("--gate", action="store_true",
                        help="starts, ends and frees hold the quiet gate shared, each measurement whole (judge v31's "
                             "runs again: kgb.evaluate.quiet_gate)")
    args = parser.parse_args()
    global HOLD_MB, GATE
    HOLD_MB = args.child_mb
    if args.gate:
        import tempfile

        GATE = str(Path(tempfile.mkdtemp()) / "gate")
    fork = multiprocessing.get_context("fork")
    ours, theirs = fork.Pipe()
    timer = fork.Process(target=_timer, args=(theirs, args.protocols.split(","), args.first_call), daemon=True)
    timer.start()
    print("| other processes | what they do | call | measure wall median / p90 (ms) | latency median (us) "
          "| each start or end, median s (count) | first call / repetitions: median, most |")
    print("|---|---|---|---|---|---|---|")
    for what in args.what.split(","):
        for n in (int(v) for v in args.starters.split(",")):
            if n == 0 and what != args.what.split(",")[0]:
                continue  # one row with no other process is enough
            stop = fork.Event()
            pipes = [fork.Pipe(duplex=False) for _ in range(n + args.churners)]
            starters = [fork.Process(target=_starter, args=(what if i < n else "free", stop, sending), daemon=True)
                        for i, (_, sending) in enumerate(pipes)]
            for s in starters:
                s.start()
            for i, (receiving, _) in enumerate(pipes):
                if i >= n or what in ("exit", "free"):
                    receiving.recv()  # its children started, none ended yet
            if what not in ("exit", "free"):
                time.sleep(2.0 if n else 0.0)  # the starts under way before the first measure
            ours.send(args.measures)
            result = ours.recv()
            stop.set()
            took = []
            for receiving, _ in pipes:
                while (seconds := receiving.recv()) is not None:
                    took.append(seconds)
            for s in starters:
                s.join(timeout=60)
            for name, (walls, medians, ratios, waits) in result.items():
                each = f"{statistics.median(took):.2f} ({len(took)})" if took else "-"
                doing = (what if n else "-") + (f" + {args.churners} freeing" if args.churners else "")
                gated = f"; gate waited median {statistics.median(waits):.2f} s, most {max(waits):.2f}" if GATE else ""
                print(f"| {n} | {doing} | {name} | {1000 * statistics.median(walls):.1f} / "
                      f"{1000 * _quantile(walls, 0.9):.1f} | {statistics.median(medians):.2f} | {each} "
                      f"| {first_calls(ratios)}{gated} |", flush=True)
    ours.send(None)
    timer.join(timeout=30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
