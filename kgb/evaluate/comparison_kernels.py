"""The comparison's passes over a large floating tensor on a GPU, each fused into one Triton
kernel of the judge's own (kgb.evaluate.correctness uses them); and since judge v35 the check
that an input the call must not write was left as it was sent, exact, over integers too; and
since judge v36 the digest the audit takes of a timed call's outputs between calls.

Done with PyTorch's ops, comparing an output widened to float64 took about 25 kernels per two
million elements (`correctness.close_elements`, a chunk at a time), and the scale its tolerance
grows with (`correctness.rms`) five more. Sixteen judges share a GPU, and their processes' kernels
take turns on it: each of those thousands of small launches could wait for another process's
slice of the GPU. In the first job on an H100 (session 62's trace) the comparisons' work sections
summed 117.5 s, 343 of them over 0.1 s (70.5 s), up to 3.4 s, and a timing turn waited for one to
end 65 times. Here a tensor takes one kernel, reading each element once, and a few small
reductions of what its programs found.

The arithmetic is the same as the ops': in float64, element by element, with the same
comparisons (an element is outside tolerance where those ops say so). Two things can differ in
the last bit of a float64: the tolerance's bound `atol + rtol * |e|` may be computed with one
rounding where the ops round twice (a fused multiply-add), and the sum of squares behind the scale
adds in another order. An element's verdict could differ only where its error lies within a
float64's last bit of its bound. The exact check counts what `correctness.same_bits` did.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
from collections.abc import Callable

import torch

# What the kernels read: any other dtype (complex, float8, integers) is compared by the ops.
FUSED_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
# What the check of an input left untouched reads (exact equality): those and the integers.
EXACT_DTYPES = FUSED_DTYPES + (torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64)
# Below this many elements the ops' few launches cost less than this process's first use of a
# kernel (its binary found in the cache and loaded, once per process and dtype).
FUSED_FROM_ELEMENTS = 1 << 21
BLOCK = 4096  # elements each program reads: one partial result per program


@dataclasses.dataclass(frozen=True)
class Closeness:
    """What the comparison of two flat tensors found."""
    outside: int  # elements outside tolerance
    first: int | None  # the flat index of the first of them
    max_abs: float  # NaN where any error is NaN, as the ops' max says
    max_rel: float


def exact(t: torch.Tensor) -> bool:
    """Whether a tensor's exact equality with another is counted here: a large one on a GPU, of
    a floating or integer dtype."""
    return t.device.type == "cuda" and t.dtype in EXACT_DTYPES and t.numel() >= FUSED_FROM_ELEMENTS


def fused(t: torch.Tensor) -> bool:
    """Whether a tensor is compared here: a large floating one on a GPU."""
    return t.dtype in FUSED_DTYPES and exact(t)


def closeness(a: torch.Tensor, e: torch.Tensor, atol: float, rtol: float) -> Closeness:
    """`a` against `e`, both flat, of one dtype and length, on one GPU; each element's error
    against the tolerance `atol + rtol * |e|` where `e` is finite, else `a` equal to `e` (or both
    NaN). The errors where `e` is not finite count as 0 in the maxima."""
    a, e = a.contiguous(), e.contiguous()
    n = e.numel()
    programs = _programs(n)
    # float64 scalars from memory: a Python float argument would reach the kernel as a float32
    params = torch.tensor([atol, rtol, 1e-30], dtype=torch.float64).to(e.device, non_blocking=True)
    outside = torch.empty(programs, dtype=torch.int64, device=e.device)
    first = torch.empty(programs, dtype=torch.int64, device=e.device)
    nans = torch.empty(programs, dtype=torch.int64, device=e.device)
    max_abs = torch.empty(programs, dtype=torch.float64, device=e.device)
    max_rel = torch.empty(programs, dtype=torch.float64, device=e.device)
    _kernels().close[(programs,)](a, e, params, n, outside, first, nans, max_abs, max_rel, BLOCK=BLOCK)
    found = torch.stack([outside.sum().double(), first.min().double(), nans.sum().double(),
                         max_abs.max(), max_rel.max()]).tolist()  # one wait for the GPU
    count, first_at, nan_count, worst_abs, worst_rel = found
    if nan_count:
        worst_abs = worst_rel = math.nan
    return Closeness(int(count), int(first_at) if count else None, worst_abs, worst_rel)


def root_mean_square(t: torch.Tensor) -> float:
    """The root mean square of a flat tensor's finite values, widened to float64; 0 if none."""
    t = t.contiguous()
    n = t.numel()
    programs = _programs(n)
    squares = torch.empty(programs, dtype=torch.float64, device=t.device)
    counts = torch.empty(programs, dtype=torch.int64, device=t.device)
    _kernels().squares[(programs,)](t, n, squares, counts, BLOCK=BLOCK)
    total, finite = torch.stack([squares.sum(), counts.sum().double()]).tolist()
    return math.sqrt(total / finite) if finite else 0.0


def differing(a: torch.Tensor, b: torch.Tensor) -> int:
    """How many elements of `a` and `b` (flat, of one dtype and length, on one GPU) differ, NaN
    equal to NaN: `correctness.same_bits`, in one pass. By the ops it took six kernels and four
    temporaries of the tensor's length, once for each argument a call must not write."""
    a, b = a.contiguous(), b.contiguous()
    n = a.numel()
    programs = _programs(n)
    counts = torch.empty(programs, dtype=torch.int64, device=a.device)
    _kernels().differ[(programs,)](a, b, n, counts, BLOCK=BLOCK, FLOATING=a.is_floating_point())
    return int(counts.sum())


def digested(t: torch.Tensor) -> torch.Tensor:
    """(count of NaNs, count of non-finite values, sum of finite magnitudes) of a flat floating
    tensor on a GPU, as a float64 row on the device, without waiting for it: `call_audit.digest`'s
    row, in one pass. By the ops it took about ten kernels per 16M elements, three of them filling
    a temporary of the tensor's length with poison, after each audited call of a timed case, in
    the turn, where they read and wrote some eleven times what the kernel reads once."""
    t = t.contiguous()
    n = t.numel()
    programs = _programs(n)
    found = torch.empty(3, programs, dtype=torch.float64, device=t.device)
    _kernels().digest[(programs,)](t, n, found, BLOCK=BLOCK)
    row = found.sum(1)
    found.fill_(math.nan)  # `call_audit.digest` says why nothing it frees between calls holds a value
    return row


def warm_up(device: str, start: int | None = None, until: Callable[[], bool] | None = None) -> bool:
    """Each kernel compiled (into the judges' Triton cache, once per host) and loaded for every
    dtype it takes: a spare judge does it before its request, where a judge's first comparison
    would, inside a work section that a timing turn may be waiting for. Both specialisations
    of the length: one that 16 divides, and one that it does not, at an address that it does
    (a slice would not be one), which Triton compiles apart. (Until session 67 only the digest
    had the second: the batched GEMMs' bench outputs, of odd lengths, then met theirs in their
    compare sections, which took 0.8-1.3 s on an H100 where their other compares took 0.05.)

    Each process begins at another place of the list (`start`, else its pid): at a job's start
    on a host whose cache is empty, the spares that start side by side then compile different
    kernels at once, each loading the others' from the cache, where each compiled every one of
    them in the same order. (Session 67, an H100's first job: the seven spares that took the
    first trials reached their first work section 8.5-8.8 s after their processes' start had
    ended, the four judges started without a warm-up 0.1-0.3 s after; how much of that was these
    compiles the trace did not say, and `kgb.evaluate.spare` now traces it.)

    It stops before the next kernel once `until()` says so, and says whether it did: a spare
    whose request has come loads the rest at their first use. At a job's start every trial
    waits for a spare, and the comparison kernels were 2.6 s of the first spares' 3.7 s
    warm-up (session 69's first job on an H100), with the GPU idle and no timing turn yet for
    a section to hold up."""
    calls = _warm_up_calls(device)
    begin = (os.getpid() if start is None else start) % len(calls)
    for call in calls[begin:] + calls[:begin]:
        if until is not None and until():
            return True
        call()
    return False


def _warm_up_calls(device: str) -> list[Callable[[], object]]:
    """One call per kernel, dtype and specialisation of the length, each on zeros of its own."""
    def zeros(dtype: torch.dtype, length: int) -> torch.Tensor:
        return torch.zeros(length, dtype=dtype, device=device)

    calls: list[Callable[[], object]] = []
    for dtype in EXACT_DTYPES:
        for length in (BLOCK, BLOCK + 1):
            calls.append(lambda d=dtype, n=length: differing(zeros(d, n), zeros(d, n)))
            if dtype in FUSED_DTYPES:
                calls.append(lambda d=dtype, n=length: closeness(zeros(d, n), zeros(d, n), 0.0, 0.0))
                calls.append(lambda d=dtype, n=length: root_mean_square(zeros(d, n)))
                calls.append(lambda d=dtype, n=length: digested(zeros(d, n)))
    return calls


def _programs(n: int) -> int:
    return -(-n // BLOCK)


@functools.cache
def _kernels():
    """The kernels, defined on first use: the judge imports Triton, a tool that only compares
    on the CPU need not."""
    import triton
    import triton.language as tl

    @triton.jit
    def close(a_ptr, e_ptr, params_ptr, n, outside_ptr, first_ptr, nans_ptr, max_abs_ptr, max_rel_ptr,
              BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < n
        a = tl.load(a_ptr + offs, mask=inside, other=0.0).to(tl.float64)
        e = tl.load(e_ptr + offs, mask=inside, other=0.0).to(tl.float64)
        atol = tl.load(params_ptr)
        rtol = tl.load(params_ptr + 1)
        floor = tl.load(params_ptr + 2)
        magnitude = tl.abs(e)
        finite = magnitude < float("inf")  # false for NaN too
        err = tl.abs(a - e)
        within = err <= atol + rtol * magnitude  # false where err is NaN
        same = (a == e) | ((a != a) & (e != e))
        ok = tl.where(finite, within, same) | (offs >= n)
        counted = finite & inside
        err = tl.where(counted, err, 0.0)
        rel = tl.where(counted, err / tl.maximum(magnitude, floor), 0.0)
        nan = err != err
        tl.store(outside_ptr + pid, tl.sum((ok == 0).to(tl.int64), axis=0))
        tl.store(first_ptr + pid, tl.min(tl.where(ok, n, offs), axis=0))
        tl.store(nans_ptr + pid, tl.sum(nan.to(tl.int64), axis=0))
        tl.store(max_abs_ptr + pid, tl.max(tl.where(nan, 0.0, err), axis=0))
        tl.store(max_rel_ptr + pid, tl.max(tl.where(rel != rel, 0.0, rel), axis=0))

    @triton.jit
    def squares(x_ptr, n, squares_ptr, counts_ptr, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < n
        magnitude = tl.abs(tl.load(x_ptr + offs, mask=inside, other=0.0).to(tl.float64))
        finite = (magnitude < float("inf")) & inside
        tl.store(squares_ptr + pid, tl.sum(tl.where(finite, magnitude * magnitude, 0.0), axis=0))
        tl.store(counts_ptr + pid, tl.sum(finite.to(tl.int64), axis=0))

    @triton.jit
    def differ(a_ptr, b_ptr, n, counts_ptr, BLOCK: tl.constexpr, FLOATING: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < n
        a = tl.load(a_ptr + offs, mask=inside, other=0)
        b = tl.load(b_ptr + offs, mask=inside, other=0)
        if FLOATING:  # widened losslessly, as the interpreter compares bfloat16 by its bits
            a, b = a.to(tl.float64), b.to(tl.float64)
        same = (a == b) | ((a != a) & (b != b))  # the second false for integers
        tl.store(counts_ptr + pid, tl.sum(((same == 0) & inside).to(tl.int64), axis=0))

    @triton.jit
    def digest(x_ptr, n, found_ptr, BLOCK: tl.constexpr):
        # the programs' count read here, not passed: Triton compiles an integer argument of 1
        # apart, so a warm-up's one program would load a kernel no output's digest runs
        pid, programs = tl.program_id(0), tl.num_programs(0)
        offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < n
        x = tl.load(x_ptr + offs, mask=inside, other=0.0).to(tl.float64)  # exact, so |x| is too
        magnitude = tl.abs(x)
        nan = (x != x) & inside
        finite = (magnitude < float("inf")) & inside  # false for NaN too
        tl.store(found_ptr + pid, tl.sum(nan.to(tl.float64), axis=0))
        tl.store(found_ptr + programs + pid, tl.sum((inside & (finite == 0)).to(tl.float64), axis=0))
        tl.store(found_ptr + 2 * programs + pid, tl.sum(tl.where(finite, magnitude, 0.0), axis=0))

    return _Kernels(close, squares, differ, digest)


@dataclasses.dataclass(frozen=True)
class _Kernels:
    close: object
    squares: object
    differ: object
    digest: object
