"""The numbers a candidate's source and its call fix: what a PyTorch op on the host may write
without having computed it (kgb.evaluate.op_watch).

A fill of 0, 1, an infinity or NaN, a scalar argument of the call, or one of the numbers the
source writes carries nothing the host read from the inputs, and neither does a table of the
source's numbers in the order it writes them (a literal coefficient table): its cases are
drawn after the source is fixed. Anything else a wrapper builds from Python values during a
call (`torch.tensor([math.log2(math.e)])`) could hold what the host read from the inputs.
"""

from __future__ import annotations

from typing import Any

MAX_LITERALS = 10_000  # a source's numbers beyond these make no table (provenance_audit.MAX_LITERALS)


class SourceNumbers:
    """The source's numbers (in order, and as a set with their negations, 0 and 1), and the
    scalar arguments of the call being watched."""

    def __init__(self) -> None:
        self.literals: Any = None  # the source's numbers in order (float64), set at load
        self.numbers: set[float] = {0.0, 1.0}  # 0, 1 and the source's numbers
        self.scalars: set[float] = set()  # the call's scalar arguments

    def take_source(self, source: str) -> None:
        """The candidate's numbers, for the tables and fills its wrapper may make of them."""
        import numpy as np

        numbers = literal_sequence(source)
        self.literals = np.array(numbers, dtype=np.float64)
        self.numbers = {0.0, 1.0, *numbers, *(-v for v in numbers)}

    def fixed(self, value: Any, cast: Any = None) -> bool:
        """A value a fill may write without having computed it: 0, 1, an infinity or NaN,
        a number the source writes, a scalar argument of the call; with `cast`, as the
        tensor's dtype holds them (`t[0] = 1.4426950408889634` holds it as float32)."""
        import math

        import numpy as np

        try:
            value = float(value)
        except (TypeError, ValueError, OverflowError):
            return False
        if not math.isfinite(value) or value in self.numbers or value in self.scalars:
            return True
        if cast is None:
            return False
        return bool((cast(np.array(sorted(self.numbers | self.scalars), dtype=np.float64)) == value).any())

    def from_the_source(self, storage: Any, dtype: Any) -> bool:
        """Whether a tensor built from Python values (torch.tensor, torch.from_numpy) holds
        what the source fixes: one value a fill may write throughout, or the source's own
        numbers in the order it writes them (a literal coefficient table)."""
        import numpy as np

        read = _values(storage, dtype)
        if read is None:
            return False
        flat, cast = read
        if flat.size == 0:
            return True
        first = flat[0]
        if np.all((flat == first) | (np.isnan(flat) & np.isnan(first))):
            return self.fixed(first, cast)
        numbers = self.literals if self.literals is not None else np.zeros(0)
        if flat.size > numbers.size:
            return False
        numbers = cast(numbers)
        return any(np.array_equal(numbers[p:p + flat.size], flat)
                   for p in np.flatnonzero(numbers[: numbers.size - flat.size + 1] == first))


def _values(storage: Any, dtype: Any) -> tuple[Any, Any] | None:
    """A storage's elements as float64, read as `dtype` (a torch dtype), and a function that
    casts float64 values as that dtype would hold them."""
    import ctypes

    import numpy as np
    import torch

    nbytes = storage.nbytes()
    raw = np.frombuffer((ctypes.c_uint8 * nbytes).from_address(storage.data_ptr()), dtype=np.uint8)
    if dtype.is_complex:
        dtype = dtype.to_real()
    if dtype == torch.bfloat16:
        bits = raw[: nbytes // 2 * 2].view(np.uint16)
        from kgb.evaluate.interpreter import _bf16_bits

        def widen(b: Any) -> Any:
            return (b.astype(np.uint32) << 16).view(np.float32).astype(np.float64)

        return widen(bits), lambda v: widen(_bf16_bits(v.astype(np.float32)))
    try:
        kind = np.dtype(str(dtype).removeprefix("torch."))
    except TypeError:
        return None  # float8 and the like: no table of the source's numbers
    values = raw[: nbytes // kind.itemsize * kind.itemsize].view(kind).astype(np.float64)

    def cast(v: Any) -> Any:
        if kind == np.bool_:
            return (v != 0).astype(np.float64)
        if np.issubdtype(kind, np.integer):
            info = np.iinfo(kind)
            return np.clip(np.where(np.isfinite(v), v, 0), info.min, info.max).astype(kind).astype(np.float64)
        with np.errstate(over="ignore"):
            return v.astype(kind).astype(np.float64)

    return values, cast


def literal_sequence(source: str) -> list[float]:
    """The numbers the source writes, in the order it writes them, signs included (`-0.5`
    is -0.5; True and False are 1 and 0): a table `torch.tensor([...])` builds from them
    holds them in that order."""
    import ast

    from kgb import syntax

    try:
        tree = syntax.parse(source)
    except SyntaxError:
        return []
    found: list[tuple[int, int, float]] = []
    negated: set[int] = set()
    for node in ast.walk(tree):  # a parent before its children
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
            negated.add(id(node.operand))
        elif isinstance(node, ast.Constant) and isinstance(node.value, bool | int | float):
            try:
                number = float(node.value)
            except OverflowError:
                continue
            found.append((node.lineno, node.col_offset, -number if id(node) in negated else number))
            if len(found) >= MAX_LITERALS:
                break
    return [v for _, _, v in sorted(found, key=lambda f: (f[0], f[1]))]
