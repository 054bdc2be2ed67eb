"""GPU memory reserved by judges for their bench cases, in a ledger that every judge of the
GPU shares.

A judgement holds little GPU memory while its candidate compiles and its small cases are
checked, and most of it while its bench cases are checked and timed: copies of their inputs,
hundreds of MB to GB each, in the judge and in its candidate process. On the H200 a first
run of the 210 operators peaked at the GPU's whole memory, and the evaluations that ran out
and ran again were those of operators whose judgements hold 20-47 GB, caught beside
others' bench cases (session 35). Counted over whole evaluations, what they held at most
summed to 1.5-2 times the GPU's memory through most of that run, while the GPU held half of
it: it is the bench phases, 40% of the evaluations' time, that must not pile up.

So before its bench cases a judge reserves what its operator's judgement held when last
measured (the request's `gpu_mib`: kgb.evaluate.held_memory) and waits while the judges of
its GPU that hold reservations leave no room for it under RESERVABLE times the GPU's memory;
it gives the reservation back when its timing is done. A judge alone on the ledger is never
kept waiting, however large its figure. Reservations are served in the order asked for: a
large one waits for room, and those asked after it wait behind it rather than pass it for
ever (their compiles and small cases go on meanwhile). A reservation names its process
(pid and start time): one left by a judge that was killed is dropped by the next judge
that reads the ledger.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path

from kgb.evaluate.timing_lock import trace

# What the reservations of a GPU's judges may sum to, as a multiple of its memory. More than
# one: a reservation is the most its judge and candidate process held at any moment of their
# bench phase (9 s at the median), and two judges' moments seldom meet. In session 35's call 1
# on the H200 (143,771 MiB), replayed from its trace with these figures, the bench phases in
# flight summed to 207 and 214 GB where evaluations ran out of memory and to 175 GB at most
# elsewhere; over 165 GB for 8% of the run.
RESERVABLE = 1.15
POLL_S = 0.05
LEDGER_SUFFIX = ".memory"  # beside the GPU's timing lock (kgb.evaluate.timing_lock)


def _start_time(pid: int) -> str | None:
    """When a process started, in clock ticks since boot (/proc), to tell it from a later
    process that reuses its pid; None where it has ended (or /proc cannot say)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _alive(key: str) -> bool:
    pid, _, started = key.partition(":")
    if Path("/proc/self/stat").exists():
        return _start_time(int(pid)) == started
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


class Ledger:
    """One GPU's ledger file: reservations by process, in MiB, and whether each is held."""

    def __init__(self, path: Path, budget_mib: int):
        self.path, self.budget_mib = path, budget_mib
        self.key = f"{os.getpid()}:{_start_time(os.getpid())}"

    @contextmanager
    def _book(self) -> Iterator[dict]:
        """The ledger's entries of live processes, under the file's lock; written back after."""
        with open(self.path, "a+") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                f.seek(0)
                text = f.read()
                try:
                    book = json.loads(text) if text.strip() else {}
                except json.JSONDecodeError:
                    book = {}  # a writer killed mid-write: its reservations are lost, not ours
                book = {k: v for k, v in book.items() if k == self.key or _alive(k)}
                yield book
                f.seek(0)
                f.truncate()
                f.write(json.dumps(book))
                f.flush()
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def _may_hold(self, book: dict, mine: dict) -> bool:
        held = sum(r["mib"] for k, r in book.items() if r["held"] and k != self.key)
        if held and held + mine["mib"] > self.budget_mib:
            return False
        return not any(not r["held"] and (r["asked"], k) < (mine["asked"], self.key)
                       for k, r in book.items() if k != self.key)

    @contextmanager
    def reserved(self, mib: int, waiting: Callable[[], AbstractContextManager] = nullcontext,
                 tag: str = "", at_once: bool = False) -> Iterator[bool]:
        """Hold `mib` of the GPU's memory in the ledger, once there is room; `waiting`: the
        phase the wait is counted in; `tag`: the operator, for the judges' trace. Yields
        whether it is held: with `at_once`, only if there is room at once and no reservation
        waits before it, else never (a reservation waiting in line holds up every one asked for
        after it; kgb.evaluate.baseline_judge's baselines, timed ahead of their trials, must
        never hold up a trial)."""
        asked = time.monotonic()
        mine = {"mib": int(mib), "asked": time.time(), "held": False}
        try:
            with waiting():
                while True:
                    with self._book() as book:
                        book[self.key] = mine
                        mine["held"] = self._may_hold(book, mine)
                        if not mine["held"] and at_once:
                            del book[self.key]
                    if mine["held"] or at_once:
                        break
                    time.sleep(POLL_S)
            began = time.monotonic()
            yield mine["held"]
        finally:
            with self._book() as book:
                book.pop(self.key, None)
        if mine["held"]:
            trace("memory", asked, began, time.monotonic(), mib=int(mib), tag=tag)


def for_request(request: dict) -> Ledger | None:
    """The ledger of the request's GPU, or None where its judge keeps none: on the CPU, or
    without a figure for its operator."""
    lock, mib = request.get("timing_lock"), request.get("gpu_mib")
    if request.get("device") != "cuda" or not lock or not mib:
        return None
    import torch

    total = torch.cuda.mem_get_info()[1]
    return Ledger(Path(lock + LEDGER_SUFFIX), int(total * RESERVABLE) >> 20)
