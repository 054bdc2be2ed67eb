"""Triton kernel of the elementwise matrix families' solutions (ger, syr2, geam, dgmm),
pasted into each generated solution.py ahead of the routine's entry point."""

import triton
import triton.language as tl

from kgb.cublas_families.kernels.common import _base, _floats

# constexpr globals: a kernel may read no other module-level value
GER, SYR2, GEAM, DGMM_LEFT, DGMM_RIGHT = (tl.constexpr(i) for i in range(5))


@triton.jit
def _matrix_kernel(
    c_ptr, a_ptr, b_ptr, x_ptr, y_ptr, M, N, ldc, sa_i, sa_j, sb_i, sb_j,
    alpha_re, alpha_im, beta, incx, incy, x_base, y_base,
    OP: tl.constexpr, CONJ: tl.constexpr, UPPER: tl.constexpr, COMPLEX: tl.constexpr,
    ALPHA_ZERO: tl.constexpr, BETA_ZERO: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    # One BLOCK_M x BLOCK_N tile of the column-major m x n output C(i, j) = c[i + j * ldc];
    # complex matrices are float views (real, imaginary pairs), so offsets are doubled.
    E: tl.constexpr = 2 if COMPLEX else 1
    i = (tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)[:, None]
    j = (tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)[None, :]
    mask = (i < M) & (j < N)
    if OP == SYR2:  # only the stored triangle is touched
        mask = mask & ((i <= j) if UPPER else (i >= j))
    c_off = (i + j * ldc) * E
    if OP == GER or OP == SYR2:
        x_i = tl.load(x_ptr + (x_base + i * incx) * E, mask=i < M, other=0.0)
        y_j = tl.load(y_ptr + (y_base + j * incy) * E, mask=j < N, other=0.0)
        upd = x_i * y_j
        if OP == SYR2:
            y_i = tl.load(y_ptr + (y_base + i * incy), mask=i < M, other=0.0)
            x_j = tl.load(x_ptr + (x_base + j * incx), mask=j < N, other=0.0)
            upd += y_i * x_j
        if COMPLEX:
            xi_i = tl.load(x_ptr + (x_base + i * incx) * E + 1, mask=i < M, other=0.0)
            yi_j = tl.load(y_ptr + (y_base + j * incy) * E + 1, mask=j < N, other=0.0)
            if CONJ:
                yi_j = -yi_j
            upd = upd - xi_i * yi_j
            upd_im = x_i * yi_j + xi_i * y_j
            re = alpha_re * upd - alpha_im * upd_im + tl.load(c_ptr + c_off, mask=mask)
            im = alpha_re * upd_im + alpha_im * upd + tl.load(c_ptr + c_off + 1, mask=mask)
            tl.store(c_ptr + c_off + 1, im, mask=mask)
            out = re
        else:
            out = alpha_re * upd + tl.load(c_ptr + c_off, mask=mask)
    elif OP == GEAM:  # A or B is not read when its scalar is 0
        out = tl.zeros([BLOCK_M, BLOCK_N], c_ptr.dtype.element_ty)
        if not ALPHA_ZERO:
            out += alpha_re * tl.load(a_ptr + i * sa_i + j * sa_j, mask=mask)
        if not BETA_ZERO:
            out += beta * tl.load(b_ptr + i * sb_i + j * sb_j, mask=mask)
    else:
        k = i if OP == DGMM_LEFT else j
        d = tl.load(x_ptr + x_base + k * incx, mask=k < (M if OP == DGMM_LEFT else N), other=0.0)
        out = tl.load(a_ptr + i * sa_i + j * sa_j, mask=mask) * d
    tl.store(c_ptr + c_off, out, mask=mask)


def _matrix(op, m, n, C, ldc, A=None, a_strides=(0, 0), B=None, b_strides=(0, 0), x=None,
            incx=1, y=None, incy=1, alpha=0.0, beta=0.0, conj=False, upper=False):
    if m <= 0 or n <= 0:
        return
    alpha = complex(alpha)
    bm, bn = min(64, triton.next_power_of_2(m)), min(64, triton.next_power_of_2(n))
    x_len, y_len = (m if op != DGMM_RIGHT else n), n
    any_ = _floats(C)
    _matrix_kernel[(triton.cdiv(m, bm), triton.cdiv(n, bn))](
        any_, *(any_ if t is None else _floats(t) for t in (A, B, x, y)), m, n, ldc,
        *a_strides, *b_strides, alpha.real, alpha.imag, float(beta), incx, incy,
        _base(x_len, incx), _base(y_len, incy),
        OP=op, CONJ=conj, UPPER=upper, COMPLEX=C.is_complex(), ALPHA_ZERO=alpha == 0,
        BETA_ZERO=beta == 0, BLOCK_M=bm, BLOCK_N=bn,
    )
