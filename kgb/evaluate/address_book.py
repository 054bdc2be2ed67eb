"""The address book of memory: provenance by address in Triton's CPU interpreter.

A rule on the values a kernel loads cannot tell a table the host arranged from the answer
(session 49's red team: three of the source's numbers per output value, or each value's 32
bits as 0.0 and 1.0: every load "explained"). What can is where the loaded bytes came from.
Every storage a call's kernels may reach is kept here with a copy of the bytes kgb knows it
holds (`expect`) and a flag on each byte the host wrote (`dirty`). Bytes are known where
the judge sent them (an input), a kernel stored them, or a PyTorch op the dispatch mode saw
wrote them (kgb.evaluate.op_watch): from known bytes, as a fresh allocation, or as a value
the source and the call fix (kgb.evaluate.source_numbers); and whatever the candidate's
import left in memory, made before any input existed. Memory changed any other way (numpy
through `.numpy()`, ctypes, plain Python on a buffer) no longer matches its copy, and memory
no op made (torch.frombuffer) was never known: a kernel that loads such bytes (followed by
kgb.evaluate.kernel_accesses), or an output made of them, is refused (`host_written`, in the
call's summary). A store's lanes, a load's lanes and an op's effect are followed exactly; an
op's sources count as the host's where any byte of them is. A table of pointers the host
built is taken where its entries only choose among tensors the call knows
(`Book.without_pointers`). What this leaves open (the host's decisions: scalar arguments, where
its ops write, which element they copy) is in docs/design/threat-model.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

_INVISIBLE = "written by numpy, ctypes or Python, not by a Triton kernel or a PyTorch op"
_NOT_A_START = "; its 8-byte values are not where a tensor the call knows starts"
_NO_ADDRESSES = np.zeros(0, dtype=np.uint64)


@dataclass(eq=False)
class Memory:
    """One storage as kgb knows it: its bytes (`expect`), and which of them the host wrote
    (`dirty`, a flag a byte; None while there are none)."""

    storage: Any  # torch.UntypedStorage, held so that its memory is not reused meanwhile
    start: int
    nbytes: int
    what: str
    expect: Any = None  # np.ndarray of uint8
    dirty: Any = None  # np.ndarray of bool, or None
    why: str = ""  # how the host wrote the first of its dirty bytes
    at_import: bool = False  # made while the candidate was imported, before any input existed
    _views: dict = field(default_factory=dict)  # item size -> (live, expect) as unsigned integers of it

    def live(self) -> Any:
        import ctypes

        if 1 not in self._views:
            self._views[1] = np.frombuffer((ctypes.c_uint8 * self.nbytes).from_address(self.start), dtype=np.uint8)
        return self._views[1]

    def items(self, size: int) -> tuple[Any, Any]:
        """Its memory and its copy as `size`-byte unsigned integers (its first whole ones)."""
        if size not in self._views:
            whole = self.nbytes // size * size
            self._views[size] = (self.live()[:whole].view(f"u{size}"), self.expect[:whole].view(f"u{size}"))
        return self._views[size]

    def moved(self) -> bool:
        """Its memory is no longer where it was (a storage resized in place)."""
        return self.storage.data_ptr() != self.start or self.storage.nbytes() != self.nbytes

    def mark(self, where: Any, host: bool, why: str = "") -> None:
        if host:
            if self.dirty is None:
                self.dirty = np.zeros(self.nbytes, dtype=bool)
            self.dirty[where] = True
            self.why = self.why or why
        elif self.dirty is not None:
            self.dirty[where] = False

    def written(self, host: bool, why: str = _INVISIBLE) -> None:
        """Take in what changed in its memory since kgb last knew it: written by the host
        (`host`, as `why` says), or by an op from known sources."""
        if _memcmp(self.start, self.expect.ctypes.data, self.nbytes) == 0:
            return
        live = self.live()
        changed = live != self.expect
        self.mark(changed, host, why)
        self.expect[changed] = live[changed]

    def has_dirty(self) -> bool:
        return self.dirty is not None and bool(self.dirty.any())

    def describe(self) -> str:
        return f"{self.what}, {self.why}" if self.why else self.what


_LIBC: list = []


def _memcmp(a: int, b: int, n: int) -> int:
    if not n:
        return 0
    if not _LIBC:
        import ctypes

        libc = ctypes.CDLL(None)
        libc.memcmp.restype = ctypes.c_int
        libc.memcmp.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
        _LIBC.append(libc)
    return _LIBC[0].memcmp(a, b, n)


def tensor_words(t: Any) -> str:
    """How a message names a tensor: `a (5, 37) float32 tensor`."""
    dims = tuple(t.shape)
    return f"a {dims if len(dims) != 1 else f'({dims[0]},)'} {str(t.dtype).removeprefix('torch.')} tensor"


class Book:
    """Every storage kgb knows in this process, by its StorageImpl, and the first thing the
    host wrote that a kernel loaded or a call returned."""

    def __init__(self) -> None:
        self.memory: dict[int, Memory] = {}
        self._index: tuple[Any, Any, list[Memory]] | None = None
        self.active = 0
        self.kernel = "?"
        self.found: str | None = None
        self.lanes_found = 0
        self.import_lanes: Any = None  # of the last load's active lanes, those in memory the import made
        self.importing = False  # while the candidate is imported: everything it does is the source's
        self.sent: Any = _NO_ADDRESSES  # where the tensors the judge sent start (a view's start is its own)
        self.entries: Any = _NO_ADDRESSES  # the host-built pointer-table lanes the call's kernels loaded

    def begin_call(self, tensors: list) -> None:
        """A judged call starts with these tensors the judge sent: a pointer table may
        point where any of them starts, and holds no entries yet."""
        self.sent = np.array(sorted({t.data_ptr() for t in tensors if t.device.type == "cpu"}), dtype=np.uint64)
        self.entries = _NO_ADDRESSES

    # -- storages

    def entry(self, storage: Any) -> Memory | None:
        memory = self.memory.get(storage._cdata)
        if memory is not None and memory.moved():
            self.forget(memory)
            return None
        return memory

    def register(self, storage: Any, what: str, host: bool, why: str = "") -> Memory | None:
        if storage.device.type != "cpu" or storage.nbytes() == 0:
            return None
        memory = Memory(storage, storage.data_ptr(), storage.nbytes(), what)
        memory.expect = memory.live().copy()
        if host:
            memory.dirty = np.ones(memory.nbytes, dtype=bool)
            memory.why = why
        old = self.memory.get(storage._cdata)
        if old is not None:
            self.forget(old)
        self.memory[storage._cdata] = memory
        self._index = None
        return memory

    def forget(self, memory: Memory) -> None:
        if self.memory.get(memory.storage._cdata) is memory:
            del self.memory[memory.storage._cdata]
            self._index = None

    def synced(self, storage: Any, what: str) -> Memory | None:
        """The storage's entry, with what the host wrote since taken in; one kgb never saw
        is memory the host made (torch.frombuffer, an array's memory): all of it the host's."""
        memory = self.entry(storage)
        if memory is None:
            return self.register(storage, what, host=True)
        memory.written(host=True)
        return memory

    def imported(self) -> None:
        """What the candidate's import left in memory is its source's: no input existed yet
        (a table computed there, with math or numpy, is a table like a literal one)."""
        for memory in list(self.memory.values()):
            if memory.moved():
                self.forget(memory)
                continue
            memory.expect[:] = memory.live()  # in place: its views (Memory.items) stay over it
            memory.dirty, memory.why, memory.at_import = None, "", True
            memory.what = f"{memory.what}, made at import"

    def prune(self) -> None:
        """Let go of storages no one else holds (a call's temporaries, its outputs once
        sent): a buffer kept between calls stays known."""
        import torch

        for memory in list(self.memory.values()):
            try:
                alone = torch._C._storage_Use_Count(memory.storage._cdata) <= 1
            except Exception:  # noqa: BLE001 - kept: a stale entry costs memory only
                alone = False
            if alone or memory.moved():
                self.forget(memory)

    # -- addresses

    def _sorted(self) -> tuple[Any, Any, list[Memory]]:
        if self._index is None:
            entries = sorted(self.memory.values(), key=lambda m: m.start)
            # two storages over the same memory (one made over another's): what is written
            # through one is the host's to the other
            for a, b in zip(entries, entries[1:], strict=False):
                if a.start + a.nbytes > b.start:
                    a.mark(slice(None), True)
                    b.mark(slice(None), True)
            starts = np.array([m.start for m in entries], dtype=np.uint64)
            ends = np.array([m.start + m.nbytes for m in entries], dtype=np.uint64)
            self._index = (starts, ends, entries)
        return self._index

    def lanes(self, ptrs: Any, mask: Any, itemsize: int) -> tuple[int, list[tuple[Memory | None, Any, Any]]]:
        """How many lanes are active, and their byte offsets grouped by the storage each
        lane's `itemsize` bytes lie in (None: in none kgb knows), with which of the active
        lanes each group holds."""
        addresses = np.asarray(ptrs, dtype=np.uint64).reshape(-1)
        if mask is not None:
            addresses = addresses[np.broadcast_to(np.asarray(mask, dtype=bool), np.shape(ptrs)).reshape(-1)]
        if addresses.size == 0:
            return 0, []
        starts, ends, entries = self._sorted()
        size = np.uint64(itemsize)
        first = int(np.searchsorted(starts, addresses.min(), side="right")) - 1
        if first >= 0 and addresses.max() + size <= ends[first]:  # all in one storage: the usual case
            return addresses.size, [(entries[first], (addresses - starts[first]).astype(np.int64), slice(None))]
        index = np.searchsorted(starts, addresses, side="right").astype(np.int64) - 1
        inside = index >= 0
        inside[inside] &= addresses[inside] + size <= ends[index[inside]]
        groups: list[tuple[Memory | None, Any, Any]] = [] if inside.all() else [(None, addresses[~inside], ~inside)]
        for i in np.unique(index[inside]):
            chosen = inside & (index == i)
            groups.append((entries[i], (addresses[chosen] - starts[i]).astype(np.int64), chosen))
        return addresses.size, groups

    def loading(self, ptrs: Any, mask: Any, itemsize: int) -> None:
        """A kernel is about to load these lanes: each must hold what kgb knows is there,
        and none of it the host's. Which of them lie in memory the import made is kept for
        the load's note (`import_lanes`)."""
        self.import_lanes = None
        if self.importing:
            return
        count, groups = self.lanes(ptrs, mask, itemsize)
        for memory, offsets, chosen in groups:
            if memory is None:
                self.host_loaded(offsets.size, "memory in no storage kgb knows")
                continue
            if memory.at_import:
                if self.import_lanes is None:
                    self.import_lanes = np.zeros(count, dtype=bool)
                self.import_lanes[chosen] = True
            if itemsize in (2, 4, 8) and not (offsets & (itemsize - 1)).any():  # aligned lanes: one compare each
                live, expect = memory.items(itemsize)
                index = offsets // itemsize
                host = live[index] != expect[index]
            else:
                where = offsets[:, None] + np.arange(itemsize, dtype=np.int64)
                host = (memory.live()[where] != memory.expect[where]).any(axis=1)
            if memory.dirty is not None:
                host |= memory.dirty[offsets[:, None] + np.arange(itemsize, dtype=np.int64)].any(axis=1)
            if host.any() and itemsize == 8:
                host = self.without_pointers(memory, offsets, host)
            if host.any():
                memory.written(host=True)
                self.host_loaded(int(host.sum()), memory.describe() + (_NOT_A_START if itemsize == 8 else ""))

    def without_pointers(self, memory: Memory, offsets: Any, host: Any) -> Any:
        """Of the 8-byte lanes `host` flags, those left once the pointers are taken out:
        lanes that do not hold where a tensor the call knows starts (a storage in the book, a
        tensor the judge sent). A table of pointers the wrapper built on the host
        (`torch.tensor([t.data_ptr() for t in parts])`) only chooses among tensors, while an
        offset past a start could carry any bytes. The
        choice itself carries a few bits an entry, so a call's kernels may load no more
        such entries than it knows tensors (then an entry costs the host an op, as the
        selections left open do: docs/design/threat-model.md)."""
        lanes = np.flatnonzero(host)
        where = offsets[lanes]
        values = memory.live()[where[:, None] + np.arange(8, dtype=np.int64)].view(np.uint64).reshape(-1)
        starts = np.union1d(self._sorted()[0], self.sent)
        chosen = np.isin(values, starts)
        if not chosen.any():
            return host
        self.entries = np.union1d(self.entries, np.uint64(memory.start) + where[chosen].astype(np.uint64))
        left = host.copy()
        left[lanes[chosen]] = False
        if self.entries.size > starts.size:
            self.host_loaded(int(chosen.sum()), f"a table of {self.entries.size} pointers the host built, more "
                             f"than the {starts.size} tensors the call knows: {memory.describe()}")
        return left

    def storing(self, ptrs: Any, mask: Any, itemsize: int) -> None:
        """A kernel stored these lanes: their bytes are known now."""
        if self.importing:
            return  # what the import leaves is taken in whole as it ends (imported)
        for memory, offsets, _ in self.lanes(ptrs, mask, itemsize)[1]:
            if memory is None:
                continue
            if itemsize in (2, 4, 8) and not (offsets & (itemsize - 1)).any():
                live, expect = memory.items(itemsize)
                index = offsets // itemsize
                expect[index] = live[index]
                if memory.dirty is not None:
                    memory.mark((offsets[:, None] + np.arange(itemsize, dtype=np.int64)).reshape(-1), False)
            else:
                where = (offsets[:, None] + np.arange(itemsize, dtype=np.int64)).reshape(-1)
                memory.expect[where] = memory.live()[where]
                memory.mark(where, False)

    def host_loaded(self, lanes: int, what: str) -> None:
        self.lanes_found += lanes
        if self.found is None:
            self.found = f"kernel {self.kernel} loaded memory the host wrote ({what})"

    def returned(self, name: str, t: Any) -> None:
        """An output (or an input the call may write) must hold no byte the host wrote."""
        storage = t.untyped_storage()
        if storage.device.type != "cpu" or storage.nbytes() == 0 or self.found is not None:
            return
        memory = self.entry(storage)
        if memory is None:  # not copied to be judged: it may be a GiB of pages never touched
            self.found = f"{name} ({tensor_words(t)}) lies in memory that no PyTorch op made"
            return
        memory.written(host=True)
        if memory.has_dirty():
            self.found = f"{name} ({tensor_words(t)}) holds bytes the host wrote ({memory.describe()})"


book = Book()


def host_written() -> str | None:
    """What the host wrote that a kernel loaded or a call returned, since the last ask."""
    found, count = book.found, book.lanes_found
    book.found, book.lanes_found = None, 0
    if found and count:
        found += f" ({count} lane(s) of loads)"
    return found
