"""Values on the wire between the judge and the candidate process.

The judge never unpickles anything the candidate sends: a pickle runs code. Values travel
as a JSON tree plus raw storage bytes, and are rebuilt from plain data only: tensors as
plain `torch.Tensor`s (a subclass cannot cross), with their exact layout (strides, offset,
overlap, conj/neg bits) and their storage identity, so a returned view of an input is
rebuilt as a view of the judge's own copy of that input. Those parts of a tensor are
kgb.evaluate.tensor_storage's; a message carries them as a JSON header and buffers, through
the socket or a memory file (kgb.evaluate.memory_file).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

import torch

from kgb.evaluate import tensor_storage
from kgb.evaluate.memory_file import (
    MEMORY_FILE_MIN_BYTES,
    Accepted,
    MemoryFile,
    Outbox,
    SealedOutbox,
    WireError,
    pass_descriptor,
    received_buffers,
)
from kgb.evaluate.tensor_storage import Storages

MAX_HEADER_BYTES = 64 * 1024 * 1024


@dataclass
class Outgoing:
    """A message ready to write: its header, its buffers already copied to the host (the
    GPU's part of sending), and what it sends by value."""

    header: dict
    buffers: list[torch.Tensor]
    sent: Storages
    memory_file: int | None = None  # the descriptor of the memory file the buffers are in, if they travel in one


def send(conn: Connection, kind: str, value: Any = None, known: Storages | None = None,
         refresh_known: bool = False, unchanged: frozenset[int] = frozenset(),
         outbox: SealedOutbox | None = None, **fields: Any) -> Storages:
    """Send one message (`encode`, then `write`); returns what it sent by value. With an
    `outbox`, its buffers may go in a memory file sealed against writes (a candidate
    process's reply)."""
    out = encode(kind, value, known, refresh_known, unchanged, memory_file=outbox is not None, outbox=outbox,
                 **fields)
    write(conn, out)
    return out.sent


def encode(kind: str, value: Any = None, known: Storages | None = None,
           refresh_known: bool = False, unchanged: frozenset[int] = frozenset(),
           copying: Callable[[], AbstractContextManager] = nullcontext, memory_file: bool = False,
           outbox: Outbox | SealedOutbox | None = None, **fields: Any) -> Outgoing:
    """One message: `kind`, extra JSON `fields`, and `value` with its tensors.

    Tensors whose storage is in `known` are sent by reference; with `refresh_known` the
    current bytes of every known storage go along (the candidate may have written them),
    except those the caller knows to be `unchanged`. Bytes on a GPU are copied to the host
    tensor_storage.COPY_CHUNK at a time, each chunk inside `copying()` (as in `receive`). With
    `memory_file`, buffers of MEMORY_FILE_MIN_BYTES or more in all are copied into a memory
    file that `write` passes with the message (for a receiver that accepts one): the
    `outbox`'s, where one is given, else a new one; a `SealedOutbox`'s is sealed against
    writes once they are in (for the judge, which takes no other), or where the kernel would
    not seal it the buffers go through the socket.
    `sent` is what goes by value (storages by position, tensor objects in order): the
    receiver that adopts them knows them the same way.
    """
    known = known if known is not None else Storages()
    pending: list[torch.UntypedStorage] = []  # whose bytes go, in the order of the buffers
    table: list[dict] = []
    sent = Storages()
    local: dict[int, int] = {}  # storage _cdata -> index in table

    def storage_ref(storage: torch.UntypedStorage, device: str) -> dict:
        sid = known.id_of(storage)
        if sid is not None:
            return {"known": sid}
        key = storage._cdata
        if key not in local:
            local[key] = len(table)
            table.append({"nbytes": storage.nbytes(), "device": device, "buffer": len(pending)})
            pending.append(storage)
            sent.by_id[len(sent.by_id)] = storage
        return {"new": local[key]}

    def enc(v: Any) -> Any:
        if v is None or isinstance(v, bool | int | str):
            return v
        if isinstance(v, float):
            return v if math.isfinite(v) else {"t": "float", "v": repr(v)}
        if isinstance(v, complex):
            return {"t": "complex", "re": enc(v.real), "im": enc(v.imag)}
        if isinstance(v, torch.Tensor):
            same = known.tensor_index(v)
            if same is not None:
                return {"t": "input", "i": same}
            if type(v) is not torch.Tensor:
                raise WireError(f"a tensor subclass ({type(v).__name__}) cannot be passed")
            if v.layout != torch.strided:
                raise WireError(f"only strided tensors can be passed, not {v.layout}")
            return {"t": "tensor", "storage": storage_ref(v.untyped_storage(), v.device.type),
                    **tensor_storage.layout(v)} | _sent_tensor(v)
        if isinstance(v, torch.dtype):
            return {"t": "dtype", "v": tensor_storage.dtype_name(v)}
        if isinstance(v, torch.device):
            return {"t": "device", "v": str(v)}
        if isinstance(v, torch.memory_format):
            return {"t": "memory_format", "v": str(v).removeprefix("torch.")}
        if isinstance(v, torch.layout):
            return {"t": "layout", "v": str(v).removeprefix("torch.")}
        if isinstance(v, list | tuple):  # torch.Size is a tuple
            return {"t": "list" if isinstance(v, list) else "tuple", "v": [enc(x) for x in v]}
        if isinstance(v, dict) and all(isinstance(k, str) for k in v):
            return {"t": "dict", "v": [[k, enc(x)] for k, x in v.items()]}
        raise WireError(f"a value of type {type(v).__name__} cannot be passed")

    def _sent_tensor(v: torch.Tensor) -> dict:
        sent.tensors.append(v)
        return {}

    header = {"kind": kind, "value": enc(value), "storages": table, **fields}
    if refresh_known:
        header["known"] = []
        for sid, storage in known.by_id.items():
            if sid in unchanged:
                continue
            header["known"].append({"id": sid, "nbytes": storage.nbytes(), "buffer": len(pending)})
            pending.append(storage)
    header["buffers"] = sizes = [storage.nbytes() for storage in pending]
    total = sum(sizes)
    sealed = isinstance(outbox, SealedOutbox)
    made, kept = (None, False)
    if memory_file and total >= MEMORY_FILE_MIN_BYTES:
        if sealed:
            made = outbox.file_for(total)
        else:
            made, kept = outbox.file_for(total) if outbox is not None else (MemoryFile.made(total), False)

    def through_the_socket() -> Outgoing:
        return Outgoing(header, [tensor_storage.host_bytes(storage, copying) for storage in pending], sent)

    if made is None:
        return through_the_socket()
    buffers = made.buffers(sizes)
    try:
        for storage, buffer in zip(pending, buffers, strict=True):
            flat = tensor_storage.storage_bytes(storage)
            tensor_storage.copied(flat, buffer, copying if flat.device.type != "cpu" else nullcontext)
        if sealed:
            del buffers, buffer  # the mapping goes only with the last view of it
            if not made.seal_writes():
                made.close()
                return through_the_socket()
            buffers = []
        fd = os.dup(made.fd) if kept else made.fd  # `write` closes what it is given
    except BaseException:
        if not kept:
            made.close()
        raise
    header["memory_file"] = True
    return Outgoing(header, buffers, sent, fd)




def write(conn: Connection, out: Outgoing) -> None:
    """Host work only: the header, then the buffers, or the memory file that holds them."""
    conn.send_bytes(json.dumps(out.header).encode())
    if out.memory_file is not None:
        fd, out.memory_file = out.memory_file, None
        try:
            pass_descriptor(conn, fd)
        finally:
            os.close(fd)  # the sender's buffers keep its mapping until they go
        return
    for b in out.buffers:
        _write_all(conn.fileno(), memoryview(b.numpy()))


# The buffers follow the header raw, not framed as messages: the header announces their sizes,
# and multiprocessing's framed receive reads a large message through chunks of fresh bytes
# objects and a BytesIO, copying it twice (0.27 GB/s for 256 MB there and back, against
# the single copy into the destination here; benchmarks/wire.py).
def _write_all(fd: int, data: memoryview) -> None:
    view = data.cast("B")
    while view.nbytes:
        view = view[os.write(fd, view):]


def _read_buffer(conn: Connection, n: int) -> torch.Tensor:
    buf = torch.empty(n, dtype=torch.uint8)
    _read_into(conn.fileno(), buf)
    return buf


def _read_into(fd: int, buf: torch.Tensor) -> None:
    view = memoryview(buf.numpy()).cast("B")
    while view.nbytes:
        got = os.readv(fd, [view])
        if got == 0:
            raise EOFError("the peer closed the connection mid-message")
        view = view[got:]


class Oversized(WireError):
    """A message whose buffers announce more than its receiver lets it hold: refused on its
    header, before a byte of them is allocated or read."""

    def __init__(self, announced: int, limit: int):
        super().__init__(f"a message announced {announced:,} bytes of buffers, more than the {limit:,} it may hold")
        self.announced, self.limit = announced, limit


@dataclass
class Message:
    kind: str
    value: Any
    fields: dict[str, Any]
    known_bytes: dict[int, torch.Tensor]  # fresh bytes of known storages, where sent


def receive(conn: Connection, device: str, known: Storages | None = None, adopt: bool = False,
            reading: Callable[[], AbstractContextManager] = nullcontext,
            before_device: Callable[[str], None] = lambda kind: None,
            copying: Callable[[], AbstractContextManager] = nullcontext,
            memory_files: Accepted = Accepted.NONE, max_bytes: int | None = None,
            held: list[torch.Tensor] | None = None) -> Message:
    """Receive one message; tensors are rebuilt on `device`, those sent from host memory on the host.

    With `adopt`, new storages join `known` (the candidate side learns the judge's inputs).
    Inside `reading()` the buffers are read (host work), `before_device(kind)` is called,
    and they are copied to the device tensor_storage.COPY_CHUNK bytes at a time, each chunk inside
    `copying()`: the judge keeps its transfers out of its work sections and its copies in
    short ones, which a timing turn waits for one chunk at most (kgb.evaluate.timing_lock).
    `memory_files`: which memory files (`encode`) the buffers may come in: the candidate
    process takes its judge's, the judge only one sealed against writes, so that it never
    maps memory its candidate could still change.
    `max_bytes`: the most its buffers may announce, checked before any is allocated (a peer
    that announced terabytes had its receiver fill memory until the OOM killer took it):
    `Oversized` past it.
    `held`: where given, the host buffers the message was read into are added to it, for the
    caller to let go of when it is off its way, not as this returns.
    """
    known = known if known is not None else Storages()
    raw = conn.recv_bytes(MAX_HEADER_BYTES)
    try:
        header = json.loads(raw)
        sizes = [int(n) for n in header.pop("buffers")]
    except (ValueError, KeyError, TypeError) as exc:
        raise WireError(f"unreadable message header: {exc}") from exc
    if any(n < 0 for n in sizes):
        raise WireError("negative buffer size")
    if max_bytes is not None and sum(sizes) > max_bytes:
        raise Oversized(sum(sizes), max_bytes)
    in_file = bool(header.pop("memory_file", False))
    if in_file and memory_files is Accepted.NONE:
        raise WireError("a memory file where none is accepted")
    with reading():
        buffers = received_buffers(conn, sizes, memory_files) if in_file else [_read_buffer(conn, n) for n in sizes]
        before_device(str(header.get("kind")))
        msg = decode(header, buffers, device, known, adopt, copying)
    if held is not None:
        held.extend(buffers)
    return msg


def decode(header: dict, buffers: list[torch.Tensor], device: str, known: Storages | None = None,
           adopt: bool = False, copying: Callable[[], AbstractContextManager] = nullcontext) -> Message:
    """A message from its header (less its buffer sizes) and its buffers, read to the host;
    tensors are rebuilt on `device` as in `receive`."""
    known = known if known is not None else Storages()
    fresh: list[torch.UntypedStorage] = []
    for entry in header.get("storages", []):
        buf = buffers[int(entry["buffer"])]
        if buf.numel() != int(entry["nbytes"]):
            raise WireError("storage size does not match its buffer")
        # host memory stays host memory (vLLM's swap_blocks takes its block mapping there)
        where = "cpu" if entry.get("device") == "cpu" else device
        fresh.append(tensor_storage.on_device(buf, where, copying).untyped_storage())
    if adopt:
        known.by_id.update(enumerate(fresh))
    known_bytes = {}
    for k in header.get("known", []):
        sid, buf = int(k["id"]), buffers[int(k["buffer"])]
        # on the device of the storage they are for, so that `tensor_storage.overwrite` copies there
        target = known.by_id.get(sid)
        known_bytes[sid] = tensor_storage.on_device(buf, target.device.type, copying) if target is not None else buf

    def storage_of(ref: dict) -> torch.UntypedStorage:
        if "known" in ref:
            sid = int(ref["known"])
            if sid not in known.by_id:
                raise WireError(f"unknown storage id {sid}")
            return known.by_id[sid]
        index = int(ref["new"])
        if not 0 <= index < len(fresh):
            raise WireError(f"storage index {index} out of range")
        return fresh[index]

    def dec(v: Any) -> Any:
        if v is None or isinstance(v, bool | int | float | str):
            return v
        if not isinstance(v, dict) or "t" not in v:
            raise WireError("malformed value")
        t = v["t"]
        if t == "float":
            return float(v["v"])
        if t == "complex":
            return complex(dec(v["re"]), dec(v["im"]))
        if t == "tensor":
            rebuilt = tensor_storage.tensor(storage_of(v["storage"]), v)
            if adopt:
                known.tensors.append(rebuilt)
            return rebuilt
        if t == "input":
            index = int(v["i"])
            if not 0 <= index < len(known.tensors):
                raise WireError(f"input tensor index {index} out of range")
            return known.tensors[index]
        if t == "dtype":
            return tensor_storage.named_dtype(v["v"])
        if t == "device":
            return torch.device(str(v["v"]))
        if t == "memory_format":
            if v["v"] not in tensor_storage.MEMORY_FORMATS:
                raise WireError(f"unknown memory format {v['v']!r}")
            return tensor_storage.MEMORY_FORMATS[v["v"]]
        if t == "layout":
            if v["v"] != "strided":
                raise WireError(f"unsupported layout {v['v']!r}")
            return torch.strided
        if t in ("list", "tuple"):
            items = [dec(x) for x in v["v"]]
            return items if t == "list" else tuple(items)
        if t == "dict":
            return {str(k): dec(x) for k, x in v["v"]}
        raise WireError(f"unknown value tag {t!r}")

    fields = {k: x for k, x in header.items() if k not in ("kind", "value", "storages", "known")}
    return Message(str(header["kind"]), dec(header["value"]), fields, known_bytes)
