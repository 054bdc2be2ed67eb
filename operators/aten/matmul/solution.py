import math

import torch
import triton
import triton.language as tl


@triton.jit
def _bmm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sab, sam, sak, sbb, sbk, sbn, scb, scm, scn,
                PRECISION: tl.constexpr, UPCAST: tl.constexpr, BLOCK_M: tl.constexpr,
                BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
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
    c = acc.to(c_ptr.dtype.element_ty)
    c_ptrs = c_ptr + batch * scb + rm[:, None].to(tl.int64) * scm + rn[None, :] * scn
    tl.store(c_ptrs, c, mask=(rm[:, None] < M) & (rn[None, :] < N))


def _merge(sizes, strides):
    """(size, stride) of consecutive dims viewed as one, or None if they cannot be."""
    dims = [(n, s) for n, s in zip(sizes, strides, strict=False) if n != 1]
    for (_, s0), (n1, s1) in zip(dims, dims[1:], strict=False):
        if s0 != s1 * n1:
            return None
    return math.prod(n for n, _ in dims), (dims[-1][1] if dims else 1)


def _gemm(a, b, out, batch, sab, sbb):
    """out[i] = a[i] @ b[i] for i < batch; a (., M, K), b (., K, N), out (batch, M, N)."""
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
    _bmm_kernel[grid](a, b, out, M, N, K, sab, a.stride(-2), a.stride(-1), sbb, b.stride(-2),
                      b.stride(-1), *out.stride(),
                      PRECISION=precision, UPCAST=a.dtype == torch.bfloat16, BLOCK_M=bm,
                      BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, num_warps=8 if big else 4, num_stages=3)


def _batch_view(t, batch_shape):
    """t expanded to batch_shape + its matrix dims, with the batch dims merged into one
    stride (copying t only when they cannot be): (tensor, stride)."""
    t = t.expand(*batch_shape, *t.shape[-2:])
    merged = _merge(t.shape[:-2], t.stride()[:-2])
    if merged is None:
        t = t.reshape(-1, *t.shape[-2:])
        return t, t.stride(0)
    return t, merged[1]


def matmul(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    a = self.unsqueeze(0) if self.ndim == 1 else self
    b = other.unsqueeze(-1) if other.ndim == 1 else other
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    # broadcast the batch dims
    sa, sb = list(a.shape[:-2]), list(b.shape[:-2])
    nb = max(len(sa), len(sb))
    sa, sb = [1] * (nb - len(sa)) + sa, [1] * (nb - len(sb)) + sb
    batch_shape = [max(x, y) if min(x, y) != 0 else 0 for x, y in zip(sa, sb, strict=False)]
    batch = math.prod(batch_shape)
    out = torch.empty((batch, M, N), dtype=self.dtype, device=self.device)
    shape = list(batch_shape)
    if self.ndim > 1:
        shape.append(M)
    if other.ndim > 1:
        shape.append(N)
    if out.numel() == 0:
        return out.view(shape)
    folded = _merge(a.shape[:-1], a.stride()[:-1]) if b.ndim == 2 and a.ndim > 2 else None
    if folded is not None:
        # (..., M, K) @ (K, N): one GEMM with the batch folded into the rows
        rows, srow = folded
        a2 = a.as_strided((1, rows, K), (0, srow, a.stride(-1)))
        _gemm(a2, b, out.view(1, rows, N), 1, 0, 0)
    else:
        a3, sab = _batch_view(a, batch_shape)
        b3, sbb = _batch_view(b, batch_shape)
        _gemm(a3, b3, out, batch, sab, sbb)
    return out.view(shape)
