"""A call on a candidate process, as the values that cross with it: the seeds the judge sends
in place of a case's inputs (`Redraw`), the reply it takes back (`Reply`) and the failures it
accepts in one, the most a reply may hold (`ReplyBound`, refused past it: `ReplyTooLarge`),
and the names the verdict's phases give the crossings. The judge's handle that sends and
receives them is kgb.evaluate.candidate_process.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kgb.evaluate import codec, tensor_storage
from kgb.evaluate.correctness import stored_bytes
from kgb.evaluate.provenance import MAX_VALUES
from kgb.evaluate.verdict import Status

# What the judge's verdict calls the crossings (benchmarks/throughput.py sums them): inputs
# copied off the GPU, written, and read by the candidate process; its reply's bytes read
# and copied onto the GPU. Host work mostly, hundreds of MB for a bench case.
SENDING = "inputs to the candidate process"
RECEIVING = "outputs from the candidate process"
# What replaces the crossing of a bench case's inputs where the candidate process draws them
# itself (`Redraw`): the judge's checksums, and the process's draw and checksums, waited for
# in the judge's work section.
DRAWN = "inputs drawn by the candidate process"


# What a candidate process may report of itself (kgb.evaluate.candidate): that it failed, and
# how. Only the judge's own checks find a candidate correct.
CANDIDATE_FAILURES = frozenset({Status.REJECTED, Status.COMPILE_ERROR, Status.RUNTIME_ERROR, Status.WRONG_OUTPUT})
MESSAGE_CHARS = 4000

# What a reply's buffers may hold, known to the judge before it sends the call (ReplyBound):
# the storages it sent, each back at most once with what the call left in it, and the
# storages the call made, its outputs. The outputs' size is the reference's for the case,
# computed before the checked call (CaseRunner.check); a timed call's are the reference's on
# the case's set T, computed before the call (BenchCaseTiming.stage, judge v33). A multiple of the
# inputs alone would not do: factory ops are sent nothing and return up to 512 MB (arange's
# bench-int64; full, empty_strided), new_ones 256 MB from a 4-byte tensor, and outputs
# exceed their inputs many-fold elsewhere: affine_grid_generator's 100 MB grid from 384
# bytes of theta, select_backward's 512 MB from 256 KB, add's outer product 86-fold, a
# unary op on an expanded input 64-fold, im2col's 3x3 bench case 9-fold (462 MB).
# The bound is checked on the reply's header, before a buffer is allocated: a candidate that
# announced one buffer larger than the host's memory had its judge fill memory until the OOM
# killer took the judge, an infrastructure failure retried every run (session 45's red team).
# Until session 48 every reply might hold 4 GB plus 16 times what was sent: a smoke case's
# reply of untouched pages, a few KB due, had its judge read 4 GB into its own memory, with
# 16-20 judges on a GPU host.
#
# OUTPUT_ROOM: a candidate may lay its outputs out otherwise than the reference does (a slice
# of a buffer padded to its blocks, one storage under two outputs); none of the 210
# solutions returns more than the reference's own bytes in any smoke case.
# REPLY_ROOM_BYTES: what needs no size to be due: a small output padded to a block, a tensor
# where the reference returns a number; the most a smoke case's reply may hold on a GPU.
# PROVENANCE_BYTES: on the CPU a reply also carries the distinct values the interpreted
# kernels stored and loaded (kgb.evaluate.provenance.summarise), scratch buffers' included,
# which no size known before the call bounds: at most MAX_VALUES stored, each a value and
# its first sequence number both as a number and as bits (32 bytes), and MAX_VALUES loaded,
# as bits (16 bytes): 192 MB. The 210 solutions' largest in a smoke case: 650 KB.
OUTPUT_ROOM = 2
REPLY_ROOM_BYTES = 16 << 20
PROVENANCE_BYTES = 48 * MAX_VALUES


def output_bytes(value: Any) -> int:
    """The bytes of the storages under the tensors of `value` (the reference's outputs),
    each once. An input's count too: a candidate may copy what the reference returns as a
    view of one (reshape's, narrow's), and the copy holds no more than the input. Not a
    view's elements: only view ops return a view that repeats its input (expand's bench
    case: 4 GB of elements over 32 KB), and their specs want the view itself."""
    return stored_bytes(value)


@dataclass(frozen=True)
class ReplyBound:
    """The most a call's reply may hold, and why (said where a reply is refused)."""
    sent: int  # bytes of the storages the judge sent
    outputs: int  # bytes the call's outputs may take (`output_bytes`)
    provenance: int = 0  # PROVENANCE_BYTES on the CPU
    snapshots: int = 0  # a timing's recording: the tensors made before the call, by value

    @staticmethod
    def of(sent: tensor_storage.Storages, outputs: int, device: str, snapshots: int = 0) -> ReplyBound:
        return ReplyBound(sum(s.nbytes() for s in sent.by_id.values()), outputs,
                          PROVENANCE_BYTES if device == "cpu" else 0, snapshots)

    @property
    def nbytes(self) -> int:
        return self.sent + OUTPUT_ROOM * self.outputs + REPLY_ROOM_BYTES + self.provenance + self.snapshots

    def __str__(self) -> str:
        stored = f", {self.provenance:,} for the values its kernels stored and loaded" if self.provenance else ""
        recorded = f", {self.snapshots:,} for its recording's snapshots" if self.snapshots else ""
        return (f"{self.nbytes:,} (its inputs' {self.sent:,} bytes, {OUTPUT_ROOM} times its outputs' "
                f"{self.outputs:,}, {REPLY_ROOM_BYTES:,} besides{stored}{recorded})")


class ReplyTooLarge(codec.WireError):
    """A reply that announced more than its call may send back (`ReplyBound`), refused unread."""


@dataclass
class Reply:
    value: Any
    fields: dict[str, Any]
    stored: dict | None = None  # distinct values the interpreter's kernels stored (kgb.evaluate.provenance)
    sent_instead: str = ""  # why the inputs were sent where the candidate process was asked to draw them

    @property
    def failure(self) -> tuple[Status, str] | None:
        """The failure the candidate process reports, if any, as a status the judge accepts
        from it: its own failures only. What it sends is its code's to write (a candidate can
        reach the codec's `send` through sys.modules), and until session 44 a reply whose
        error said "correct" was taken as the verdict, with no case run."""
        error = self.fields.get("error")
        if error is None:
            return None
        status, message = (error.get("status"), error.get("message")) if isinstance(error, dict) else (None, None)
        if status not in CANDIDATE_FAILURES or not isinstance(message, str):
            return Status.REJECTED, f"the candidate process sent a verdict of its own ({str(status)[:40]!r})"
        return Status(status), message[:MESSAGE_CHARS]


@dataclass(frozen=True)
class Redraw:
    """The seeds of a case's inputs, for a candidate process that has the spec
    (`CandidateProcess.give_spec`) to draw them itself: one for a call, two for a timing
    (sets T and V). It learns a seed with the message that would have carried the values."""
    case: str
    seeds: tuple[int, ...]
