"""Matrix product with GPTQ weights in Marlin's layout: vLLM's `gptq_marlin_gemm` custom
op (vLLM 0.13), the GEMM behind most 4- and 8-bit GPTQ checkpoints on NVIDIA GPUs.

    gptq_marlin_gemm(a, c_or_none, b_q_weight, b_bias_or_none, b_scales, a_scales, global_scale,
                     b_zeros_or_none, g_idx_or_none, perm_or_none, workspace, b_type_id,
                     size_m, size_n, size_k, is_k_full, use_atomic_add, use_fp32_reduce,
                     is_zp_float) -> Tensor

out = a' @ W (+ bias), M = size_m, N = size_n, K = size_k. This spec covers the GPTQ
(symmetric) weight types, which need no zero points:

- b_type_id 1125899907892224 (vLLM's scalar type uint4b8): 4-bit codes q, value q - 8;
- b_type_id 1125899923621888 (uint8b128): 8-bit codes q, value q - 128.

Always None in the cases: c_or_none, a_scales, global_scale, b_zeros_or_none (the FP8/FP4,
int8-activation and AWQ-zero-point variants of the op are not part of this spec);
is_k_full is True, use_atomic_add False, is_zp_float False; use_fp32_reduce (True) and
`workspace` (an int32 scratch buffer of vLLM's kernel, zero-filled; leave it unchanged)
do not affect the result.

Arguments:
- `a`: float16 or bfloat16 [M, K], contiguous. K is a multiple of 16 (128 in the cases),
  N a multiple of 64.
- `b_q_weight`: int32 [K / 16, N * 16 / pf] (pf = 32 / bits codes per word), the codes in
  Marlin's tiled layout: row kt holds the 16 x 64 tiles T(kt, nt) = q[16kt : 16kt+16,
  64nt : 64nt+64] one after the other, 1024 / pf words each. Inside a tile, for warp
  w in 0..3 and thread t in 0..31, with rows r[i] = (t % 4) * 2 + (0, 1, 8, 9)[i] and
  column c = w * 16 + t // 4, let v[i] = T[r[i], c] and v[4 + i] = T[r[i], c + 8]. For
  4 bits, word t * 4 + w holds v[0], v[2], v[4], v[6], v[1], v[3], v[5], v[7] in fields
  0..7 (field f = bits [4f, 4f + 4)); for 8 bits, word t * 8 + 2w holds v[0], v[2],
  v[1], v[3] and word t * 8 + 2w + 1 holds v[4], v[6], v[5], v[7] in fields 0..3 (field
  f = bits [8f, 8f + 8)). (This is what `gptq_marlin_repack` produces.)
- `b_scales`: [G, N] of a's dtype, in Marlin's column order. With G > 1 groups (group
  size gs = K / G), inside every chunk of 64 consecutive columns of a row, position p
  holds the scale of column (p % 8) * 8 + p // 8 of the chunk. With G = 1 (one scale
  per column, "channelwise"), inside every chunk of 32 columns position p holds the
  scale of column 2 * (p // 8) + (0, 1, 8, 9, 16, 17, 24, 25)[p % 8].
- `b_bias_or_none`: None or [N] of a's dtype, in the channelwise (chunks of 32) order.
- `g_idx_or_none`, `perm_or_none`: None, or both int32 [K] (GPTQ act-order). perm is the
  order in which the rows of W were packed: row k of the packed weight multiplies column
  perm[k] of `a`, i.e. a'[:, k] = a[:, perm[k]], and g_idx[k] = k // gs is its group
  (g_idx is sorted). Without them, a' = a and row k belongs to group k // gs.

Arithmetic (as Marlin does it, in a's dtype where stated):
- G > 1: W[k, n] = dtype((q[k, n] - bias_q) * s[group(k), n]) rounded once to a's dtype;
  out = dtype(sum_k a'[m, k] * W[k, n] accumulated in float32 [+ bias]).
- G = 1: the scale is applied to the float32 accumulator:
  out = dtype(s[n] * sum_k a'[m, k] * (q[k, n] - bias_q) [+ bias]).
(bias_q is 8 or 128; the optional bias is added in float32 before the final rounding.)

The result is a new [M, N] tensor of a's dtype; the inputs must not be modified.

Marlin is an NVIDIA tensor-core kernel, but what it computes is an ordinary dequantise-
and-multiply; only the weight and scale layouts are Marlin's, and a Triton kernel can
read them with index arithmetic.
"""

import torch

from kgb.operators import Case
from kgb.vllm.packing import marlin_pack, marlin_permute, marlin_unpack, marlin_unpermute

VERSION = 1
# No speed_baseline: vllm is not importable on the GPU host, so the reference is the baseline.

UINT4B8 = 1125899907892224  # vllm.scalar_type.scalar_types.uint4b8.id
UINT8B128 = 1125899923621888  # scalar_types.uint8b128.id
_BITS = {UINT4B8: 4, UINT8B128: 8}

SIGNATURES = '''
def gptq_marlin_gemm(a: torch.Tensor, c_or_none: torch.Tensor | None, b_q_weight: torch.Tensor, b_bias_or_none: torch.Tensor | None, b_scales: torch.Tensor, a_scales: torch.Tensor | None, global_scale: torch.Tensor | None, b_zeros_or_none: torch.Tensor | None, g_idx_or_none: torch.Tensor | None, perm_or_none: torch.Tensor | None, workspace: torch.Tensor, b_type_id: int, size_m: int, size_n: int, size_k: int, is_k_full: bool, use_atomic_add: bool, use_fp32_reduce: bool, is_zp_float: bool) -> torch.Tensor:
    """vllm::gptq_marlin_gemm(Tensor a, Tensor? c_or_none, Tensor b_q_weight, Tensor? b_bias_or_none, Tensor b_scales, Tensor? a_scales, Tensor? global_scale, Tensor? b_zeros_or_none, Tensor? g_idx_or_none, Tensor? perm_or_none, Tensor workspace, int b_type_id, SymInt size_m, SymInt size_n, SymInt size_k, bool is_k_full, bool use_atomic_add, bool use_fp32_reduce, bool is_zp_float) -> Tensor"""
'''


def _case(name, tag, m, k, n, bits=4, group=128, act_order=False, bias=False, dtype="float16", seed=0):
    params = dict(m=m, k=k, n=n, bits=bits, group=group, act_order=act_order, bias=bias, dtype=dtype)
    return Case(name, tag, params, seed=seed, reduction=k)


CASES = [
    _case("smoke-4bit-g32-bias", "smoke", 3, 64, 64, group=32, bias=True),
    _case("smoke-8bit-channel-bias-bf16", "smoke", 2, 32, 64, bits=8, group=-1, bias=True, dtype="bfloat16", seed=1),
    _case("smoke-4bit-actorder-bf16", "smoke", 5, 64, 128, group=32, act_order=True, dtype="bfloat16", seed=2),
    _case("llama8b-qkv-decode", "check", 1, 4096, 6144),
    _case("llama8b-o-actorder-bf16", "check", 16, 4096, 4096, act_order=True, dtype="bfloat16"),
    _case("llama8b-down-8bit", "check", 33, 14336, 4096, bits=8),
    _case("qwen2-7b-up-channel-bias", "check", 100, 3584, 18944, group=-1, bias=True),
    _case("odd-m-8bit-actorder-bf16", "check", 77, 1024, 320, bits=8, act_order=True, dtype="bfloat16"),
    _case("llama8b-gate-up-decode", "bench", 1, 4096, 28672),
    _case("llama8b-down-batch-bf16", "bench", 64, 14336, 4096, dtype="bfloat16"),
    _case("llama70b-qkv-prefill-actorder", "bench", 2048, 8192, 10240, act_order=True),
    _case("llama8b-o-8bit", "bench", 16, 4096, 4096, bits=8),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    m, k, n, bits = p["m"], p["k"], p["n"], p["bits"]
    dtype = getattr(torch, p["dtype"])
    gs = k if p["group"] == -1 else p["group"]
    groups = k // gs
    a = torch.randn(m, k, generator=gen).to(dtype)
    q = torch.randint(0, 2**bits, (k, n), generator=gen)
    s = ((0.5 + torch.rand(groups, n, generator=gen)) * 2.0 / 2**bits).to(dtype)
    g_idx = perm = None
    if p["act_order"]:
        order = torch.argsort((torch.arange(k) // gs)[torch.randperm(k, generator=gen)], stable=True)
        perm = order.to(torch.int32)
        g_idx = (torch.arange(k) // gs).to(torch.int32)  # the sorted group of each packed row
        # the packed rows follow perm, as gptq_marlin_repack arranges them (int32: the codes
        # fit, and half the bytes to move)
        q = q.to(torch.int32).index_select(0, order)
    bias = torch.randn(n, generator=gen).to(dtype) if p["bias"] else None
    to = lambda t: None if t is None else t.to(device)  # noqa: E731
    return dict(
        a=a.to(device), c_or_none=None, b_q_weight=marlin_pack(q, bits).to(device),
        b_bias_or_none=to(None if bias is None else marlin_permute(bias, True)),
        b_scales=marlin_permute(s, groups == 1).to(device), a_scales=None, global_scale=None,
        b_zeros_or_none=None, g_idx_or_none=to(g_idx), perm_or_none=to(perm),
        workspace=torch.zeros(4 * 132, dtype=torch.int32, device=device),
        b_type_id=UINT4B8 if bits == 4 else UINT8B128, size_m=m, size_n=n, size_k=k, is_k_full=True,
        use_atomic_add=False, use_fp32_reduce=True, is_zp_float=False,
    )


def reference(a, c_or_none, b_q_weight, b_bias_or_none, b_scales, a_scales, global_scale, b_zeros_or_none,
              g_idx_or_none, perm_or_none, workspace, b_type_id, size_m, size_n, size_k, is_k_full,
              use_atomic_add, use_fp32_reduce, is_zp_float):
    bits = _BITS[b_type_id]
    groups = b_scales.shape[0]
    w_int = (marlin_unpack(b_q_weight, bits, size_k, size_n) - 2 ** (bits - 1)).float()
    s = marlin_unpermute(b_scales, groups == 1).float()
    x = a.float() if perm_or_none is None else a.float()[:, perm_or_none.long()]
    if groups == 1:
        out = (x @ w_int) * s
    else:
        group = torch.arange(size_k, device=a.device) // (size_k // groups)
        if g_idx_or_none is not None:
            group = g_idx_or_none.long()
        w = (w_int * s[group]).to(a.dtype).float()
        out = x @ w
    if b_bias_or_none is not None:
        out = out + marlin_unpermute(b_bias_or_none, True).float()
    return out.to(a.dtype)
