import math

import torch
import triton
import triton.language as tl


@triton.jit
def _linear_kernel(a_ptr, w_ptr, bias_ptr, c_ptr, M, N, K, sam, sak, swn, swk, scm,
                   HAS_BIAS: tl.constexpr, PRECISION: tl.constexpr, UPCAST: tl.constexpr,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   GROUP_M: tl.constexpr):
    # c[m, n] = sum_k a[m, k] * w[n, k] + bias[n]; one BLOCK_M x BLOCK_N tile per program,
    # tiles in groups of GROUP_M rows for L2 reuse.
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * grid_n
    first_m = (pid // group) * GROUP_M
    rows_in_group = tl.minimum(grid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % rows_in_group
    pid_n = (pid % group) // rows_in_group
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None].to(tl.int64) * sam + rk[None, :] * sak
    w_ptrs = w_ptr + rk[:, None] * swk + rn[None, :].to(tl.int64) * swn  # w.T tile (K x N)
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = (k0 + rk) < K
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & k_ok[None, :], other=0.0)
        w = tl.load(w_ptrs, mask=k_ok[:, None] & (rn[None, :] < N), other=0.0)
        if UPCAST:
            a = a.to(tl.float32)
            w = w.to(tl.float32)
        acc = tl.dot(a, w, acc, input_precision=PRECISION)
        a_ptrs += BLOCK_K * sak
        w_ptrs += BLOCK_K * swk
    if HAS_BIAS:
        acc += tl.load(bias_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    c_ptrs = c_ptr + rm[:, None].to(tl.int64) * scm + rn[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def _merge(sizes, strides):
    """(size, stride) of consecutive dims viewed as one, or None if they cannot be."""
    dims = [(n, s) for n, s in zip(sizes, strides, strict=False) if n != 1]
    for (_, s0), (n1, s1) in zip(dims, dims[1:], strict=False):
        if s0 != s1 * n1:
            return None
    return math.prod(n for n, _ in dims), (dims[-1][1] if dims else 1)


def linear(input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    N, K = weight.shape
    lead = list(input.shape[:-1])
    out = torch.empty((*lead, N), dtype=input.dtype, device=input.device)
    if out.numel() == 0:
        return out
    rows = _merge(input.shape[:-1], input.stride()[:-1])
    x = input
    if rows is None:  # leading dims that cannot be viewed as one: copy
        x = input.reshape(-1, K)
        rows = (x.shape[0], x.stride(0))
    M, sam = rows
    big = M >= 128 and N >= 128
    bm, bn, bk = (128, 128, 32) if big else (64, 64, 32)
    # float32 must not be rounded to TF32 inside tl.dot. bfloat16 goes through TF32 instead
    # of a bf16 dot: TF32 holds every bfloat16 exactly, so the result is the same, and
    # Triton's CPU interpreter multiplies bf16 operands as raw integers (a bug there).
    precision = "ieee" if input.dtype == torch.float32 else "tf32"
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    _linear_kernel[grid](x, weight, weight if bias is None else bias, out, M, N, K,
                         sam, x.stride(-1), weight.stride(0), weight.stride(1), N,
                         HAS_BIAS=bias is not None, PRECISION=precision,
                         UPCAST=input.dtype == torch.bfloat16, BLOCK_M=bm, BLOCK_N=bn,
                         BLOCK_K=bk, GROUP_M=8, num_warps=8 if big else 4, num_stages=3)
    return out
