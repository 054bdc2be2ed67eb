"""Matrix product with 8-bit per-channel quantised weights in AllSpark's "n32k16" layout:
vLLM's `allspark_w8a16_gemm` custom op (vLLM 0.13; Alibaba's AllSpark W8A16 kernel for
Ampere-class GPUs, used for 8-bit GPTQ checkpoints).

    allspark_w8a16_gemm(a, b_qweight, b_scales, b_qzeros, n, group_size, sm_count, sm_version,
                        CUBLAS_M_THRESHOLD, has_zp, n32k16_reorder) -> Tensor

out = a @ W, with W [K, n] dequantised from uint8 codes q with one scale (and optionally
one zero point) per output column:

    W[k, c] = dtype( dtype((q[k, c] - 128) - z[c]) * s[c] )     (z = 0 without zero points)

computed in a's dtype (float16 or bfloat16) as the kernel does: q - 128 is exact, the
subtraction of z and the product with s are each rounded to a's dtype. The product is
accumulated in float32 and rounded once; the result is a new [M, n] tensor of a's dtype.

Arguments:
- `a`: float16 or bfloat16 [M, K], contiguous; K is a multiple of 16.
- `b_qweight`: uint8 [N32, K] with N32 = n rounded up to a multiple of 32, holding q in the
  order `allspark_repack_weight` produces. Read as one flat array R of N32 * K bytes, code
  q[k, c] sits at R[row * 4K + col] with (all divisions integer):
      kq = k % 16, j = c % 16, nr = c % 128,
      lane = (nr // 32) * 8 + ((kq % 8) // 2) * 2 + (nr % 32) // 16,
      row = (c // 128) * 32 + (lane // 8) * 8 + j % 8,
      col = (k // 64) * 256 + ((k % 64) // 16) * 64 + (lane % 8) * 8
            + (kq // 8) * 2 + kq % 2 + (j // 8) * 4.
  (Each 16 x 32 block of codes is laid out as the m16n8k16 tensor-core fragments of one
  warp.) Bytes for padding columns c >= n are zero.
- `b_scales`: [1, N32] of a's dtype; the scale of column c sits at position
  (c // 128) * 128 + ((c % 128) // 32) * 32 + (c % 8) * 4 + (c % 32) // 8.
- `b_qzeros`: None, or [1, N32] of a's dtype in the same order as the scales (zero points
  as floating values); used when has_zp is True.
- `n`: the number of output columns. `group_size` is -1 (per-channel only).
- `sm_count`, `sm_version`, `CUBLAS_M_THRESHOLD`, `n32k16_reorder` (True) tune vLLM's
  dispatch between its fused kernel and dequantise-then-cuBLAS; they do not change the
  result.

The inputs must not be modified. The layout is AllSpark's, the arithmetic an ordinary
dequantise-and-multiply: a Triton kernel can read the codes with the index formula above.
"""

import torch

from kgb.operators import Case
from kgb.vllm.packing import allspark_reorder, allspark_restore, allspark_restore_params

VERSION = 1
# No speed_baseline: vllm is not importable on the GPU host, so the reference is the baseline.

SIGNATURES = '''
def allspark_w8a16_gemm(a: torch.Tensor, b_qweight: torch.Tensor, b_scales: torch.Tensor, b_qzeros: torch.Tensor | None, n: int, group_size: int, sm_count: int, sm_version: int, CUBLAS_M_THRESHOLD: int, has_zp: bool, n32k16_reorder: bool) -> torch.Tensor:
    """vllm::allspark_w8a16_gemm(Tensor a, Tensor b_qweight, Tensor b_scales, Tensor? b_qzeros, SymInt n, SymInt group_size, SymInt sm_count, SymInt sm_version, SymInt CUBLAS_M_THRESHOLD, bool has_zp, bool n32k16_reorder) -> Tensor"""
'''


def _case(name, tag, m, k, n, zp=False, dtype="float16", seed=0):
    return Case(name, tag, dict(m=m, k=k, n=n, zp=zp, dtype=dtype), seed=seed, reduction=k)


CASES = [
    _case("smoke", "smoke", 3, 64, 128),
    _case("smoke-zp-bf16-odd", "smoke", 5, 48, 80, zp=True, dtype="bfloat16", seed=1),
    _case("llama8b-qkv-decode", "check", 1, 4096, 6144),
    _case("llama8b-o-bf16-zp", "check", 16, 4096, 4096, zp=True, dtype="bfloat16"),
    _case("qwen2-7b-down", "check", 33, 18944, 3584),
    _case("qwen2-0.5b-qkv-odd-n", "check", 100, 896, 1152, zp=True),
    _case("unaligned-n-bf16", "check", 7, 272, 200, dtype="bfloat16"),
    _case("llama8b-gate-up-decode", "bench", 1, 4096, 28672),
    _case("llama8b-down-batch-bf16", "bench", 64, 14336, 4096, dtype="bfloat16"),
    _case("qwen2-7b-qkv-prefill", "bench", 2048, 3584, 4608),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    m, k, n = p["m"], p["k"], p["n"]
    dtype = getattr(torch, p["dtype"])
    a = torch.randn(m, k, generator=gen).to(dtype)
    q = torch.randint(0, 256, (k, n), generator=gen, dtype=torch.uint8)
    s = ((0.5 + torch.rand(n, generator=gen)) / 128).to(dtype)
    params = [s]
    if p["zp"]:
        params.append(torch.randint(-8, 9, (n,), generator=gen).to(dtype))
    qr, reordered = allspark_reorder(q, params)
    return dict(
        a=a.to(device), b_qweight=qr.to(device), b_scales=reordered[0].to(device),
        b_qzeros=reordered[1].to(device) if p["zp"] else None, n=n, group_size=-1, sm_count=132,
        sm_version=90, CUBLAS_M_THRESHOLD=1024, has_zp=p["zp"], n32k16_reorder=True,
    )


def reference(a, b_qweight, b_scales, b_qzeros, n, group_size, sm_count, sm_version, CUBLAS_M_THRESHOLD,
              has_zp, n32k16_reorder):
    k = a.shape[1]
    w = (allspark_restore(b_qweight, k, n).to(torch.int32) - 128).to(a.dtype)
    if has_zp:
        w = w - allspark_restore_params(b_qzeros, n)[None, :]
    w = w * allspark_restore_params(b_scales, n)[None, :]
    return (a.float() @ w.float()).to(a.dtype)
