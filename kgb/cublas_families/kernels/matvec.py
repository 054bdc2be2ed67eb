"""Triton kernel of the matrix-vector families' solutions (gemv, symv, sbmv, tbmv),
pasted into each generated solution.py ahead of the routine's entry point."""

import triton
import triton.language as tl

from kgb.cublas_families.kernels.common import _base, _floats

# storage modes; constexpr globals: a kernel may read no other module-level value
GENERAL, SYMMETRIC, SYMMETRIC_BAND, TRIANGULAR_BAND = (tl.constexpr(i) for i in range(4))


@triton.jit
def _matvec_kernel(
    a_ptr, x_ptr, y_ptr, a_offs, x_offs, y_offs,
    n_out, n_red, lda, kband, alpha_re, alpha_im, beta_re, beta_im,
    incx, incy, x_base, y_base, batch_a, batch_x, batch_y,
    TRANS: tl.constexpr, CONJ: tl.constexpr, STORAGE: tl.constexpr, UPPER: tl.constexpr,
    UNIT: tl.constexpr, COMPLEX: tl.constexpr, POINTERS: tl.constexpr, BETA_ZERO: tl.constexpr,
    BLOCK_O: tl.constexpr, BLOCK_R: tl.constexpr,
):
    # y[o] = alpha * sum_r M(o, r) * x[r] + beta * y[o] for problem program_id(1), where
    # M = op(A) and A is general, symmetric (one triangle stored), symmetric band or
    # triangular band storage. Complex operands are float views (real, imaginary pairs).
    pid = tl.program_id(0)
    batch = tl.program_id(1).to(tl.int64)
    E: tl.constexpr = 2 if COMPLEX else 1
    if POINTERS:  # the pointer array, as element offsets into each buffer
        a_ptr += tl.load(a_offs + batch) * E
        x_ptr += tl.load(x_offs + batch) * E
        y_ptr += tl.load(y_offs + batch) * E
    else:
        a_ptr += batch * batch_a * E
        x_ptr += batch * batch_x * E
        y_ptr += batch * batch_y * E
    o = (pid * BLOCK_O + tl.arange(0, BLOCK_O)).to(tl.int64)
    o_ok = o < n_out
    lo = 0
    hi = n_red
    if STORAGE >= SYMMETRIC_BAND:  # only the band's columns touch these rows
        lo = max(pid * BLOCK_O - kband, 0)
        hi = min(pid * BLOCK_O + BLOCK_O + kband, n_red)
    acc = tl.zeros([BLOCK_O, BLOCK_R], a_ptr.dtype.element_ty)
    acc_im = tl.zeros([BLOCK_O, BLOCK_R], a_ptr.dtype.element_ty)
    for r0 in range(lo, hi, BLOCK_R):
        r = (r0 + tl.arange(0, BLOCK_R)).to(tl.int64)
        r_ok = r < hi
        valid = o_ok[:, None] & r_ok[None, :]
        if TRANS:  # element (o, r) of op(A) is A(r, o)
            i = r[None, :] + 0 * o[:, None]
            j = o[:, None] + 0 * r[None, :]
        else:
            i = o[:, None] + 0 * r[None, :]
            j = r[None, :] + 0 * o[:, None]
        if STORAGE == TRIANGULAR_BAND:
            valid = valid & ((i <= j) if UPPER else (i >= j))
            if UNIT:
                valid = valid & (i != j)
        elif STORAGE != GENERAL:  # symmetric: read (j, i) where (i, j) is not stored
            swap = (i > j) if UPPER else (i < j)
            i, j = tl.where(swap, j, i), tl.where(swap, i, j)
        if STORAGE >= SYMMETRIC_BAND:
            d = (j - i) if UPPER else (i - j)
            valid = valid & (d <= kband)
            i = (kband - d) if UPPER else d  # the band's row in its storage
        off = (i + j * lda) * E
        a = tl.load(a_ptr + off, mask=valid, other=0.0)
        xr = tl.load(x_ptr + (x_base + r * incx) * E, mask=r_ok, other=0.0)
        if COMPLEX:
            ai = tl.load(a_ptr + off + 1, mask=valid, other=0.0)
            if CONJ:
                ai = -ai
            xi = tl.load(x_ptr + (x_base + r * incx) * E + 1, mask=r_ok, other=0.0)
            acc += a * xr[None, :] - ai * xi[None, :]
            acc_im += a * xi[None, :] + ai * xr[None, :]
        else:
            acc += a * xr[None, :]
        if UNIT:  # the unit diagonal is not stored
            acc += tl.where((o[:, None] == r[None, :]) & o_ok[:, None] & r_ok[None, :], xr[None, :], 0.0)
    re = tl.sum(acc, axis=1)
    y_off = (y_base + o * incy) * E
    if COMPLEX:
        im = tl.sum(acc_im, axis=1)
        out = alpha_re * re - alpha_im * im
        out_im = alpha_re * im + alpha_im * re
        if not BETA_ZERO:  # beta == 0: y is never read, so NaN in it cannot leak
            y_re = tl.load(y_ptr + y_off, mask=o_ok, other=0.0)
            y_im = tl.load(y_ptr + y_off + 1, mask=o_ok, other=0.0)
            out += beta_re * y_re - beta_im * y_im
            out_im += beta_re * y_im + beta_im * y_re
        tl.store(y_ptr + y_off + 1, out_im, mask=o_ok)
    else:
        out = alpha_re * re
        if not BETA_ZERO:
            out += beta_re * tl.load(y_ptr + y_off, mask=o_ok, other=0.0)
    tl.store(y_ptr + y_off, out, mask=o_ok)


def _matvec(trans, n_out, n_red, alpha, A, lda, x, incx, beta, y, incy, storage=GENERAL,
            upper=False, unit=False, kband=0, batch=1, strides=(0, 0, 0), offsets=None):
    """y = alpha op(A) x + beta y for `batch` problems; op(A) is n_out x n_red."""
    if n_out <= 0 or batch <= 0:
        return
    cplx = y.is_complex()
    alpha, beta = complex(alpha), complex(beta)
    block_o = min(64, max(16, triton.next_power_of_2(n_out)))
    block_r = min(64 if not cplx else 32, max(16, triton.next_power_of_2(max(n_red, 1))))
    a_offs, x_offs, y_offs = offsets if offsets is not None else (_floats(y),) * 3
    grid = (triton.cdiv(n_out, block_o), batch)
    _matvec_kernel[grid](
        _floats(A), _floats(x), _floats(y), a_offs, x_offs, y_offs,
        n_out, max(n_red, 0), lda, kband, alpha.real, alpha.imag, beta.real, beta.imag,
        incx, incy, _base(n_red, incx), _base(n_out, incy), *strides,
        TRANS=trans != "N", CONJ=trans == "C" and cplx, STORAGE=storage, UPPER=upper,
        UNIT=unit, COMPLEX=cplx, POINTERS=offsets is not None, BETA_ZERO=beta == 0,
        BLOCK_O=block_o, BLOCK_R=block_r,
    )
