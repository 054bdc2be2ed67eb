import torch
import triton
import triton.language as tl


@triton.jit
def _mm_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K, sa_m, sa_k, sb_k, sb_n, sc_m, PRECISION: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    # grouped tile order, so that neighbouring programs share tiles of A in L2
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * tiles_n
    first_m = (pid // group) * GROUP_M
    rows_in_group = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % rows_in_group
    pid_n = (pid % group) // rows_in_group

    rm = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    rn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    rk = tl.arange(0, BLOCK_K).to(tl.int64)
    a_tile = a_ptr + rm[:, None] * sa_m + rk[None, :] * sa_k
    b_tile = b_ptr + rk[:, None] * sb_k + rn[None, :] * sb_n
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_tile, mask=(rm[:, None] < M) & (rk[None, :] + k0 < K), other=0.0)
        b = tl.load(b_tile, mask=(rk[:, None] + k0 < K) & (rn[None, :] < N), other=0.0)
        if PRECISION == "ieee":  # float32: full-precision products, not TF32
            acc = tl.dot(a, b, acc, input_precision="ieee")
        else:  # float16 and bfloat16: tensor cores, float32 accumulation
            acc = tl.dot(a, b, acc)
        a_tile += BLOCK_K * sa_k
        b_tile += BLOCK_K * sb_k
    c_tile = c_ptr + rm[:, None] * sc_m + rn[None, :]
    tl.store(c_tile, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def mm(self: torch.Tensor, mat2: torch.Tensor) -> torch.Tensor:
    M, K = self.shape
    N = mat2.shape[1]
    out = torch.empty((M, N), dtype=self.dtype, device=self.device)
    if M == 0 or N == 0:
        return out
    precision = "ieee" if self.dtype == torch.float32 else "native"
    if precision == "ieee":
        bm, bn, bk, warps, stages = 64, 64, 32, 4, 3
    else:
        bm, bn, bk, warps, stages = 128, 128, 64, 8, 3
    if M <= 64:  # decode-like: short, narrower tiles keep more SMs busy
        bm, bn, warps = max(16, triton.next_power_of_2(M)), 64, 4
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    _mm_kernel[grid](
        self, mat2, out, M, N, K, self.stride(0), self.stride(1), mat2.stride(0),
        mat2.stride(1), out.stride(0), PRECISION=precision, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
        GROUP_M=8, num_warps=warps, num_stages=stages,
    )
    return out
