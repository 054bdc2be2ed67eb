"""The host's PyTorch ops, followed into the book of memory (kgb.evaluate.address_book).

While a call (or the candidate's import) is watched, a dispatch mode runs each ATen op and
takes in what it wrote: bytes from sources the host wrote, or from a value the source and the
call do not fix (kgb.evaluate.source_numbers), are the host's; others are known. A tensor
built from Python values (torch.tensor, torch.from_numpy) is judged where it is made.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kgb.evaluate.address_book import Book, Memory, book, tensor_words
from kgb.evaluate.correctness import tensors_in
from kgb.evaluate.source_numbers import SourceNumbers

_FROM_HOST = "written by {op} from values the host computed"
numbers = SourceNumbers()  # the candidate's numbers, and the watched call's scalar arguments


def set_source(source: str) -> None:
    """The candidate's numbers, for the tables and fills its wrapper may make of them."""
    numbers.take_source(source)


# Ops that make a tensor over memory PyTorch did not fill (torch.tensor's values, a numpy
# array's memory): its values are judged where it is made.
_LIFTS = frozenset({"aten::lift_fresh", "aten::lift_fresh_copy"})
_effects_of: dict[Any, tuple[tuple[int, ...], tuple[str, ...], bool]] = {}


def _effects(func: Any) -> tuple[tuple[int, ...], tuple[str, ...], bool]:
    """(the positions of the arguments an op writes, the names of its Scalar value
    arguments, whether it returns a fresh tensor), from its schema."""
    if func not in _effects_of:
        schema = func._schema
        written = tuple(i for i, a in enumerate(schema.arguments) if a.alias_info is not None and a.alias_info.is_write)
        values = tuple(a.name for a in schema.arguments
                       if a.name in ("value", "fill_value", "s") and "Scalar" in str(a.type))
        fresh = any(r.alias_info is None and "Tensor" in str(r.type) for r in schema.returns)
        _effects_of[func] = (written, values, fresh)
    return _effects_of[func]


def _op_name(func: Any) -> str:
    return func._schema.name + (f".{func._overloadname}" if func._overloadname != "default" else "")


def _watched_op(func: Any, args: tuple, kwargs: dict) -> Any:
    """Run one ATen op, taking in what it wrote: bytes from sources the host wrote (or from
    a value the source and the call do not fix) are the host's, others known."""
    name = func._schema.name
    if name in _LIFTS:
        for t in tensors_in(args):
            storage = t.untyped_storage()
            if book.entry(storage) is None:
                ours = numbers.from_the_source(storage, t.dtype)
                book.register(storage, f"{tensor_words(t)} built from the source's numbers" if ours else
                              f"{tensor_words(t)} built from values the host computed (torch.tensor, torch.from_numpy): "
                              "neither one value the source fixes nor its numbers in the order it writes them",
                              host=not ours)
    written, values, fresh = _effects(func)
    if not written and not fresh:
        return func(*args, **kwargs)  # a view, a read: nothing written
    positional = [a.name for a in func._schema.arguments]
    targets = [t for i in written for t in tensors_in(args[i] if i < len(args) else kwargs.get(positional[i]))]
    target_ids = {t.untyped_storage()._cdata for t in targets}
    before: dict[int, tuple[Memory, bool]] = {}
    for t in tensors_in((args, kwargs)):
        storage = t.untyped_storage()
        memory = book.synced(storage, f"{tensor_words(t)} over memory that no PyTorch op made")
        if memory is not None:
            before[storage._cdata] = (memory, memory.has_dirty())
    # what the op reads: its tensors but those it only overwrites
    read = [d for cdata, (_, d) in before.items() if cdata not in target_ids or name not in _OVERWRITES]
    host = any(read)
    for value_name in values:
        index = positional.index(value_name)
        value = args[index] if index < len(args) else kwargs.get(value_name)
        host |= value is not None and not numbers.fixed(value)
    out = func(*args, **kwargs)
    op = _op_name(func)
    why = _FROM_HOST.format(op=op) if host else ""
    for t in targets:
        storage = t.untyped_storage()
        memory = book.entry(storage)
        if memory is not None:
            memory.written(host, why)
        elif storage._cdata in before:  # reallocated in place (resize_): its old bytes with it
            book.register(storage, f"{tensor_words(t)} that {op} reallocated", host or before[storage._cdata][1], why)
        else:  # set_ over memory kgb never saw
            book.register(storage, f"{tensor_words(t)} that {op} set over memory no PyTorch op made", True)
    for t in tensors_in(out) if fresh else ():
        storage = t.untyped_storage()
        if storage._cdata not in before and book.entry(storage) is None:
            book.register(storage, f"{tensor_words(t)} made by {op}", host, why)
    return out


# In-place ops that write over their target without reading it
_OVERWRITES = frozenset({"aten::copy_", "aten::fill_", "aten::zero_", "aten::set_"})


_WATCH: list = []


def _make_watch() -> Any:
    """A dispatch mode that runs each op through _watched_op."""
    if not _WATCH:
        from torch.utils._python_dispatch import TorchDispatchMode

        from kgb.evaluate import integrity

        class _Watch(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                if integrity._in_transfer[0] or not book.active:  # the interpreter's own copies
                    return func(*args, **kwargs)
                return _watched_op(func, args, kwargs)

        _WATCH.append(_Watch)
    return _WATCH[0]()


@contextmanager
def watched(inputs: list | None = None, scalars: Any = (), importing: bool = False,
            tensors: list | None = None) -> Iterator[Book]:
    """Follow memory inside the block (a call, or the candidate's import: `importing`):
    `inputs` are the storages the judge sent, `tensors` the tensors over them (where a
    pointer table may point), `scalars` the call's numbers. What an import leaves in memory
    is the source's (Book.imported)."""
    import math

    book.prune()
    for storage in inputs or []:
        book.register(storage, "an input the judge sent", host=False)
    book.begin_call(tensors or [])
    numbers.scalars = {float(v) for v in scalars if isinstance(v, int | float) and math.isfinite(float(v))}
    book.active += 1
    book.importing = importing
    try:
        with _make_watch():
            yield book
        if importing:
            book.imported()
    finally:
        book.active -= 1
        book.importing = False
        if not book.active:
            numbers.scalars = set()
            book.prune()  # the call's temporaries; its outputs and inputs until the next call


def returned(result: Any, inputs: list | None = None) -> None:
    """After a call: its outputs, and the inputs it may have written, must hold no byte the
    host wrote (numpy writing the answer into the output)."""
    from kgb.evaluate.correctness import tensors_in

    if not book.active:
        return
    for i, t in enumerate(tensors_in(result)):
        book.returned(f"output {i}", t)
    for t in inputs or []:
        book.returned("an input the call may write", t)
