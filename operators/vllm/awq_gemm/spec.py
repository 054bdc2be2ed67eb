"""Matrix product with 4-bit AWQ-quantised weights: vLLM's `awq_gemm` custom op (vLLM 0.13).

    awq_gemm(_in_feats, _kernel, _scaling_factors, _zeros, split_k_iters) -> Tensor

out = _in_feats @ W, where W [K, N] is dequantised from 4-bit unsigned codes with one
scale and one zero point per group of G consecutive input channels (rows of W).

Arguments (all contiguous):
- `_in_feats`: float16 [M, K] activations. K is a multiple of 32.
- `_kernel`: int32 [K, N // 8], the codes packed along N in AWQ's interleaved order:
  code q[k, n] is field F(n % 8) of word _kernel[k, n // 8], read as unsigned, where
  field f means bits [4f, 4f + 4) and F = (0, 4, 1, 5, 2, 6, 3, 7). (Fields 0..7 of a
  word hold columns 0, 2, 4, 6, 1, 3, 5, 7 of its group of eight.) N is a multiple of 64.
- `_scaling_factors`: float16 [K // G, N]; G = K // _scaling_factors.shape[0], a multiple
  of 32 (128 in most checkpoints).
- `_zeros`: int32 [K // G, N // 8], the 4-bit zero points packed exactly like `_kernel`:
  z[g, n] is field F(n % 8) of word _zeros[g, n // 8].
- `split_k_iters`: how many partial products the reduction is split into (vLLM passes 8).

Dequantisation, as vLLM's kernel does it in half precision:

    W[k, n] = float16((q[k, n] - z[k // G, n]) * s[k // G, n])    (rounded once to float16)

Reduction: the K axis is cut into chunks of 32 rows; chunk c belongs to split c %
split_k_iters. For every split, the products of its chunks are accumulated in float32
and the split's partial sum is rounded to float16; the result is the float32 sum of the
float16 partials, rounded to float16:

    out = float16( sum_s float16( sum_{c in split s} _in_feats[:, chunk c] @ W[chunk c] ) )

The returned tensor is a new float16 [M, N]. Summation order inside a float32 sum is
free; the tolerance allows for it. The inputs must not be modified.
"""

import torch

from kgb.operators import Case
from kgb.vllm.packing import awq_pack, awq_unpack

VERSION = 1
# No speed_baseline: vllm is not importable on the GPU host, so the reference is the baseline.

SIGNATURES = '''
def awq_gemm(_in_feats: torch.Tensor, _kernel: torch.Tensor, _scaling_factors: torch.Tensor, _zeros: torch.Tensor, split_k_iters: int) -> torch.Tensor:
    """vllm::awq_gemm(Tensor _in_feats, Tensor _kernel, Tensor _scaling_factors, Tensor _zeros, SymInt split_k_iters) -> Tensor"""
'''


def _case(name, tag, m, k, n, group=128, split=8, seed=0):
    return Case(name, tag, dict(m=m, k=k, n=n, group=group, split=split), seed=seed, reduction=k)


CASES = [
    _case("smoke", "smoke", 3, 64, 64, group=32, split=2),
    _case("smoke-split8", "smoke", 5, 256, 128, group=64, split=8, seed=1),
    # vLLM calls awq_gemm below 256 tokens (larger batches dequantise, then matmul)
    _case("llama8b-qkv-decode", "check", 1, 4096, 6144),
    _case("llama8b-o", "check", 7, 4096, 4096),
    _case("llama8b-down", "check", 33, 14336, 4096),
    _case("qwen2-7b-up-g64", "check", 16, 3584, 18944, group=64),
    _case("k-not-multiple-of-split", "check", 100, 96, 192, group=32),
    _case("split1", "check", 255, 1024, 320, split=1),
    _case("llama8b-gate-up-decode", "bench", 1, 4096, 28672),
    _case("llama8b-down-batch", "bench", 64, 14336, 4096),
    _case("llama70b-qkv-batch", "bench", 128, 8192, 10240),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    m, k, n, g = p["m"], p["k"], p["n"], p["group"]
    x = torch.randn(m, k, generator=gen).to(torch.float16)
    q = torch.randint(0, 16, (k, n), generator=gen)
    z = torch.randint(0, 16, (k // g, n), generator=gen)
    s = (0.005 + 0.01 * torch.rand(k // g, n, generator=gen)).to(torch.float16)
    return dict(
        _in_feats=x.to(device), _kernel=awq_pack(q, 4).to(device), _scaling_factors=s.to(device),
        _zeros=awq_pack(z, 4).to(device), split_k_iters=p["split"],
    )


def reference(_in_feats, _kernel, _scaling_factors, _zeros, split_k_iters):
    k = _in_feats.shape[1]
    group = k // _scaling_factors.shape[0]
    q = awq_unpack(_kernel, 4)
    z = awq_unpack(_zeros, 4).repeat_interleave(group, dim=0)
    s = _scaling_factors.float().repeat_interleave(group, dim=0)
    w = ((q - z).float() * s).half().float()
    x = _in_feats.float()
    chunk = torch.arange(k, device=x.device) // 32 % split_k_iters
    out = torch.zeros(x.shape[0], w.shape[1], dtype=torch.float32, device=x.device)
    for split in range(split_k_iters):
        in_split = (chunk == split).float()[:, None]  # a mask, not an index: no data-dependent shapes
        out += (x @ (w * in_split)).half().float()
    return out.half()
