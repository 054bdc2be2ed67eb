"""Comparing a candidate's outputs with the reference's. Runs inside the worker."""

from __future__ import annotations

import ctypes
import functools
import math
from collections.abc import Iterator, Mapping
from typing import Any

import torch

from kgb.evaluate import comparison_kernels
from kgb.operators import Case, Spec, Tolerance, published_tolerance


def clone_exact(value: Any) -> Any:
    """A deep copy that keeps every tensor's storage layout (strides, offset, overlap)."""
    if isinstance(value, torch.Tensor):
        return placed_like(value, value.untyped_storage().clone())
    if isinstance(value, Mapping):
        return {k: clone_exact(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(clone_exact(v) for v in value)
    return value


def poison_(t: torch.Tensor) -> None:
    """Fill an output buffer with values a correct kernel overwrites and a lazy one leaves."""
    if t.is_floating_point() or t.is_complex():
        t.fill_(float("nan"))
    elif t.dtype == torch.bool:
        t.fill_(True)
    else:
        t.fill_(torch.iinfo(t.dtype).min + 7 if t.dtype != torch.uint8 else 0xA5)


def placed_like(t: torch.Tensor, storage: torch.UntypedStorage) -> torch.Tensor:
    """A tensor over `storage` with t's dtype and geometry (offset, size, strides)."""
    placed = torch.empty(0, dtype=t.dtype, device=t.device)
    placed.set_(storage, t.storage_offset(), t.size(), t.stride())
    # lazy conjugate / negative views keep their bit, as the case made them
    torch._C._set_conj(placed, t.is_conj())
    torch._C._set_neg(placed, t.is_neg())
    return placed


def poison_storage(storage: torch.UntypedStorage) -> None:
    """Every byte of a storage 0xFF (NaN as a float): a block the caching allocator may hand
    out again then holds no answer (kgb.evaluate.replay.Replay.prepare_call)."""
    torch.empty(0, dtype=torch.uint8, device=storage.device).set_(storage).fill_(0xFF)


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Exact equality, NaN included: for inputs that must be left untouched."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if comparison_kernels.exact(a) and a.device == b.device:
        return comparison_kernels.differing(a.reshape(-1), b.reshape(-1)) == 0
    if a.is_floating_point() or a.is_complex():
        return bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all())
    return bool((a == b).all())


def _describe(index: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(i) for i in index) + ")"


def compare_tensor(
    what: str, actual: Any, expected: torch.Tensor, reduction: int, tol: Tolerance | None = None
) -> tuple[str | None, float | None, float | None]:
    """(mismatch message or None, max abs error, max relative error)."""
    if not isinstance(actual, torch.Tensor):
        return f"{what}: expected a tensor, got {type(actual).__name__}", None, None
    if actual.shape != expected.shape:
        return f"{what}: shape {tuple(actual.shape)}, expected {tuple(expected.shape)}", None, None
    if actual.dtype != expected.dtype:
        return f"{what}: dtype {actual.dtype}, expected {expected.dtype}", None, None
    if actual.device.type != expected.device.type:
        return f"{what}: on {actual.device}, expected {expected.device.type}", None, None
    if expected.numel() == 0:
        return None, 0.0, 0.0
    exact = not (expected.is_floating_point() or expected.is_complex())
    # compared where they live: moving big bench outputs to the host costs seconds
    a = actual.detach()
    e = expected.detach()
    if exact:
        bad = a != e
        if not bad.any():
            return None, 0.0, 0.0
        where = tuple(int(i) for i in bad.nonzero()[0])
        return (
            f"{what}: {int(bad.sum())} of {e.numel()} elements differ; first at "
            f"{_describe(where)}: got {a[where].item()}, expected {e[where].item()}",
            None,
            None,
        )
    if tol is None:
        tol = tolerance_for(e, reduction)
    return _compare_close(what, a.reshape(-1), e.reshape(-1), expected.shape, tol)


def tolerance_for(expected: torch.Tensor, reduction: int) -> Tolerance:
    """The published tolerance an answer's floating tensor is compared with: by its dtype,
    the case's reduction length and the expected values' scale."""
    return published_tolerance(str(expected.dtype).removeprefix("torch."), reduction, rms(expected))


# Floating outputs are compared widened to float64, a chunk of this many elements at a time.
# Whole, a bench case's output made several float64 temporaries of 8x its size: gigabytes
# the allocator took from the driver and gave back after the case, beside 15 other judges'
# work (on the H200, session 30: 227 s of a sweep's comparisons, 290 s of memory release).
# A chunk's temporaries take about 100 MB, which the allocator reuses from chunk to chunk.
CHUNK_ELEMENTS = 1 << 21


def _chunks(*flat: torch.Tensor) -> Iterator[tuple[torch.Tensor, ...]]:
    for start in range(0, flat[0].numel(), CHUNK_ELEMENTS):
        yield tuple(t[start:start + CHUNK_ELEMENTS] for t in flat)


def close_elements(a: torch.Tensor, e: torch.Tensor, tol: Tolerance) -> tuple[torch.Tensor, ...]:
    """For one chunk (or any elements paired up), widened: where the actual values are acceptable, and the errors (0 where
    the expected value is not finite, which must be matched exactly instead)."""
    wide = torch.complex128 if e.is_complex() else torch.float64
    a, e = a.to(wide), e.to(wide)
    finite = torch.isfinite(e)
    err = (a - e).abs()
    ok = torch.where(finite, err <= tol.atol + tol.rtol * e.abs(), (a == e) | (torch.isnan(a) & torch.isnan(e)))
    rel = torch.where(finite, err / e.abs().clamp_min(1e-30), 0.0)
    return ok, torch.where(finite, err, 0.0), rel


def _compare_close(what: str, a: torch.Tensor, e: torch.Tensor, shape: torch.Size,
                   tol: Tolerance) -> tuple[str | None, float | None, float | None]:
    """compare_tensor for flattened floating tensors, a chunk at a time: the counts and maxima
    stay on the device until every chunk is queued, so the host waits at the end, not per chunk.
    A large one on a GPU is compared by one kernel instead (kgb.evaluate.comparison_kernels)."""
    if comparison_kernels.fused(e):
        found = comparison_kernels.closeness(a, e, tol.atol, tol.rtol)
        if not found.outside:
            return None, found.max_abs, found.max_rel
        return _outside_message(what, a, e, shape, tol, found.outside, found.first), found.max_abs, found.max_rel
    bad, max_abs, max_rel = [], [], []
    for ca, ce in _chunks(a, e):
        ok, err, rel = close_elements(ca, ce, tol)
        bad.append((~ok).sum())
        max_abs.append(err.max())  # NaN where an error was: as the comparison fails there
        max_rel.append(rel.max())
    per_chunk = torch.stack(bad).tolist()
    worst_abs, worst_rel = torch.stack([torch.stack(max_abs).max(), torch.stack(max_rel).max()]).tolist()
    if not any(per_chunk):
        return None, worst_abs, worst_rel
    first = next(i for i, n in enumerate(per_chunk) if n)
    start = first * CHUNK_ELEMENTS
    ok, _, _ = close_elements(a[start:start + CHUNK_ELEMENTS], e[start:start + CHUNK_ELEMENTS], tol)
    flat_index = start + int((~ok).nonzero()[0, 0])
    return _outside_message(what, a, e, shape, tol, sum(per_chunk), flat_index), worst_abs, worst_rel


def _outside_message(what: str, a: torch.Tensor, e: torch.Tensor, shape: torch.Size, tol: Tolerance,
                     outside: int, flat_index: int) -> str:
    where = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat_index), shape))
    return (f"{what}: {outside} of {e.numel()} elements outside tolerance "
            f"(rtol {tol.rtol:g}, atol {tol.atol:.3g}); first at {_describe(where)}: "
            f"got {_element(a[flat_index])}, expected {_element(e[flat_index])}")


def _element(value: torch.Tensor) -> str:
    """One element for a message, widened as it was compared."""
    return f"{value.to(torch.complex128 if value.is_complex() else torch.float64).item():.6g}"


def rms(t: torch.Tensor) -> float:
    """The root mean square of a tensor's finite values (0 if none): the scale that
    tolerances grow with. Summed a chunk at a time, on the device, like the comparison, or by
    one kernel where the comparison takes one."""
    flat = t.detach().reshape(-1)
    if comparison_kernels.fused(flat):
        return comparison_kernels.root_mean_square(flat)
    wide = torch.complex128 if flat.is_complex() else torch.float64
    squares, counts = [], []
    for (chunk,) in _chunks(flat):
        magnitude = chunk.to(wide).abs()  # widened first: float8 has no isfinite of its own
        finite = torch.isfinite(magnitude)
        squares.append(torch.where(finite, magnitude, 0.0).square().sum())
        counts.append(finite.sum())
    if not squares:
        return 0.0
    # one wait for the device, where reading the count and then the sum waited twice
    total, n = torch.stack([torch.stack(squares).sum(), torch.stack(counts).sum().double()]).tolist()
    return math.sqrt(total / n) if n else 0.0


def compare_values(
    what: str, actual: Any, expected: Any, reduction: int
) -> tuple[str | None, float | None, float | None]:
    """Compare return values: a tensor, a sequence of them, or a Python scalar."""
    if isinstance(expected, torch.Tensor):
        return compare_tensor(what, actual, expected, reduction)
    if isinstance(expected, list | tuple):
        if not isinstance(actual, list | tuple) or len(actual) != len(expected):
            return f"{what}: expected a sequence of {len(expected)} values, got {type(actual).__name__}", None, None
        worst_abs, worst_rel = 0.0, 0.0
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            msg, ab, rl = compare_values(f"{what}[{i}]", a, e, reduction)
            if msg:
                return msg, ab, rl
            worst_abs, worst_rel = max(worst_abs, ab or 0.0), max(worst_rel, rl or 0.0)
        return None, worst_abs, worst_rel
    if expected is None:
        return (None if actual is None else f"{what}: expected None, got {type(actual).__name__}"), None, None
    if type(actual) is not type(expected):
        return f"{what}: expected a Python {type(expected).__name__}, got {type(actual).__name__}", None, None
    if isinstance(expected, float) and not math.isfinite(expected):
        same = actual == expected or (math.isnan(actual) and math.isnan(expected))
        return (None if same else f"{what}: got {actual!r}, expected {expected!r}"), None, None
    if isinstance(expected, float):
        tol = published_tolerance("float32", reduction, abs(expected))
        if abs(actual - expected) <= tol.atol + tol.rtol * abs(expected) or (actual != actual and expected != expected):
            return None, abs(actual - expected), None
        return f"{what}: got {actual!r}, expected {expected!r}", abs(actual - expected), None
    return (None if actual == expected else f"{what}: got {actual!r}, expected {expected!r}"), None, None


def compare_outputs(
    spec: Spec, case: Case, actual: dict[str, Any], expected: dict[str, Any], inputs: dict[str, Any]
) -> tuple[str | None, float | None, float | None]:
    """Judge everything a call produced: `{"return": value, <written arg>: tensor, ...}`.

    Uses the spec's own `compare` where it has one (random, uninitialised or aliasing
    outputs), else the published tolerance on every value.
    """
    custom = getattr(spec.module, "compare", None)
    if custom is not None:
        return custom(actual, expected, case, inputs), None, None
    worst_abs, worst_rel = 0.0, 0.0
    for key, exp in expected.items():
        what = "return value" if key == "return" else f"argument {key}"
        message, ab, rl = compare_values(what, actual.get(key), exp, case.reduction)
        if message:
            return message, ab, rl
        worst_abs, worst_rel = max(worst_abs, ab or 0.0), max(worst_rel, rl or 0.0)
    return None, worst_abs, worst_rel


def leaves(value: Any) -> Iterator[Any]:
    """Every value in a value of lists, tuples and dicts that is none of them, in order."""
    if isinstance(value, list | tuple):
        for v in value:
            yield from leaves(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from leaves(v)
    else:
        yield value


def tensors_in(value: Any) -> Iterator[torch.Tensor]:
    """Every tensor in a value of tensors, lists, tuples and dicts, in order."""
    return (v for v in leaves(value) if isinstance(v, torch.Tensor))


def stored_bytes(value: Any) -> int:
    """The bytes of the storages under the tensors of `value`, each once."""
    return sum({t.untyped_storage()._cdata: t.untyped_storage().nbytes() for t in tensors_in(value)}.values())


def load_values(dst: Any, src: Any) -> None:
    """Copy the storages under src's tensors into those under dst's, matched by position:
    whole storages, so overlapping and strided layouts come across byte for byte."""
    for d, s in storage_pairs(dst, src):
        d.copy_(s)


def storage_pairs(dst: Any, src: Any) -> list[tuple[torch.UntypedStorage, torch.UntypedStorage]]:
    """Each storage under dst's tensors with the one under src's at the same position, once."""
    pairs: dict[int, tuple[torch.UntypedStorage, torch.UntypedStorage]] = {}

    def walk(d: Any, s: Any) -> None:
        if isinstance(d, torch.Tensor):
            pairs[d.untyped_storage()._cdata] = (d.untyped_storage(), s.untyped_storage())
        elif isinstance(d, list | tuple):
            for a, b in zip(d, s, strict=True):
                walk(a, b)
        elif isinstance(d, dict):
            for k in d:
                walk(d[k], s[k])

    walk(dst, src)
    return list(pairs.values())


# What a process may keep cached between cases: a check case's few MB, not a bench case's
# hundreds. Freeing is a driver call that waits on a GPU busy with other processes' work: on
# the H200 the judges' releases took 0.3 s each, 550 s over 150 operators (session 28).
# Kept so, a whole sweep's releases still summed 495 s: the large ones are the slow ones
# (session 29); peak GPU memory did not rise past what sweeps had reached before.
KEEP_CACHED_BYTES = 128 << 20


def release_cached_memory(device: str) -> bool:
    """Give the allocator's cached blocks back once they exceed KEEP_CACHED_BYTES; whether it
    did. Up to 32 processes (16 judges, each with its candidate process) share one GPU: memory
    one keeps cached after its case is what another's next case needs (on the H200, correct
    solutions failed with CUDA out-of-memory)."""
    if device == "cuda" and torch.cuda.memory_reserved() - torch.cuda.memory_allocated() > KEEP_CACHED_BYTES:
        torch.cuda.empty_cache()
        return True
    return False


def fill_allocator_with_garbage(device: str) -> None:
    """Fresh allocations by the candidate then start out as garbage, not zeros.

    On a GPU, NaN bytes up to 64 MB; a larger one comes from the driver, which zeroes it
    (and the judge's replay reuses blocks it poisoned: kgb.evaluate.replay.Replay.prepare_call). On the CPU, every block malloc returns from now on in this
    process is filled with one byte (glibc's M_PERTURB), the large ones too, which the
    system's fresh pages would otherwise leave zeros: a zeros_like that never wrote its
    outputs over 256 KB passed its check cases there (session 28)."""
    if device == "cuda":
        junk = torch.empty(64 * 1024 * 1024, dtype=torch.uint8, device=device)
        junk.fill_(0xFF)
        del junk
    else:
        _perturb_malloc()


M_PERTURB = -6  # glibc's mallopt parameter: malloc fills what it returns with the complement of this byte
PERTURB_BYTE = 0x5A  # 0xA5 bytes: -2.9e-16 as float32, nonzero in every dtype


@functools.cache
def _perturb_malloc() -> None:
    """Have this process's C library fill what it allocates, once; nothing where it is not glibc."""
    try:
        ctypes.CDLL(None).mallopt(M_PERTURB, PERTURB_BYTE)
    except (OSError, AttributeError):
        pass
