import triton
import triton.language as tl


@triton.jit
def _gemm_kernel(
    x_ptr, y_ptr, c_ptr, M, N, K, alpha, beta,
    sx_m, sx_k, sy_k, sy_n, sc_m, sc_n,
    BETA_ZERO: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    # out[M, N] = alpha * X[M, K] @ Y[K, N] + beta * out, every operand through its strides.
    # Grouped tile order, so that neighbouring programs share tiles of X in L2.
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
    x_tile = x_ptr + rm[:, None] * sx_m + rk[None, :] * sx_k
    y_tile = y_ptr + rk[:, None] * sy_k + rn[None, :] * sy_n
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k0 in range(0, K, BLOCK_K):
        x = tl.load(x_tile, mask=(rm[:, None] < M) & (rk[None, :] + k0 < K), other=0.0)
        y = tl.load(y_tile, mask=(rk[:, None] + k0 < K) & (rn[None, :] < N), other=0.0)
        # full float32 products: TF32 would miss the float32 tolerance
        acc = tl.dot(x, y, acc, input_precision="ieee")
        x_tile += BLOCK_K * sx_k
        y_tile += BLOCK_K * sy_k

    c_tile = c_ptr + rm[:, None] * sc_m + rn[None, :] * sc_n
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    out = alpha * acc
    if not BETA_ZERO:  # beta == 0: C is never read, so NaN in it cannot leak
        out += beta * tl.load(c_tile, mask=mask, other=0.0)
    tl.store(c_tile, out, mask=mask)


def cublasSgemm_v2(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc) -> None:
    if m <= 0 or n <= 0:
        return
    # Strides of op(A)[i, p] and op(B)[p, j] in column-major storage.
    sa_i, sa_p = (1, lda) if transa == "N" else (lda, 1)
    sb_p, sb_j = (1, ldb) if transb == "N" else (ldb, 1)
    # Column-major C = op(A) op(B) is row-major C^T = op(B)^T op(A)^T: computing C^T puts
    # the contiguous dimensions where the kernel reads fastest in the common 'N' cases.
    # Tiles measured on an H200: 64x128 where op(A)^T is row-contiguous; 128x128 with 8
    # warps where it is K-contiguous ('T'), the slower layout for Triton's float32 dot.
    bm, bn, bk, warps = (64, 128, 32, 4) if sa_i == 1 else (128, 128, 32, 8)
    grid = (triton.cdiv(n, bm) * triton.cdiv(m, bn),)
    _gemm_kernel[grid](
        B, A, C, n, m, max(k, 0), float(alpha), float(beta),
        sb_j, sb_p, sa_p, sa_i, ldc, 1,
        BETA_ZERO=beta == 0, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8,
        num_warps=warps, num_stages=3,
    )  # fmt: skip
