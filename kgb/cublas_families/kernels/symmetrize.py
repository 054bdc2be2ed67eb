"""Triton kernel that expands a symmetric matrix stored in one triangle into a full
one, pasted after the gemm kernel into the symm solutions."""

import torch
import triton
import triton.language as tl

from kgb.cublas_families.kernels.common import _floats


@triton.jit
def _symmetrize_kernel(a_ptr, s_ptr, n, lda, UPPER: tl.constexpr, E: tl.constexpr,
                       BLOCK: tl.constexpr):
    # S(i, j) = A(i, j) inside the stored triangle, A(j, i) outside it (no conjugation);
    # E = 2 for complex matrices seen as (real, imaginary) pairs
    i = (tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)[:, None]
    j = (tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)[None, :]
    mask = (i < n) & (j < n)
    swap = (i > j) if UPPER else (i < j)
    src = (tl.where(swap, j, i) + tl.where(swap, i, j) * lda) * E
    for part in tl.static_range(E):
        tl.store(s_ptr + (i + j * n) * E + part, tl.load(a_ptr + src + part, mask=mask), mask=mask)


def _symmetrized(A, n, lda, uplo):
    """A full n x n copy (leading dimension n) of the symmetric matrix stored in A."""
    full = torch.empty(n * n, dtype=A.dtype, device=A.device)
    block = min(64, triton.next_power_of_2(n))
    _symmetrize_kernel[(triton.cdiv(n, block), triton.cdiv(n, block))](
        _floats(A), _floats(full), n, lda, UPPER=uplo == "U", E=2 if A.is_complex() else 1,
        BLOCK=block,
    )
    return full
