"""BLAS storage as the cuBLAS specs lay it out: column-major matrices in flat buffers,
strided vectors with negative increments, and the three batch forms.

Used by the family modules for inputs and references; never by solutions (a candidate
is one self-contained file). A matrix X with leading dimension ld starting at element
`offset` of its buffer holds X(i, j) at buf[offset + i + j * ld].
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import torch

# A routine's first letter after "cublas": the type of its matrices and scalars.
PREFIX_DTYPE = {
    "S": torch.float32,
    "D": torch.float64,
    "C": torch.complex64,
    "Z": torch.complex128,
    "H": torch.float16,
}
C_TYPE = {"S": "float", "D": "double", "C": "cuComplex", "Z": "cuDoubleComplex", "H": "__half"}
PY_SCALAR = {"S": "float", "D": "float", "C": "complex", "Z": "complex", "H": "float"}


class Batch(StrEnum):
    """How a routine takes several problems: one, a stride apart, or through a pointer array."""

    SINGLE = "single"
    STRIDED = "strided"
    POINTERS = "pointers"


def wide(dtype: torch.dtype) -> torch.dtype:
    """The float64 / complex128 type a reference computes in."""
    return torch.complex128 if dtype.is_complex else torch.float64


def random(count: int, dtype: torch.dtype, gen: torch.Generator, mean: float = 0.0) -> torch.Tensor:
    """`count` standard-normal elements of `dtype` (complex: both parts), plus `mean`."""
    if dtype.is_complex:
        real = torch.randn(2 * count, generator=gen, dtype=torch.float64) + mean
        return torch.view_as_complex(real.reshape(count, 2)).to(dtype)
    return (torch.randn(count, generator=gen, dtype=torch.float64) + mean).to(dtype)


def nans(count: int, dtype: torch.dtype) -> torch.Tensor:
    """A buffer a routine must not read: NaN leaks into anything computed from it."""
    return torch.full((count,), float("nan"), dtype=dtype)


def matrix(
    buf: torch.Tensor, rows: int, cols: int, ld: int, offset: int = 0, count: int | None = None,
    stride: int = 0,
) -> torch.Tensor:  # fmt: skip
    """The column-major rows x cols matrix at `offset` with leading dimension ld, a view;
    with `count`, a count x rows x cols view of that many matrices `stride` elements apart."""
    if count is None:
        return buf.as_strided((rows, cols), (1, ld), buf.storage_offset() + offset)
    return buf.as_strided((count, rows, cols), (stride, 1, ld), buf.storage_offset() + offset)


def op(m: torch.Tensor, trans: str) -> torch.Tensor:
    """op(X) of a BLAS transpose flag: 'N' X, 'T' X^T, 'C' X^H (X^T for real X); of the
    last two dimensions, so that a batch of matrices takes it too."""
    if trans == "N":
        return m
    return m.mH if trans == "C" else m.mT


def stored_shape(trans: str, rows: int, cols: int) -> tuple[int, int]:
    """The stored shape of a matrix whose op() is rows x cols."""
    return (rows, cols) if trans == "N" else (cols, rows)


def span(n: int, inc: int) -> int:
    """Elements a strided vector of n entries occupies: 1 + (n - 1) * |inc|."""
    return 1 + (max(n, 1) - 1) * abs(inc)


def _strided(buf: torch.Tensor, n: int, inc: int, offset: int, count: int | None, stride: int):
    """The elements of a BLAS vector (of `count` of them, `stride` apart), in storage order."""
    if count is None:
        return buf.as_strided((n,), (abs(inc),), buf.storage_offset() + offset)
    return buf.as_strided((count, n), (stride, abs(inc)), buf.storage_offset() + offset)


def vector(
    buf: torch.Tensor, n: int, inc: int, offset: int = 0, count: int | None = None, stride: int = 0
) -> torch.Tensor:
    """The n logical elements of a BLAS vector, a copy in logical order: element i is
    buf[i * inc] for inc > 0 and buf[(n - 1 - i) * |inc|] for inc < 0; with `count`, a
    count x n tensor of that many vectors `stride` elements apart."""
    v = _strided(buf, n, inc, offset, count, stride)
    return v.flip(-1) if inc < 0 else v


def set_vector(
    buf: torch.Tensor, n: int, inc: int, values: torch.Tensor, offset: int = 0,
    count: int | None = None, stride: int = 0,
) -> None:  # fmt: skip
    """Write `values` (logical order) into the BLAS vector's elements of buf (with `count`,
    into each of the vectors, as `vector` reads them)."""
    v = _strided(buf, n, inc, offset, count, stride)
    v.copy_(values.flip(-1) if inc < 0 else values)


@dataclass(frozen=True)
class Batched:
    """One operand of a batched routine: its buffer, and where each problem's data starts.

    STRIDED: problem b starts at b * stride. POINTERS: at offsets[b], an int64 tensor on
    the device that stands for the pointer array (pointer b = buf + offsets[b]); the
    problems sit at shuffled places with gaps. SINGLE: one problem at 0.
    """

    buf: torch.Tensor
    starts: list[int]
    stride: int = 0
    offsets: torch.Tensor | None = None


POINTER_ALIGN = 8  # elements: 16 bytes for half precision, more for wider types


def batched(
    count: int, size: int, form: Batch, gen: torch.Generator, fill, gap: int = 3
) -> Batched:
    """A buffer of `count` problems of `size` elements each, made by fill(total_elements).

    Strided problems sit `size + gap` apart; pointer-array problems are shuffled, with a
    gap between neighbours, so that neither a constant stride nor the order can be assumed.
    Each pointer-array problem starts on a multiple of POINTER_ALIGN elements, as every
    allocation does: libcublas's *Batched kernels assume aligned pointers (measured on the
    H200, cublasHgemmBatched faulted on problems 6 bytes into a buffer).
    """
    if form == Batch.SINGLE:
        return Batched(fill(size), [0])
    if form == Batch.STRIDED:
        slot = size + gap
        return Batched(fill(slot * count), [b * slot for b in range(count)], stride=slot)
    slot = -(-(size + gap) // POINTER_ALIGN) * POINTER_ALIGN
    order = torch.randperm(count, generator=gen).tolist()
    starts = [POINTER_ALIGN + slot * order[b] for b in range(count)]
    return Batched(fill(POINTER_ALIGN + slot * count), starts, offsets=torch.tensor(starts, dtype=torch.int64))


def triangle(m: torch.Tensor, uplo: str, unit: bool = False) -> torch.Tensor:
    """The triangle `uplo` ('L'/'U') of a square matrix; with `unit`, ones on its diagonal."""
    t = m.tril() if uplo == "L" else m.triu()
    if unit:
        t = t - torch.diag_embed(t.diagonal()) + torch.eye(m.shape[0], dtype=m.dtype)
    return t


def symmetric(m: torch.Tensor, uplo: str) -> torch.Tensor:
    """The symmetric (not Hermitian) matrix whose triangle `uplo` is stored in m."""
    t = triangle(m, uplo)
    return t + t.transpose(0, 1) - torch.diag_embed(m.diagonal())
