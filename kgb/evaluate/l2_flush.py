"""The judge's timing protocols (kgb.evaluate.timing measures under them) and the L2 flush
before each timed call, which they choose between: the judge's (JUDGE_PROTOCOL) flushes the
L2 by reading a buffer larger than it, so that the timed call does not pay to write back the
flush's dirty lines (`L2Flush`)."""

from __future__ import annotations

from enum import StrEnum

import torch

L2_FLUSH_BYTES = 256 * 1024 * 1024  # well over the H200's 60 MB of L2


class Protocol(StrEnum):
    BRACKETED = "bracketed"  # events inside the graph of every capturable call
    CLASSIC = "classic"  # graph only under GRAPH_BELOW_US, its launch timed from outside
    CLEAN_L2 = "clean-l2"  # classic, the L2 flushed by reading (L2Flush)
    KERNELS = "kernels"  # clean-l2, each call's time the GPU's own count of it (KernelClock)

    @property
    def flush_reads(self) -> bool:
        """Whether its L2 flush reads the buffer (`L2Flush`). Judge v8 took KERNELS' flush for
        one that writes, which the timed call then paid to write back."""
        return self in (Protocol.CLEAN_L2, Protocol.KERNELS)


# The L2 flushed by reading since judge v7: on the H200 (session 18) kernels over 10 us came
# within 1-3% of Nsight Compute's count, against 3-11% with the flush that writes. The GPU's
# own count since judge v8: the events' 2-3 us of latency around a call are left out (session 23);
# v8 flushed by writing under that clock by mistake, v9 reads again (Protocol.flush_reads).
JUDGE_PROTOCOL = Protocol.KERNELS


class L2Flush:
    """Evicts the L2 before each timed call, with a buffer well over its size. Writing it
    (`zero_`) leaves the L2 full of dirty lines, which the timed call pays to write back as
    it evicts them; reading it leaves clean lines, dropped for free, closer to what Nsight
    Compute's cache control leaves (an empty L2). Protocol.CLEAN_L2 and Protocol.KERNELS read
    (`Protocol.flush_reads`); the others write."""

    def __init__(self, reading: bool):
        self.reading = reading
        self.buffer = torch.empty(L2_FLUSH_BYTES, dtype=torch.uint8, device="cuda")
        self.sink = torch.empty((), dtype=torch.float32, device="cuda")

    def __call__(self) -> None:
        if self.reading:
            torch.sum(self.buffer.view(torch.float32), dim=0, out=self.sink)
        else:
            self.buffer.zero_()


_FLUSHES: dict[bool, L2Flush] = {}


def _flush(reading: bool) -> L2Flush:
    """This process's flush of that kind, made on first use: one 256 MB buffer for all its
    measurements. Each prepared call had its own until judge v9, and a judge stages several
    cases for one turn: GPU memory is what bounds how many evaluations share a GPU (session 24)."""
    if reading not in _FLUSHES:
        _FLUSHES[reading] = L2Flush(reading)
    return _FLUSHES[reading]
