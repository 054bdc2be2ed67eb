"""Triton kernel of the gemm family's solutions, pasted into each generated solution.py
ahead of the routine's entry point (a candidate is one file and may not import kgb)."""

import torch
import triton
import triton.language as tl

from kgb.cublas_families.kernels.common import _floats


@triton.jit
def _dot(x, y, acc, IEEE: tl.constexpr):
    # out_dtype: Triton 3.6 (the GPU hosts') otherwise asks for a float32 accumulator and
    # rejects the float64 one of the D and Z routines; 3.9 infers it
    if IEEE:  # full float32 products: TF32 would miss the float32 tolerance
        return tl.dot(x, y, acc, input_precision="ieee", out_dtype=acc.dtype)
    else:
        return tl.dot(x, y, acc, out_dtype=acc.dtype)


@triton.jit
def _gemm_kernel(
    a_ptr, b_ptr, c_ptr, a_offs, b_offs, c_offs,
    M, N, K, alpha_re, alpha_im, beta_re, beta_im,
    sa_m, sa_k, sb_k, sb_n, sc_m, sc_n, batch_a, batch_b, batch_c,
    COMPLEX: tl.constexpr, CONJ_A: tl.constexpr, CONJ_B: tl.constexpr,
    POINTERS: tl.constexpr, BETA_ZERO: tl.constexpr, DOUBLE: tl.constexpr, IEEE: tl.constexpr,
    TRIANGLE: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    # out[M, N] = alpha * X[M, K] @ Y[K, N] + beta * out for problem program_id(1), every
    # operand through its strides. Complex operands are float views: real part at an even
    # element, imaginary part right after it; strides arrive already doubled.
    pid = tl.program_id(0)
    batch = tl.program_id(1).to(tl.int64)
    ELEM: tl.constexpr = 2 if COMPLEX else 1
    if POINTERS:  # the pointer array, as element offsets into each buffer
        a_ptr += tl.load(a_offs + batch) * ELEM
        b_ptr += tl.load(b_offs + batch) * ELEM
        c_ptr += tl.load(c_offs + batch) * ELEM
    else:
        a_ptr += batch * batch_a
        b_ptr += batch * batch_b
        c_ptr += batch * batch_c
    # grouped tile order, so that neighbouring programs share tiles of X in L2
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * tiles_n
    first_m = (pid // group) * GROUP_M
    rows_in_group = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % rows_in_group
    pid_n = (pid % group) // rows_in_group

    # TRIANGLE 1 (2): only out's lower (upper) triangle, C's upper (lower), is written
    if TRIANGLE == 1 and pid_n * BLOCK_N > pid_m * BLOCK_M + BLOCK_M - 1:
        return
    if TRIANGLE == 2 and pid_m * BLOCK_M > pid_n * BLOCK_N + BLOCK_N - 1:
        return
    rm = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    rn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    rk = tl.arange(0, BLOCK_K).to(tl.int64)
    x_tile = a_ptr + rm[:, None] * sa_m + rk[None, :] * sa_k
    y_tile = b_ptr + rk[:, None] * sb_k + rn[None, :] * sb_n
    if DOUBLE:
        acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float64)
    else:
        acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    if COMPLEX:
        acc_ii = tl.zeros_like(acc)
        acc_ri = tl.zeros_like(acc)
        acc_ir = tl.zeros_like(acc)
    for k0 in range(0, K, BLOCK_K):
        x_mask = (rm[:, None] < M) & (rk[None, :] + k0 < K)
        y_mask = (rk[:, None] + k0 < K) & (rn[None, :] < N)
        x = tl.load(x_tile, mask=x_mask, other=0.0)
        y = tl.load(y_tile, mask=y_mask, other=0.0)
        if x.dtype == tl.int8:  # exact in half precision, and products exact in float32
            x = x.to(tl.float16)
            y = y.to(tl.float16)
        acc = _dot(x, y, acc, IEEE)
        if COMPLEX:
            xi = tl.load(x_tile + 1, mask=x_mask, other=0.0)
            yi = tl.load(y_tile + 1, mask=y_mask, other=0.0)
            if xi.dtype == tl.int8:
                xi = xi.to(tl.float16)
                yi = yi.to(tl.float16)
            if CONJ_A:
                xi = -xi
            if CONJ_B:
                yi = -yi
            acc_ii = _dot(xi, yi, acc_ii, IEEE)
            acc_ri = _dot(x, yi, acc_ri, IEEE)
            acc_ir = _dot(xi, y, acc_ir, IEEE)
        x_tile += BLOCK_K * sa_k
        y_tile += BLOCK_K * sb_k

    c_tile = c_ptr + rm[:, None] * sc_m + rn[None, :] * sc_n
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    if TRIANGLE == 1:
        mask = mask & (rn[None, :] <= rm[:, None])
    if TRIANGLE == 2:
        mask = mask & (rn[None, :] >= rm[:, None])
    if COMPLEX:
        re = acc - acc_ii
        im = acc_ri + acc_ir
        out = alpha_re * re - alpha_im * im
        out_im = alpha_re * im + alpha_im * re
        if not BETA_ZERO:  # beta == 0: C is never read, so NaN in it cannot leak
            c_re = tl.load(c_tile, mask=mask, other=0.0)
            c_im = tl.load(c_tile + 1, mask=mask, other=0.0)
            out += beta_re * c_re - beta_im * c_im
            out_im += beta_re * c_im + beta_im * c_re
        tl.store(c_tile + 1, out_im.to(c_ptr.dtype.element_ty), mask=mask)
    else:
        out = alpha_re * acc
        if not BETA_ZERO:
            out += beta_re * tl.load(c_tile, mask=mask, other=0.0).to(acc.dtype)
    tl.store(c_tile, out.to(c_ptr.dtype.element_ty), mask=mask)


def _gemm(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,
          batch=1, strides=(0, 0, 0), offsets=None, triangle=""):
    """C = alpha op(A) op(B) + beta C for `batch` problems, column-major; with triangle
    'U' or 'L' only that triangle of C (m == n) is computed and written."""
    if m <= 0 or n <= 0 or batch <= 0:
        return
    cplx = C.is_complex()
    e = 2 if cplx else 1
    # strides of op(A)[i, p] and op(B)[p, j] in column-major storage
    sa_i, sa_p = (1, lda) if transa == "N" else (lda, 1)
    sb_p, sb_j = (1, ldb) if transb == "N" else (ldb, 1)
    alpha, beta = complex(alpha), complex(beta)
    double = C.dtype in (torch.float64, torch.complex128)
    if double and cplx:  # four complex128 tiles per stage must fit in shared memory
        bm, bn, bk, warps = 64, 64, 16, 4
    elif double or cplx:
        bm, bn, bk, warps = 64, 64, 32, 4
    elif A.dtype == torch.float32:  # measured on an H200 for Sgemm
        bm, bn, bk, warps = (64, 128, 32, 4) if sa_i == 1 else (128, 128, 32, 8)
    else:
        bm, bn, bk, warps = 128, 128, 64, 8
    # small problems: tiles no larger than the matrix (tl.dot needs 16 or more)
    bm = min(bm, max(16, triton.next_power_of_2(n)))
    bn = min(bn, max(16, triton.next_power_of_2(m)))
    bk = min(bk, max(16, triton.next_power_of_2(max(k, 1))))
    a_offs, b_offs, c_offs = offsets if offsets is not None else (_floats(C),) * 3
    # Column-major C = op(A) op(B) is row-major C^T = op(B)^T op(A)^T: computing C^T puts
    # the contiguous dimensions where the kernel reads fastest in the common 'N' cases.
    grid = (triton.cdiv(n, bm) * triton.cdiv(m, bn), batch)
    _gemm_kernel[grid](
        _floats(B), _floats(A), _floats(C), b_offs, a_offs, c_offs,
        n, m, max(k, 0), alpha.real, alpha.imag, beta.real, beta.imag,
        e * sb_j, e * sb_p, e * sa_p, e * sa_i, e * ldc, e,
        e * strides[1], e * strides[0], e * strides[2],
        COMPLEX=cplx, CONJ_A=transb == "C" and cplx, CONJ_B=transa == "C" and cplx,
        POINTERS=offsets is not None, BETA_ZERO=beta == 0, DOUBLE=double,
        IEEE=A.dtype in (torch.float32, torch.complex64), TRIANGLE={"": 0, "U": 1, "L": 2}[triangle],
        BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, num_warps=warps, num_stages=3,
    )
