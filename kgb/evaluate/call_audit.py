"""The calls of the judge's replay checked, not only the last one (judge v22).

The judge times its replay of the candidate's recorded call over many repetitions and compares
the answer of one more call, after the turn, with the reference's. Every call starts from one
state (kgb.evaluate.staged_replay.StagedReplay.before_each), so a kernel that decides what to do from
its inputs and memory does in each timed call what it does in the checked one. One that decides
by chance (the low bit of the GPU's clock) could still skip its work in most timed calls and be
checked on a call where it did it: caught only with the probability that it skipped.

So after a call, outside the timed region, the judge takes a digest of what the call wrote
(`digest`), on the GPU and without waiting for it: after each of the first AUDITED_FIRST calls,
then after a call drawn at random once it has run (the i-th with probability AUDITED_FIRST / i),
which keeps the audit's share of a turn small where a call is short and repeated a hundred times. After the turn, once the reference's answer
exists (it must not while the replay runs: the candidate's kernels run in the judge's CUDA
context), each call's digest must be one that an answer the comparison accepts can have
(`CallAudit.disagreement`). A floating tensor's digest is its count of NaNs, its count of
non-finite values and the sum of its finite magnitudes: where every element is within the
tolerance of the reference's (|a - e| <= atol + rtol |e|), the counts are the reference's and
the sums differ by at most n atol + rtol sum|e|. A call that left an output unwritten leaves the
poison (NaN) there; one that wrote zeros, or anything cheaper than the answer, moves the sum. An
integer or boolean tensor is compared exactly, so its digest must be the reference's: its sum and
its count of the poison value.

A digest cannot tell an answer whose magnitudes sum like the right one's: a softmax's rows each
sum to 1 whatever the values, so a row filled with 1/n, or an answer kept from other inputs,
has the digest of the right one. So each call also keeps SAMPLED_ELEMENTS of each output, at
positions drawn once it has run, and each must pass the comparison's own rule against the
reference's element there (`sampled`; judge v23): a call wrong at a share f of its elements is
caught with probability 1 - (1 - f)^SAMPLED_ELEMENTS, and over many calls almost surely.

The specs with a comparison of their own (random, uninitialised or aliasing outputs, vLLM's
caches: 64 of 210) have no tolerance to bound a digest with. Their calls are kept whole instead,
KEPT_CALLS of them chosen at random as they run (fewer where their copies would pass
KEPT_BYTES), and judged by the spec's comparison: a kernel that skips a share p of its calls is
caught with probability 1 - (1 - p)^KEPT_CALLS, not almost surely (docs/design/threat-model.md).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from typing import Any

import torch

from kgb.evaluate import comparison_kernels
from kgb.evaluate.correctness import (
    Tolerance,
    close_elements,
    placed_like,
    poison_,
    poison_storage,
    stored_bytes,
    tensors_in,
    tolerance_for,
)

# A digest's temporaries (the magnitudes, two masks) are a chunk of this many elements at a
# time: a whole bench output's would double the judge's peak GPU memory, and most outputs
# fit one chunk.
CHUNK_ELEMENTS = 1 << 24
# Calls kept whole where a spec compares answers its own way: each a copy of what it wrote, on
# the GPU until the turn's cases are finished. As many as fit KEPT_BYTES, and at least one: a
# vLLM cache op writes caches of gigabytes, and the memory a judge reserves for its bench cases
# (kgb.evaluate.memory_ledger) was measured before any was kept.
KEPT_CALLS = 3
KEPT_BYTES = 1 << 30
# Elements of each output a call keeps, at random positions (every element of a smaller output):
# a few kilobytes a call, and two small kernels, outside the timed region.
SAMPLED_ELEMENTS = 256
# Calls audited: each of the first AUDITED_FIRST, then the i-th with probability AUDITED_FIRST / i,
# drawn once it has run; about 29 of a measurement's 115 calls. Auditing every call took 68 s of
# the 153 s that a first job's turns measured on the H200 (session 41): a few milliseconds of
# digest between calls of 100 us. A kernel must skip at least half its calls to move their
# median; one that does is missed only where every audited call was one it did not skip,
# with probability under 1e-6 over 115 calls. The warm-up's calls count towards i, unaudited
# since judge v29 (they run on other values: `CallAudit.passed_over`), as they counted audited
# before; and the first call on the audited values is audited always, kept whole too, since
# kgb.evaluate.first_call times it alone: a kernel fast there because it skipped its work
# would make a kept answer's copies look like its own time.
AUDITED_FIRST = 8
_SECRET = random.SystemRandom()
# Rounding of the float64 sums, which add the same magnitudes in another order on another
# tensor: relative to the sum, far above float64's error over any output that fits a GPU.
SUM_SLACK = 1e-9


def written(result: Any, inputs: dict[str, Any], names: tuple[str, ...]) -> list[torch.Tensor]:
    """What a call wrote, in one order for the candidate's calls and the reference's: the
    tensors it returned, then those of its written arguments (a list of them too)."""
    return list(tensors_in([result, [inputs[n] for n in names if n in inputs]]))


def digest(tensors: Iterable[torch.Tensor]) -> torch.Tensor:
    """(count of NaNs, count of non-finite values, sum of finite magnitudes) of each floating
    tensor, (count of the poison value, 0, sum) of any other, as float64 rows on the device; a
    large floating one on a GPU in one kernel (`comparison_kernels.digested`).

    Every temporary it makes as large as a chunk of an output (magnitudes, masks, a contiguous
    copy) is poisoned before it goes back to the allocator. Between two calls of the replay,
    the next call's outputs come from blocks the judge poisoned (Replay.prepare_call): a
    temporary served from one of them, left holding |answer|, would hand the next call an
    output block that already holds the answer of an op whose answers are never negative."""
    rows, scratch = [], []
    try:
        for t in tensors:
            flat = t.detach().reshape(-1)
            if flat.untyped_storage().data_ptr() != t.untyped_storage().data_ptr():
                scratch.append(flat)  # a copy of a non-contiguous output
            if comparison_kernels.fused(flat):  # one kernel of the judge's own (judge v36)
                rows.append(comparison_kernels.digested(flat))
            elif flat.is_floating_point() or flat.is_complex():
                parts = [_floating(flat[i:i + CHUNK_ELEMENTS], scratch) for i in range(0, flat.numel(), CHUNK_ELEMENTS)]
                rows.append(torch.stack(parts).sum(0) if parts
                            else torch.zeros(3, dtype=torch.float64, device=flat.device))
            else:
                poison = torch.empty(1, dtype=flat.dtype, device=flat.device)
                poison_(poison)
                whole = flat.sum(dtype=torch.int64)  # wraps alike on equal tensors
                poisoned = _scratch(scratch, flat == poison)
                rows.append(torch.stack([poisoned.sum(), torch.zeros_like(whole), whole]).double())
    finally:
        for t in scratch:
            poison_storage(t.untyped_storage())
    return torch.stack(rows) if rows else torch.zeros(0, 3, dtype=torch.float64)  # a call that wrote nothing


def _floating(chunk: torch.Tensor, scratch: list[torch.Tensor]) -> torch.Tensor:
    """(NaNs, non-finite values, sum of finite magnitudes) of a chunk of a floating tensor; its
    temporaries go on `scratch`. Only ops that make no temporaries of their own: torch.isfinite
    and torch.isinf take |x| inside, which would go back to the allocator unpoisoned."""
    if chunk.element_size() == 1:
        chunk = _scratch(scratch, chunk.float())  # float8 has no isnan or abs of its own; widened exactly
    if chunk.is_complex():  # |re| + |im|, added in float64 (in its own precision it would round)
        parts = _scratch(scratch, _scratch(scratch, torch.view_as_real(chunk).abs()).double())
        magnitude = _scratch(scratch, parts.sum(-1))
    else:
        magnitude = _scratch(scratch, chunk.abs())
    # NaN where x is (a complex value with a NaN part: NaN in `magnitude` too, not infinite)
    nan = _scratch(scratch, torch.isnan(chunk)).sum()
    infinite = _scratch(scratch, magnitude == float("inf")).sum()
    return torch.stack([nan.double(), (nan + infinite).double(),
                        magnitude.nan_to_num_(0.0, 0.0, 0.0).sum(dtype=torch.float64)])


def _scratch(scratch: list[torch.Tensor], t: torch.Tensor) -> torch.Tensor:
    scratch.append(t)
    return t


Samples = list[tuple[torch.Tensor, torch.Tensor]]  # per tensor: (positions, its elements there)


def sampled(tensors: Iterable[torch.Tensor], generator: Callable[[torch.device], torch.Generator]) -> Samples:
    """For each tensor, SAMPLED_ELEMENTS positions in its row-major order, drawn on its device by
    `generator(device)`, and its elements there; every position of a tensor that has no more.
    Kept until the audit ends, so none of them goes back to the allocator during the replay."""
    samples = []
    for t in tensors:
        n = t.numel()
        if n <= SAMPLED_ELEMENTS:
            at = torch.arange(n, device=t.device)
        else:
            at = torch.randint(n, (SAMPLED_ELEMENTS,), generator=generator(t.device), device=t.device)
        samples.append((at, _take(t.detach(), at)))
    return samples


def _take(t: torch.Tensor, at: torch.Tensor) -> torch.Tensor:
    """t's elements at row-major positions `at`, read through its strides: no copy of t."""
    if t.element_size() == 1 and t.dtype not in (torch.uint8, torch.int8, torch.bool):
        return torch.take(t.view(torch.uint8), at).view(t.dtype)  # float8 has no take of its own
    return torch.take(t, at)


class CallAudit:
    """What a replay's calls wrote, taken call by call (`record`): each call's digest, or with
    `whole` (a spec that compares its own way) KEPT_CALLS calls kept whole; judged after the
    turn against the reference's answer (`disagreement`)."""

    def __init__(self, names: tuple[str, ...], whole: bool = False):
        self.names = names  # the written arguments, beside the return value
        self.whole = whole
        self.calls = 0
        self.audited: list[int] = []  # the numbers of the calls whose digests and samples were taken
        self.digests: list[torch.Tensor] = []
        self.samples: list[Samples] = []
        self._generators: dict[torch.device, torch.Generator] = {}  # secret seeds, drawn here
        # call number: its result, its inputs and the storages copied for them
        self.kept: dict[int, tuple[Any, dict[str, Any], list[torch.UntypedStorage]]] = {}
        self.room = KEPT_CALLS  # calls kept at once besides the first: fewer where one call's copy is large
        self.passed = 0  # calls before the first, on other values: counted, not audited (`passed_over`)
        self.pinned: int | None = None  # the first call, kept whole beside the reservoir's
        self.pinned_bytes = 0  # what its copy holds
        self.loaded = False  # whether `ready` took its digest

    def ready(self, result: Any, inputs: dict[str, Any]) -> None:
        """A digest of a warm-up call's outputs that its Triton kernel takes, thrown away: the
        kernel loaded for what the calls write before the turn (a warm-up runs in a work
        section). A judge's first digest of an output on a GPU loads the kernel's binary, some
        tenths of a second that held the turn when the first audited call met it (session 65)."""
        if not self.whole and not self.loaded:
            fused = [t for t in written(result, inputs, self.names) if comparison_kernels.fused(t)]
            if fused:  # the others' digests are PyTorch's ops: nothing to load
                digest(fused)
            self.loaded = True

    def passed_over(self) -> None:
        """A call the audit leaves out, which still makes a later call's odds of being audited
        what they were when it was audited too: the warm-up's, on other values (judge v29)."""
        self.passed += 1

    def record(self, result: Any, inputs: dict[str, Any]) -> None:
        self.calls += 1
        first = self.calls == 1  # timed alone (kgb.evaluate.first_call): always checked
        if not self.whole:
            # drawn after the call ran, from the judge's own generator: no call can tell it is audited
            if not first and _SECRET.random() >= AUDITED_FIRST / (self.calls + self.passed):
                return
            self.audited.append(self.calls)
            tensors = written(result, inputs, self.names)
            self.digests.append(digest(tensors))
            self.samples.append(sampled(tensors, self._generator))
            return
        # The first call kept whole besides the others where two copies fit KEPT_BYTES, the
        # others then kept in what it leaves, so that what is kept stays within KEPT_BYTES (or
        # one copy) as before judge v29; a larger first call (a vLLM cache op's is gigabytes) is
        # one of the others. Reservoir sampling over the others: every one ends up kept with the
        # same probability, and which is drawn only once it has run, so no call can tell it will
        # be checked.
        pinned = first and 2 * stored_bytes(written(result, inputs, self.names)) <= KEPT_BYTES
        if not pinned:
            others = sorted(k for k in self.kept if k != self.pinned)
            if len(others) >= self.room:
                slot = _SECRET.randrange(self.calls - (self.pinned is not None))
                if slot >= self.room:
                    return
                self._evict(others[slot])
        result, inputs, copies = kept(result, inputs, self.names)
        self.kept[self.calls] = result, inputs, copies
        size = max(sum(c.nbytes() for c in copies), 1)
        if pinned:
            self.pinned, self.pinned_bytes = self.calls, size
        else:
            self.room = max(1, min(self.room, (KEPT_BYTES - self.pinned_bytes) // size))

    def _generator(self, device: torch.device) -> torch.Generator:
        if device not in self._generators:
            self._generators[device] = torch.Generator(device=device).manual_seed(_SECRET.randrange(1 << 62))
        return self._generators[device]

    def _evict(self, call: int) -> None:
        """A kept call let go of, its copies poisoned first: freed holding an answer, a block
        could be the next call's output (`digest` says why that matters)."""
        for storage in self.kept.pop(call)[2]:
            poison_storage(storage)

    def disagreement(self, expected: Any, ref_inputs: dict[str, Any], reduction: int,
                     compare: Callable[[Any, dict[str, Any]], str | None] | None = None) -> str | None:
        """Why some call's answer is not one the comparison accepts; None if every one is (as
        far as the audit sees). `expected` and `ref_inputs`: the reference's answer on set V (the
        checked call's, which it accepted, has the same shapes and dtypes); `compare(result,
        inputs)`: the case's comparison of a call's answer with it, for the calls kept whole."""
        if self.kept and compare is None:
            raise ValueError("calls kept whole are judged by the case's comparison: pass `compare`")
        for call, (result, inputs, _) in sorted(self.kept.items()):
            message = compare(result, inputs)
            if message:
                how = "the first, kept whole" if call == self.pinned else f"one of {len(self.kept)} kept whole at random"
                return f"call {call} of {self.calls}, {how}, was wrong: {message}"
        if not self.digests:
            return None
        reference = written(expected, ref_inputs, self.names)
        ref = digest(reference)
        calls = torch.stack(self.digests)  # calls x tensors x 3
        if calls.shape[1:] != ref.shape:
            return f"a call wrote {calls.shape[1]} tensors, the reference {ref.shape[0]}"
        tols = [tolerance_for(e, reduction) if e.is_floating_point() or e.is_complex() else None for e in reference]
        ok = torch.ones(calls.shape[:2], dtype=torch.bool, device=calls.device)
        for j, (e, tol) in enumerate(zip(reference, tols, strict=True)):
            if tol is not None:
                n = ref[j, 0].new_tensor(e.numel()) - ref[j, 1]  # the finite elements
                # a complex error's real and imaginary parts add up to at most sqrt(2) its modulus
                widen = 2.0 if e.is_complex() else 1.0
                bound = widen * (n * tol.atol + tol.rtol * ref[j, 2]) + SUM_SLACK * ref[j, 2]
                ok[:, j] = ((calls[:, j, :2] == ref[j, :2]).all(-1)
                            & ((calls[:, j, 2] - ref[j, 2]).abs() <= bound))
            else:
                ok[:, j] = (calls[:, j] == ref[j]).all(-1)
        bad = (~ok.all(-1)).nonzero().flatten().tolist()
        if not bad:
            return self._wrong_elements(reference, tols)
        first = bad[0]
        j = int((~ok[first]).nonzero()[0, 0])
        got, want = calls[first, j].tolist(), ref[j].tolist()
        return (f"{len(bad)} of {self._of()} wrote what no accepted answer can be (the first, "
                f"call {self.audited[first]}, in its output {j}: {_described(got, reference[j])} where the reference's "
                f"has {_described(want, reference[j])})")


    def _of(self) -> str:
        """The calls audited, and of how many where not all were."""
        n = len(self.audited)
        return f"{n} calls" if n == self.calls else f"{n} calls audited (drawn at random from {self.calls})"

    def _wrong_elements(self, reference: list[torch.Tensor], tols: list[Tolerance | None]) -> str | None:
        """Why some call's sampled elements are not ones the comparison accepts against the
        reference's at the same positions; None if all are."""
        wrong = []  # per output: calls x samples, where an element is not accepted
        for j, (e, tol) in enumerate(zip(reference, tols, strict=True)):
            positions = [s[j][0] for s in self.samples]
            at = torch.stack(positions) if all(a.shape == positions[0].shape for a in positions) else None
            if at is None or (at.numel() and int(at.max()) >= e.numel()):
                return f"a call's output {j} has another number of elements than the reference's ({e.numel()})"
            got = torch.stack([s[j][1] for s in self.samples])
            want = _take(e.detach(), at.reshape(-1)).view(at.shape)
            wrong.append(~close_elements(got, want, tol)[0] if tol is not None else got != want)
        if not wrong:
            return None
        bad = torch.stack([w.any(-1) for w in wrong]).any(0).nonzero().flatten().tolist()
        if not bad:
            return None
        call = bad[0]
        j = next(j for j, w in enumerate(wrong) if bool(w[call].any()))
        k = int(wrong[j][call].nonzero()[0, 0])
        at, got = self.samples[call][j]
        position = int(at[k])
        want = _take(reference[j].detach(), at[k:k + 1])[0]
        return (f"{len(bad)} of {self._of()} wrote what no accepted answer can be (the first, call "
                f"{self.audited[call]}, in its output {j} at element {position} of {reference[j].numel()}, one of those drawn "
                f"at random after it ran: {_value(got[k])} where the reference has {_value(want)})")


def _value(element: torch.Tensor) -> str:
    if element.is_floating_point() or element.is_complex():
        return f"{element.to(torch.complex128 if element.is_complex() else torch.float64).item():.6g}"
    return str(element.item())


def kept(result: Any, inputs: dict[str, Any], names: tuple[str, ...]
         ) -> tuple[Any, dict[str, Any], list[torch.UntypedStorage]]:
    """A call's result and inputs as the call left them, for a comparison after later calls:
    every storage it may have written copied (its written arguments', and those of its result
    that are no input's), once, and each tensor rebuilt on the copy with its geometry; an input
    it only read kept as it is (reloaded with the same values before every call). So what the
    comparison checks of aliasing holds as it did: a view of `self` is still one, an in-place
    op's result is still its argument, the same object where it was (judged by a copy of each
    tensor instead, every view and every in-place op was wrong). And the storages copied."""
    read_only = ({t.untyped_storage()._cdata for t in tensors_in(list(inputs.values()))}
                 - {t.untyped_storage()._cdata for n in names if n in inputs for t in tensors_in(inputs[n])})
    copies: dict[int, torch.UntypedStorage] = {}  # by the storage's handle
    rebuilt: dict[int, torch.Tensor] = {}  # by the tensor object's id

    def copy(v: Any) -> Any:
        if isinstance(v, torch.Tensor):
            if id(v) not in rebuilt:
                storage = v.untyped_storage()
                if storage._cdata in read_only:
                    rebuilt[id(v)] = v
                else:
                    if storage._cdata not in copies:
                        copies[storage._cdata] = storage.clone()
                    rebuilt[id(v)] = placed_like(v, copies[storage._cdata])
            return rebuilt[id(v)]
        if isinstance(v, dict):
            return {k: copy(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return type(v)(copy(x) for x in v)
        return v

    kept_result, kept_inputs = copy(result), copy(inputs)
    return kept_result, kept_inputs, list(copies.values())


def _described(row: list[float], like: torch.Tensor) -> str:
    if like.is_floating_point() or like.is_complex():
        return f"{int(row[0])} NaN, {int(row[1])} non-finite, magnitudes summing to {row[2]:.6g}"
    if like.dtype == torch.bool:  # its poison is True
        return f"{int(row[0])} True"
    return f"{int(row[0])} poison values, a sum of {int(row[2])}"
