"""Triton kernel of the triangular-solve families' solutions (trsv, trsm, trsmBatched),
pasted into each generated solution.py ahead of the routine's entry point."""

import triton
import triton.language as tl

from kgb.cublas_families.kernels.common import _floats


@triton.jit(do_not_specialize=["conj", "unit"])
def _trsm_kernel(
    a_ptr, z_ptr, a_offs, z_offs, n_rows, n_cols, lda, sz_r, sz_c, z_base,
    alpha_re, alpha_im, batch_a, batch_z, conj, unit,
    TRANS_A: tl.constexpr, LOWER: tl.constexpr, COMPLEX: tl.constexpr,
    POINTERS: tl.constexpr, BLOCK: tl.constexpr, BLOCK_C: tl.constexpr,
):
    # Solves M X = alpha Z in place of Z for the columns of one program, M triangular:
    # M(r, c) = A(r, c), or A(c, r) with TRANS_A, conjugated when conj != 0, with a unit
    # diagonal (not read) when unit != 0. Rows are solved in blocks of BLOCK in dependency
    # order (forward for lower M, backward for upper): the solved rows' contribution comes
    # in with tl.dot, then the block is substituted row by row in registers. Complex
    # operands are float views (real, imaginary pairs).
    # Compile time (a launch compiled 6 s for complex128, and an operator's cases made up
    # to 31 of them on the H200): conj and unit only flip a sign or skip a division, so they
    # are runtime flags, not specialized (an int equal to 1 would otherwise compile its own
    # variant), and the row-by-row substitution is a loop, not unrolled BLOCK times: each
    # row's loads wait behind the previous row's reductions and barriers either way.
    E: tl.constexpr = 2 if COMPLEX else 1
    batch = tl.program_id(1).to(tl.int64)
    if POINTERS:
        a_ptr += tl.load(a_offs + batch) * E
        z_ptr += tl.load(z_offs + batch) * E
    else:
        a_ptr += batch * batch_a * E
        z_ptr += batch * batch_z * E
    cols = (tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)).to(tl.int64)
    col_ok = cols < n_cols
    pos = tl.arange(0, BLOCK).to(tl.int64)
    for t0 in range(0, n_rows, BLOCK):
        rows = (t0 + pos) if LOWER else (n_rows - 1 - t0 - pos)
        row_ok = (t0 + pos) < n_rows
        z_off = (z_base + rows[:, None] * sz_r + cols[None, :] * sz_c) * E
        zmask = row_ok[:, None] & col_ok[None, :]
        zr = tl.load(z_ptr + z_off, mask=zmask, other=0.0)
        if COMPLEX:
            zi = tl.load(z_ptr + z_off + 1, mask=zmask, other=0.0)
            zr, zi = alpha_re * zr - alpha_im * zi, alpha_re * zi + alpha_im * zr
        else:
            zr = alpha_re * zr
        for s0 in range(0, t0, BLOCK):  # rows solved before this block
            solved = (s0 + pos) if LOWER else (n_rows - 1 - s0 - pos)
            if TRANS_A:
                m_off = (solved[None, :] + rows[:, None] * lda) * E
            else:
                m_off = (rows[:, None] + solved[None, :] * lda) * E
            mr = tl.load(a_ptr + m_off, mask=row_ok[:, None], other=0.0)
            x_off = (z_base + solved[:, None] * sz_r + cols[None, :] * sz_c) * E
            xr = tl.load(z_ptr + x_off, mask=col_ok[None, :], other=0.0)
            zr -= tl.dot(mr, xr, input_precision="ieee")
            if COMPLEX:
                mi = tl.load(a_ptr + m_off + 1, mask=row_ok[:, None], other=0.0)
                mi = tl.where(conj != 0, -mi, mi)
                xi = tl.load(z_ptr + x_off + 1, mask=col_ok[None, :], other=0.0)
                zr += tl.dot(mi, xi, input_precision="ieee")
                zi -= tl.dot(mr, xi, input_precision="ieee") + tl.dot(mi, xr, input_precision="ieee")
        xr_blk = tl.zeros([BLOCK, BLOCK_C], zr.dtype)
        xi_blk = tl.zeros([BLOCK, BLOCK_C], zr.dtype)
        for t in range(BLOCK):
            r = (t0 + t) if LOWER else (n_rows - 1 - t0 - t)
            ok = (t0 + t) < n_rows
            # past the last row, r indexes outside A: no load may use it (the interpreter
            # reads such addresses harmlessly; on the H200 they faulted). A block mask, not
            # a scalar one: the interpreter rejects a scalar folded into a mask.
            earlier = (pos < t) & row_ok & ((t0 + t + 0 * pos) < n_rows)
            if TRANS_A:
                m_off = (rows + r * lda) * E
            else:
                m_off = (r + rows * lda) * E
            mr = tl.load(a_ptr + m_off, mask=earlier, other=0.0)
            here = (pos == t)[:, None]
            tr = tl.sum(tl.where(here, zr, 0.0), axis=0) - tl.sum(mr[:, None] * xr_blk, axis=0)
            if COMPLEX:
                mi = tl.load(a_ptr + m_off + 1, mask=earlier, other=0.0)
                mi = tl.where(conj != 0, -mi, mi)
                tr += tl.sum(mi[:, None] * xi_blk, axis=0)
                ti = tl.sum(tl.where(here, zi, 0.0), axis=0) - tl.sum(
                    mr[:, None] * xi_blk + mi[:, None] * xr_blk, axis=0)
            if unit == 0:  # a unit diagonal is not read
                dr = tl.load(a_ptr + (r + r * lda) * E, mask=ok, other=1.0)
                if COMPLEX:
                    di = tl.load(a_ptr + (r + r * lda) * E + 1, mask=ok, other=0.0)
                    di = tl.where(conj != 0, -di, di)
                    den = dr * dr + di * di
                    tr, ti = (tr * dr + ti * di) / den, (ti * dr - tr * di) / den
                else:
                    tr = tr / dr
            xr_blk = tl.where(here, tr[None, :], xr_blk)
            if COMPLEX:
                xi_blk = tl.where(here, ti[None, :], xi_blk)
        tl.store(z_ptr + z_off, xr_blk, mask=zmask)
        if COMPLEX:
            tl.store(z_ptr + z_off + 1, xi_blk, mask=zmask)
        tl.debug_barrier()  # later blocks read these rows back from memory


def _solve(side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb, batch=1, strides=(0, 0),
           offsets=None, z_strides=None, z_base=0):
    """B <- X with op(A) X = alpha B (side 'L') or X op(A) = alpha B (side 'R'), B m x n."""
    if m <= 0 or n <= 0 or batch <= 0:
        return
    cplx = B.is_complex()
    if side == "L":  # M = op(A)
        trans_a, conj = trans != "N", trans == "C"
        n_rows, n_cols, sz = m, n, (1, ldb)
    else:  # X op(A) = B  <=>  op(A)^T X^T = B^T
        trans_a, conj = trans == "N", trans == "C"
        n_rows, n_cols, sz = n, m, (ldb, 1)
    lower = (uplo == "L") != trans_a
    alpha = complex(alpha)
    block_c = min(32, max(16, triton.next_power_of_2(n_cols)))
    a_offs, z_offs = offsets if offsets is not None else (_floats(B),) * 2
    _trsm_kernel[(triton.cdiv(n_cols, block_c), batch)](
        _floats(A), _floats(B), a_offs, z_offs, n_rows, n_cols, lda, *(z_strides or sz), z_base,
        alpha.real, alpha.imag, *strides, int(conj and cplx), int(diag == "U"),
        TRANS_A=trans_a, LOWER=lower, COMPLEX=cplx, POINTERS=offsets is not None, BLOCK=16,
        BLOCK_C=block_c,
    )
