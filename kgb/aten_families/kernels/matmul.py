"""The matmul family's product: a tiled batched GEMM, out[i] = a[i] @ b[i] (+ bias), over
any strides (a batch stride of 0 shares a matrix), accumulated in float32 and rounded once."""

import torch
import triton
import triton.language as tl


@triton.jit
def _bmm_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, sab, sam, sak, sbb, sbk, sbn, scb, scm, scn,
                HAS_BIAS: tl.constexpr, PRECISION: tl.constexpr, UPCAST: tl.constexpr,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # One program computes a BLOCK_M x BLOCK_N tile of one batch's product. The 1-D grid
    # is batch-major; within a batch, tiles go in groups of GROUP_M rows for L2 reuse.
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    tiles = grid_m * grid_n
    batch = (pid // tiles).to(tl.int64)
    t = pid % tiles
    group = GROUP_M * grid_n
    first_m = (t // group) * GROUP_M
    rows_in_group = tl.minimum(grid_m - first_m, GROUP_M)
    pid_m = first_m + (t % group) % rows_in_group
    pid_n = (t % group) // rows_in_group
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + batch * sab + rm[:, None].to(tl.int64) * sam + rk[None, :] * sak
    b_ptrs = b_ptr + batch * sbb + rk[:, None] * sbk + rn[None, :].to(tl.int64) * sbn
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = (k0 + rk) < K
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & k_ok[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_ok[:, None] & (rn[None, :] < N), other=0.0)
        if UPCAST:
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BLOCK_K * sak
        b_ptrs += BLOCK_K * sbk
    if HAS_BIAS:  # added in float32, before the one rounding
        acc += tl.load(bias_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    c = acc.to(c_ptr.dtype.element_ty)
    c_ptrs = c_ptr + batch * scb + rm[:, None].to(tl.int64) * scm + rn[None, :] * scn
    tl.store(c_ptrs, c, mask=(rm[:, None] < M) & (rn[None, :] < N))


def _gemm(a, b, out, batch, sab, sbb, bias=None):
    """out[i] = a[i] @ b[i] (+ bias) for i < batch; a (., M, K), b (., K, N), out (batch, M, N);
    sab and sbb are the batch strides of a and b."""
    M, K = a.shape[-2:]
    N = b.shape[-1]
    if out.numel() == 0:
        return
    big = M >= 128 and N >= 128
    bm, bn, bk = (128, 128, 32) if big else (64, 64, 32)
    # float32 must not be rounded to TF32 inside tl.dot. bfloat16 goes through TF32 instead
    # of a bf16 dot: TF32 holds every bfloat16 exactly, so the result is the same, and
    # Triton's CPU interpreter multiplies bf16 operands as raw integers (a bug there).
    precision = "ieee" if a.dtype == torch.float32 else "tf32"
    grid = (batch * triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    _bmm_kernel[grid](a, b, out if bias is None else bias, out, M, N, K, sab, a.stride(-2), a.stride(-1),
                      sbb, b.stride(-2), b.stride(-1), *out.stride(),
                      HAS_BIAS=bias is not None, PRECISION=precision, UPCAST=a.dtype == torch.bfloat16,
                      BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, num_warps=8 if big else 4, num_stages=3)
