"""Tensors by their storages, as plain data: which storages both sides know under an id
(`Storages`, numbered as a message numbers them), a tensor's place in its storage (dtype,
size, strides, offset, conj/neg bits) and the plain `torch.Tensor` rebuilt from it, and a
storage's raw bytes, copied between host and device a chunk at a time. The messages between
the judge and a candidate process (kgb.evaluate.codec) and a recorded call
(kgb.evaluate.recording) are made of these.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import torch

from kgb.evaluate.memory_file import WireError

MEMORY_FORMATS = {
    str(f).removeprefix("torch."): f
    for f in (torch.contiguous_format, torch.channels_last, torch.channels_last_3d, torch.preserve_format)
}


@dataclass
class Storages:
    """What both sides know of the inputs the judge sent: their storages under an id, and
    the tensor objects themselves in the order sent (an op that returns its input
    object, as `contiguous` does, is judged on that identity)."""

    by_id: dict[int, torch.UntypedStorage] = field(default_factory=dict)
    tensors: list[torch.Tensor] = field(default_factory=list)

    def tensor_index(self, t: torch.Tensor) -> int | None:
        for i, known in enumerate(self.tensors):
            if known is t:
                return i
        return None

    def id_of(self, storage: torch.UntypedStorage) -> int | None:
        for sid, known in self.by_id.items():
            if known._cdata == storage._cdata:
                return sid
        return None


def storages_in(value: Any) -> Storages:
    """The storages and tensors that `codec.encode` would send of `value` by value, numbered
    as it numbers them, without copying a byte: a candidate process that draws its inputs
    itself (kgb.evaluate.draws.redraw) and the judge that drew the same know them alike."""
    found = Storages()
    ids: dict[int, int] = {}

    def walk(v: Any) -> None:
        if isinstance(v, torch.Tensor):
            storage = v.untyped_storage()
            if storage._cdata not in ids:
                ids[storage._cdata] = len(found.by_id)
                found.by_id[ids[storage._cdata]] = storage
            found.tensors.append(v)
        elif isinstance(v, list | tuple):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)

    walk(value)
    return found


def storage_bytes(storage: torch.UntypedStorage) -> torch.Tensor:
    """A storage's bytes as a flat uint8 tensor over it, where it lives (no copy)."""
    return torch.empty(0, dtype=torch.uint8, device=storage.device).set_(storage)


# Copies between host and GPU go this many bytes at a time, each in its own `copying()`:
# pageable copies run at a few GB/s on a loaded host, so a chunk is some 10-30 ms
COPY_CHUNK = 64 << 20


def host_bytes(storage: torch.UntypedStorage,
               copying: Callable[[], AbstractContextManager] = nullcontext) -> torch.Tensor:
    flat = storage_bytes(storage)
    if flat.device.type == "cpu":
        return flat
    return copied(flat, torch.empty(flat.numel(), dtype=torch.uint8), copying)


def on_device(buf: torch.Tensor, device: str,
              copying: Callable[[], AbstractContextManager] = nullcontext) -> torch.Tensor:
    if device == "cpu":
        return buf
    return copied(buf, torch.empty(buf.numel(), dtype=torch.uint8, device=device), copying)


def copied(source: torch.Tensor, dest: torch.Tensor, copying: Callable[[], AbstractContextManager]) -> torch.Tensor:
    """`dest` with `source`'s bytes, copied COPY_CHUNK at a time, each chunk inside `copying()`."""
    for start in range(0, source.numel(), COPY_CHUNK):
        with copying():
            dest[start:start + COPY_CHUNK].copy_(source[start:start + COPY_CHUNK])
    return dest


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def named_dtype(name: str) -> torch.dtype:
    found = getattr(torch, str(name), None)
    if not isinstance(found, torch.dtype):
        raise WireError(f"unknown dtype {name!r}")
    return found


def layout(t: torch.Tensor) -> dict:
    """A tensor's place in its storage, as plain data (what `tensor` rebuilds it from)."""
    return {"dtype": dtype_name(t.dtype), "size": list(t.shape), "stride": list(t.stride()),
            "offset": t.storage_offset(), "conj": t.is_conj(), "neg": t.is_neg()}


def tensor(storage: torch.UntypedStorage, v: dict) -> torch.Tensor:
    dtype = named_dtype(v["dtype"])
    size, stride, offset = [int(n) for n in v["size"]], [int(n) for n in v["stride"]], int(v["offset"])
    if len(size) != len(stride) or min(size, default=0) < 0 or offset < 0:
        raise WireError("malformed tensor geometry")
    t = torch.empty(0, dtype=dtype, device=storage.device)
    try:
        t.set_(storage, offset, size, stride)  # bounds-checked against the storage
    except RuntimeError as exc:
        raise WireError(f"tensor does not fit its storage: {exc}") from exc
    torch._C._set_conj(t, bool(v["conj"]))
    torch._C._set_neg(t, bool(v["neg"]))
    return t


def overwrite(storage: torch.UntypedStorage, data: torch.Tensor) -> None:
    """Copy the bytes the peer sent into a storage this side owns (same size)."""
    if data.numel() != storage.nbytes():
        raise WireError("a known storage changed its size")
    storage_bytes(storage).copy_(data)
