"""The first call on the timed inputs, against the calls after it (judge v29).

Every call of the judge's replay starts from one state (staged_replay.StagedReplay.before_each),
but a GPU binary can write anywhere in the judge's CUDA context: past the end of its buffers,
where the caching allocator's blocks leave slack that no reset reaches, and beyond
(docs/design/threat-model.md, "Open"). So a kernel can keep its answer there in one call, and
in the next find its inputs the same (a few of their values against a key it kept beside the
answer) and copy the answer out: right in every call the audit checks, and timed as a copy.
What it cannot do is copy an answer for inputs it has not seen.

So the replay warms up on other values than it times (`Turned`: each storage of floating inputs
turned by a secret number of 16-byte steps), and the first call on the timed values, in the
turn, is timed alone (timing.measure). A kernel that remembers answers computes in that call
and copies in the calls after it; an honest one takes as long in both. Where the first call
took over FIRST_RATIO times the repetitions' median plus FIRST_SLACK_US, the case's latency is
the first call's (`remembered`), and its timing mode says why.

A turn keeps every value a storage holds, each moved a whole number of elements along (no
element size passes 16 bytes), so whatever a recording fixed from counts over a whole tensor
(the length of a result read with `.item()`) still holds for the warm-up, and every value a
kernel meets is one it meets in the timed calls. Only a storage that one floating tensor covers
exactly, element after element in some order (contiguous, or a transpose of that), is turned:
bytes outside any tensor (a slice's storage) would come in as values never drawn, and nothing a
kernel addresses by moves (indices, offsets, quantised blocks, a storage viewed as integers
anywhere), unless the spec says an argument's integers are plain values (`Spec.turned_args`: a
comparison's operands, a sort's keys; since session 53).

Where nothing turns (integer inputs only, quantised weights, expert ids: 71 of the bench cases
in session 53's traces, before `TURNED_ARGS`), the warm-up runs on another draw of the case,
from a secret seed of its own (`Drawn`, judge v31; until then on the timed values themselves,
where a kernel that remembers is timed as its copy): values that the spec makes valid and no
kernel has seen. That draw is a copy of the case's inputs more, held only while the warm-up
runs; a turn needs none, and keeps the counts a recording may have fixed, so it comes first.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

import torch

# What an honest first call may take over the repetitions' median: its one timing against
# their median, from the same clock. A kernel that remembers must make its copy at least this
# much faster than its work to be timed by it. Judge v29 allowed 1.5, where an honest case
# over it was timed wrong; since v30 such an evaluation runs again on new inputs
# (kgb.evaluate.evaluate), so a tighter bound costs a run: honest first calls went over 1.25
# times in 2 of 504 (both with another process starting CUDA beside them) and 0 of 503 in two
# of session 53's jobs on H100s; the most seen otherwise, 1.35 (session 52, an H200's later
# job) and 1.52 (session 53, once, beside a start).
FIRST_RATIO = 1.25
FIRST_SLACK_US = 2.0
# The step a storage is turned by: a whole number of elements of any dtype (complex128's 16
# bytes the largest), so every value stays whole.
STEP_BYTES = 16
_SECRET = random.SystemRandom()


# How a timing mode begins to say so (judge v29's logs say it nowhere else)
TIMED_BY_FIRST_CALL = "timed by its first call on the timed inputs"


def remembered(first_us: float | None, median_us: float) -> str:
    """Why a case is timed by its first call, or "" where that call took about as long as the
    ones after it (or was not timed by the repetitions' clock)."""
    if first_us is None or first_us <= FIRST_RATIO * median_us + FIRST_SLACK_US:
        return ""
    return (f"{TIMED_BY_FIRST_CALL}, {first_us:.1f} us, where the calls after it took a "
            f"median {median_us:.1f} us: a call faster on inputs it has seen may be copying an answer it kept "
            f"(kgb.evaluate.first_call)")


def _floating(t: torch.Tensor) -> bool:
    return t.is_floating_point() or t.is_complex()


class Turned:
    """The warm-up's values: each storage over STEP_BYTES that its input tensors all cover
    exactly as floating values (or as integers of `plain`, tensors whose integers are plain
    values), turned by a secret whole number of steps. `pairs` are the storages the calls run
    on, each with the one its timed values are loaded from; `apply()` writes the turned values
    from there (after each reset), with no copy of its own: a bench case's input can be
    gigabytes, and judges share the GPU's memory."""

    def __init__(self, pairs: Iterable[tuple[torch.UntypedStorage, torch.UntypedStorage]],
                 inputs: Iterable[torch.Tensor], plain: Iterable[torch.Tensor] = ()):
        plain_ids = {id(t) for t in plain}
        covers: dict[int, set[bool]] = {}
        for t in inputs:
            whole = (_floating(t) or id(t) in plain_ids) and covers_its_storage(t)
            covers.setdefault(t.untyped_storage().data_ptr(), set()).add(whole)
        self.turns: list[tuple[torch.Tensor, torch.Tensor, int]] = []
        for dst, src in pairs:
            steps = dst.nbytes() // STEP_BYTES
            if covers.get(dst.data_ptr()) == {True} and steps >= 2 and src.nbytes() == dst.nbytes():
                self.turns.append((_bytes(dst), _bytes(src), STEP_BYTES * _SECRET.randrange(1, steps)))

    @property
    def nbytes(self) -> int:
        """The bytes the warm-up sees otherwise than the timed calls."""
        return sum(dst.numel() for dst, _, _ in self.turns)

    def apply(self) -> None:
        for dst, src, shift in self.turns:
            n = dst.numel()
            dst[shift:].copy_(src[:n - shift])
            dst[:shift].copy_(src[n - shift:])


class Drawn:
    """The warm-up's values where nothing turns (judge v31): each storage the calls run on
    loaded from the same storage of another draw of the case (`pairs`: the storage the calls
    run on, with the draw's), from a secret seed. Held until `release()`, after the warm-up:
    the timed calls never run on them."""

    def __init__(self, pairs: Iterable[tuple[torch.UntypedStorage, torch.UntypedStorage]]):
        self.loads = [(_bytes(dst), _bytes(src)) for dst, src in pairs if 0 < dst.nbytes() == src.nbytes()]
        self.nbytes = sum(dst.numel() for dst, _ in self.loads)  # kept for the trace after `release`

    def apply(self) -> None:
        for dst, src in self.loads:
            dst.copy_(src)

    def release(self) -> None:
        self.loads = []


def covers_its_storage(t: torch.Tensor) -> bool:
    """Whether t's elements are its storage's bytes, each once and no other byte: a tensor whose
    strides, ordered, step over each other's sizes exactly (contiguous, transposed, permuted),
    from the storage's start to its end."""
    if t.storage_offset() != 0 or t.numel() * t.element_size() != t.untyped_storage().nbytes() or t.numel() == 0:
        return False
    step = 1
    for stride, size in sorted((st, n) for n, st in zip(t.shape, t.stride(), strict=True) if n != 1):
        if stride != step:
            return False
        step *= size
    return True


def _bytes(storage: torch.UntypedStorage) -> torch.Tensor:
    return torch.empty(0, dtype=torch.uint8, device=storage.device).set_(storage)
