"""Triton kernels of the vector (BLAS level 1) families' solutions, pasted into each
generated solution.py ahead of the routine's entry point."""

import torch
import triton
import triton.language as tl

from kgb.cublas_families.kernels.common import _base, _floats

# constexpr globals: a kernel may read no other module-level value
AXPY, COPY, SWAP, SCAL = (tl.constexpr(i) for i in range(4))
BLOCK = 2048
MAX_PARTIALS = 1024  # programs of a reduction's first pass; one program then adds their sums


@triton.jit
def _elementwise_kernel(x_ptr, y_ptr, n, alpha, incx, incy, x_base, y_base,
                        OP: tl.constexpr, E: tl.constexpr, BLOCK: tl.constexpr):
    # E floats per element: 2 for a complex vector seen as (real, imaginary) pairs
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    for part in tl.static_range(E):
        xo = (x_base + i * incx) * E + part
        yo = (y_base + i * incy) * E + part
        x = tl.load(x_ptr + xo, mask=mask)
        if OP == AXPY:
            tl.store(y_ptr + yo, alpha * x + tl.load(y_ptr + yo, mask=mask), mask=mask)
        elif OP == COPY:
            tl.store(y_ptr + yo, x, mask=mask)
        elif OP == SWAP:
            tl.store(x_ptr + xo, tl.load(y_ptr + yo, mask=mask), mask=mask)
            tl.store(y_ptr + yo, x, mask=mask)
        else:
            tl.store(x_ptr + xo, alpha * x, mask=mask)


@triton.jit
def _reduce_partials(x_ptr, y_ptr, part_ptr, n, incx, incy, x_base, y_base,
                     ASUM: tl.constexpr, COMPLEX: tl.constexpr, CONJ: tl.constexpr,
                     BLOCK: tl.constexpr):
    # grid-stride loop: program p adds blocks p, p + P, p + 2P, ... into one sum (two for
    # complex: real and imaginary), written to part[2p], part[2p + 1]
    pid = tl.program_id(0)
    step = tl.num_programs(0).to(tl.int64) * BLOCK
    E: tl.constexpr = 2 if COMPLEX else 1
    acc = tl.zeros([BLOCK], x_ptr.dtype.element_ty)
    acc_im = tl.zeros([BLOCK], x_ptr.dtype.element_ty)
    for start in range(pid.to(tl.int64) * BLOCK, n, step):
        i = start + tl.arange(0, BLOCK)
        mask = i < n
        xo = (x_base + i * incx) * E
        x = tl.load(x_ptr + xo, mask=mask, other=0.0)
        if ASUM:
            acc += tl.abs(x)
        elif COMPLEX:
            yo = (y_base + i * incy) * E
            y = tl.load(y_ptr + yo, mask=mask, other=0.0)
            xi = tl.load(x_ptr + xo + 1, mask=mask, other=0.0)
            yi = tl.load(y_ptr + yo + 1, mask=mask, other=0.0)
            if CONJ:
                xi = -xi
            acc += x * y - xi * yi
            acc_im += x * yi + xi * y
        else:
            acc += x * tl.load(y_ptr + (y_base + i * incy), mask=mask, other=0.0)
    tl.store(part_ptr + 2 * pid, tl.sum(acc, axis=0))
    tl.store(part_ptr + 2 * pid + 1, tl.sum(acc_im, axis=0))


@triton.jit
def _reduce_finish(part_ptr, result_ptr, n_parts, COMPLEX: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    parts = tl.load(part_ptr + 2 * i, mask=i < n_parts, other=0.0)
    tl.store(result_ptr, tl.sum(parts, axis=0))
    if COMPLEX:
        parts_im = tl.load(part_ptr + 2 * i + 1, mask=i < n_parts, other=0.0)
        tl.store(result_ptr + 1, tl.sum(parts_im, axis=0))


def _elementwise(op, n, alpha, x, incx, y, incy):
    if n <= 0:
        return
    e = 2 if x.is_complex() else 1
    _elementwise_kernel[(triton.cdiv(n, BLOCK),)](
        _floats(x), _floats(y), n, float(alpha), incx, incy, _base(n, incx), _base(n, incy),
        OP=op, E=e, BLOCK=BLOCK,
    )


def _reduce(n, x, incx, y, incy, result, asum=False, conj=False):
    """result[0] = sum |x_i| (asum) or sum x_i * y_i (conj(x_i) with conj), on the device."""
    xf = _floats(x)
    n_parts = min(triton.cdiv(max(n, 0), BLOCK), MAX_PARTIALS)
    partials = torch.empty(2 * max(n_parts, 1), dtype=xf.dtype, device=x.device)
    if n_parts:
        _reduce_partials[(n_parts,)](
            xf, _floats(y), partials, n, incx, incy, _base(n, incx), _base(n, incy),
            ASUM=asum, COMPLEX=x.is_complex(), CONJ=conj, BLOCK=BLOCK,
        )
    # with n <= 0 no partial is read and the result is 0
    _reduce_finish[(1,)](partials, _floats(result), n_parts, COMPLEX=x.is_complex(),
                         BLOCK=triton.next_power_of_2(max(n_parts, 1)))
