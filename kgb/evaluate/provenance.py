"""Where an output's values came from, in Triton's CPU interpreter.

A candidate that launches a decoy kernel and computes the answer some other way (another
thread or process, numpy, a BLAS through ctypes, plain Python) leaves outputs whose
values no Triton kernel ever stored. In the interpreter every store passes through
Python, so the candidate process records the values each call's kernels stored; the
judge then requires every finite output value to be one of those (cast to the output's
dtype, as a wrapper's `.to()` would), one of the inputs' values (outputs that move or
keep input values), a scalar argument, 0 or 1 (fills).

Outputs alone are not enough: a candidate can compute the answer on the host and have a
kernel copy it into the output (or store twice what it loads, from a host buffer holding
half the answer), and then every output value was "stored by a kernel". So the loads are
recorded too, and every finite value a kernel loads must be explained the same way: by an
input (or its cast, or its raw bits read through another dtype), a scalar argument, 0 or
1, or a value some kernel of the call stored (an intermediate buffer). The judge's side of
the check is kgb.evaluate.provenance_audit.

Values alone cannot tell a host buffer that spells the answer in explained values (each
value's bits as 0.0 and 1.0) from an input, so memory is followed too, by address
(kgb.evaluate.address_book): every byte a kernel loads, and every byte of an output, must be
one the judge sent, a kernel stored, or a PyTorch op wrote from such bytes or from what the
source and the call fix; what numpy, ctypes or Python wrote into memory is the host's, and
refused. What it found travels in the call's summary (HOST_WRITTEN).

On a GPU stores cannot be watched this way; docs/design/threat-model.md says what stands
in for it there.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch

from kgb.evaluate.address_book import book, host_written

MAX_VALUES = 4_000_000  # more stored (or loaded) than this and they are not checked (cases on the CPU are small)


@dataclass
class Recording:
    """What one call's interpreted kernels stored and loaded, in order: chunks of (sequence
    number, Triton dtype name, logical values, raw bits), until there were more than
    MAX_VALUES of a kind (then None: not kept, for memory; a tiled kernel loads each input
    many times)."""

    stored: list | None = field(default_factory=list)
    loaded: list | None = field(default_factory=list)
    counts: dict = field(default_factory=lambda: {"stored": 0, "loaded": 0})
    seq: int = 0


_recording: list[Recording] = []
_PATCHED: set[str] = set()  # the interpreter's patches made in this process
HOST_WRITTEN = "host written"  # a summary's key: what the host wrote that a kernel loaded or a call returned


def _note(handle: Any, mask: Any, kind: str = "stored") -> None:
    """Note a stored (or loaded) handle's values, and its raw bits (a kernel may store a
    float's bits through an integer view, as a sign-flipping neg does). Only the lanes of
    `mask`: a masked load's other lanes hold its `other=` fill, not memory."""
    if not _recording or getattr(_recording[-1], kind) is None:
        return
    import numpy as np

    recording = _recording[-1]
    keep = (lambda a: a[np.asarray(mask, dtype=bool)]) if mask is not None else (lambda a: a)
    raw = keep(np.asarray(handle.data)).copy()
    if kind == "loaded":
        raw = _without_addresses(_outside_import(raw))
    recording.counts[kind] += raw.size
    if recording.counts[kind] > MAX_VALUES:
        setattr(recording, kind, None)
        return
    recording.seq += 1
    logical = keep(_as_logical(handle)).copy() if kind == "stored" else None
    getattr(recording, kind).append((recording.seq, getattr(handle.dtype, "scalar", handle.dtype).name, logical, raw))


def _outside_import(raw: Any) -> Any:
    """A load's values but those read from memory the candidate's import made (a table it
    computed there, with math or numpy): provenance by address vouches for those bytes, and
    no input existed when they were written. (The load's lanes, as the interpreter's load
    just before this note found them: address_book.Book.loading.)"""
    lanes = book.import_lanes
    if lanes is None or lanes.size != raw.size:
        return raw
    return raw.reshape(-1)[~lanes]


def _without_addresses(raw: Any) -> Any:
    """A loaded 8-byte integer that points into a storage the kernel may reach is an
    address (a table of pointers, as batched kernels use), not data: left out. (Its offset
    inside a large buffer could carry a few bytes a kernel decodes: in a table the host
    built, kgb.evaluate.address_book takes no entry but where a tensor starts.)"""
    import numpy as np

    from kgb.evaluate import bounds

    if raw.dtype.itemsize != 8 or raw.dtype.kind not in "iu":
        return raw
    inside = bounds.inside_launch(raw.reshape(-1).view(np.uint64), 1)
    return raw if inside is None else raw.reshape(-1)[~inside]


def patch_interpreter_stores() -> None:
    """Note every value an interpreted kernel stores (plain, masked, descriptor, atomic) or
    loads (plain, masked, atomic and descriptor loads: in the interpreter these all go
    through create_masked_load; and what atomics return, the memory before them)."""
    from triton.runtime import interpreter as itp

    builder = itp.InterpreterBuilder
    # Once a process (the engine prepares the interpreter, and its forked candidate process
    # again): a flag on the method would be hidden by kgb.evaluate.bounds' wrapper over it,
    # and every load noted twice.
    if "stores" in _PATCHED or getattr(builder.create_masked_store, "_kgb_noted", False):
        return
    _PATCHED.add("stores")
    masked_store, masked_load = builder.create_masked_store, builder.create_masked_load

    def create_masked_store(self, ptrs, value, mask, *rest, **kwargs):  # the rest differs between Triton versions
        _note(value, mask.data)
        return masked_store(self, ptrs, value, mask, *rest, **kwargs)

    def create_masked_load(self, ptrs, mask, *rest, **kwargs):
        loaded = masked_load(self, ptrs, mask, *rest, **kwargs)
        _note(loaded, mask.data, "loaded")
        return loaded

    create_masked_store._kgb_noted = True  # type: ignore[attr-defined]
    builder.create_masked_store, builder.create_masked_load = create_masked_store, create_masked_load

    # Atomics store what they compute from memory: note the memory after the operation (and
    # before it, as loaded: not what they return, which for lanes that share an address holds
    # sums no store made).
    for name in ("create_atomic_rmw", "create_atomic_cas", "create_atomic_store"):
        original = getattr(builder, name, None)
        if original is None:
            continue

        def atomic(self, *args, _original=original, _name=name, **kwargs):
            ptr = next(a for a in args if hasattr(a, "data") and hasattr(a, "get_element_ty"))
            if _name != "create_atomic_store":  # it reads memory (and returns what it read)
                _note(_memory(itp, ptr), _atomic_mask(_name, args), "loaded")
            result = _original(self, *args, **kwargs)
            _note(_memory(itp, ptr), None)
            return result

        setattr(builder, name, atomic)
    descriptor_store = getattr(builder, "create_descriptor_store", None)
    if descriptor_store is not None:

        def create_descriptor_store(self, desc, value, *rest, **kwargs):
            _note(value, None)
            return descriptor_store(self, desc, value, *rest, **kwargs)

        builder.create_descriptor_store = create_descriptor_store


def _as_logical(handle: Any) -> Any:
    """The interpreter keeps bfloat16 as raw uint16: widen those to float32 values."""
    import numpy as np
    import triton.language as tl

    data = np.asarray(handle.data)
    if getattr(handle.dtype, "scalar", handle.dtype) == tl.bfloat16 and data.dtype == np.uint16:
        return (data.astype(np.uint32) << 16).view(np.float32)
    return data


def _memory(itp: Any, ptr: Any) -> Any:
    """What the pointers of an atomic point at now."""
    import numpy as np

    dtype = itp._get_np_dtype(ptr.get_element_ty())
    mask = np.ones_like(ptr.data, dtype=bool)
    return itp.TensorHandle(itp._interpreter.load(ptr.data, mask, np.zeros_like(ptr.data, dtype=dtype), dtype),
                            ptr.get_element_ty())


def _atomic_mask(name: str, args: tuple) -> Any:
    """create_atomic_rmw(op, pointer, value, mask, ...): the lanes its mask turns off read
    no memory; a cas has no mask."""
    return args[3].data if name == "create_atomic_rmw" else None


@contextmanager
def stored_values() -> Iterator[Recording]:
    """Collect what interpreted kernels store and load inside the block."""
    _recording.append(Recording())
    try:
        yield _recording[-1]
    finally:
        _recording.pop()


def summarise(recording: Recording) -> dict[str, Any] | None:
    """The distinct stored values ("float": float64, "int": int64) and raw bit patterns
    ("bits<item size>": int64), and the distinct loaded bit patterns per dtype ("loaded <torch
    dtype>": int64), each with the sequence number of its first store or load ("<key> seq"):
    a value that was loaded before any kernel stored it came from elsewhere (a copy kernel
    stores what it loads). None when too many stored values to check; no "loaded" keys when
    too many loaded ones.

    Loaded values that kernels stored in an earlier call of this process are left out (a
    buffer kept between calls: a memo, a table a kernel built on the first call); this
    call's stores are then remembered for the next ones.

    With HOST_WRITTEN, the first thing the host wrote that a kernel loaded or the call
    returned (provenance by address, kgb.evaluate.address_book), as text: then the summary
    is that key alone where there were too many stored values to check."""
    found = host_written()
    flagged = {HOST_WRITTEN: found[:2000]} if found else {}  # plain text: the reply's header, not its buffers
    if recording.stored is None:
        return flagged or None
    stored = _summarise_stored(recording.stored)
    summary = stored | _summarise_loaded(recording.loaded or [])
    _remember(stored)
    return summary | flagged


def _summarise_stored(chunks: list) -> dict[str, torch.Tensor]:
    import numpy as np

    floats, ints, bits = [], [], {1: [], 2: [], 4: [], 8: []}
    for seq, _, logical, raw in chunks:
        if logical.dtype.kind in "fc":
            floats.append((seq, logical.astype(np.float64).ravel()))
        else:
            ints.append((seq, logical.astype(np.int64).ravel()))
        if raw.dtype.itemsize in bits and raw.dtype.kind != "c":
            bits[raw.dtype.itemsize].append((seq, _bits(raw)))
    out = _first_seen("float", floats, np.float64) | _first_seen("int", ints, np.int64)
    for size, parts in bits.items():
        out |= _first_seen(f"bits{size}", parts, np.int64)
    return out


def _summarise_loaded(chunks: list) -> dict[str, torch.Tensor]:
    """Raw bits rather than values: the judge reads them back as the dtype the kernel
    loaded (bfloat16 and float8 are raw integers here), which the key names."""
    import numpy as np

    by_dtype: dict[tuple[str, int], list] = {}
    for seq, name, _, raw in chunks:
        dtype = _TORCH_DTYPES.get(name) or f"uint{8 * raw.dtype.itemsize}"  # a float8 torch lacks: checked as bits
        by_dtype.setdefault((f"loaded {dtype}", raw.dtype.itemsize), []).append((seq, _bits(raw)))
    out: dict[str, torch.Tensor] = {}
    for (key, size), parts in by_dtype.items():
        first = _first_seen(key, parts, np.int64)
        new = ~torch.isin(first[key], _earlier.get(size, _NONE))
        out |= {k: v[new] for k, v in first.items()}
    return out


# Raw bits (int64) per item size that kernels stored in the earlier recorded calls of this
# process, whose loads were checked: no more than MAX_VALUES (past that, no more are added).
_earlier: dict[int, torch.Tensor] = {}
_NONE = torch.zeros(0, dtype=torch.int64)


def _remember(stored: dict[str, torch.Tensor]) -> None:
    for size in (1, 2, 4, 8):
        both = torch.unique(torch.cat([_earlier.get(size, _NONE), stored[f"bits{size}"]]))
        others = sum(t.numel() for k, t in _earlier.items() if k != size)
        if others + both.numel() <= MAX_VALUES:
            _earlier[size] = both


def _first_seen(key: str, parts: list, dtype: Any) -> dict[str, torch.Tensor]:
    """The distinct values of (sequence number, values) parts in order (`key`), and the
    number of the part each was first in ("<key> seq")."""
    import numpy as np

    values = np.concatenate([v for _, v in parts]) if parts else np.zeros(0, dtype)
    seqs = np.repeat(np.array([s for s, _ in parts], dtype=np.int64), [v.size for _, v in parts])
    unique, first = np.unique(values, return_index=True)  # the index of each one's first occurrence
    return {key: torch.from_numpy(unique), f"{key} seq": torch.from_numpy(seqs[first])}


def _bits(raw: Any) -> Any:
    import numpy as np

    size = raw.dtype.itemsize
    return raw.reshape(-1).view(f"u{size}").astype(np.int64)


# Triton's dtype names, as torch spells them
_TORCH_DTYPES = {"fp64": "float64", "fp32": "float32", "fp16": "float16", "bf16": "bfloat16",
                 "fp8e4nv": "float8_e4m3fn", "fp8e5": "float8_e5m2", "int1": "bool",
                 **{f"{s}int{n}": f"{s}int{n}" for s in ("", "u") for n in (8, 16, 32, 64)}}
