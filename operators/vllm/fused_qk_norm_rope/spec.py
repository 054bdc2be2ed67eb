"""Per-head RMS normalisation of the queries and keys followed by rotary position
embedding, in place in a fused qkv tensor (Qwen3-style QK-norm): vLLM's
`fused_qk_norm_rope` custom op (vLLM 0.13).

    fused_qk_norm_rope(qkv, num_heads_q, num_heads_k, num_heads_v, head_dim, eps,
                       q_weight, k_weight, cos_sin_cache, is_neox, position_ids) -> None

`qkv` is [num_tokens, (num_heads_q + num_heads_k + num_heads_v) * head_dim]: each row
holds num_heads_q query heads, then num_heads_k key heads, then num_heads_v value heads,
head_dim elements each. Every query and key head x (value heads are left unchanged) of
token t becomes, all in float32:

    inv_rms = 1 / sqrt(sum(x * x) / head_dim + eps)
    y[j] = x[j] * (inv_rms * w[j])              # w = q_weight for queries, k_weight for keys
    then rotary embedding of the whole head (rot_dim = head_dim) at position
    p = position_ids[t], with half = head_dim // 2, cos = cos_sin_cache[p, :half],
    sin = cos_sin_cache[p, half:]:
      is_neox=True:  pairs (y[i], y[i + half]) for i < half
      is_neox=False: pairs (y[2i], y[2i + 1]) for i < half
      each pair (a, b) with angle i becomes (a * cos[i] - b * sin[i], b * cos[i] + a * sin[i])

and is rounded once to qkv's dtype and written back. Unlike vLLM's `rms_norm`, the
normalised value is not rounded before the weight or before the rotation.

- `qkv`: float16 or bfloat16, contiguous; updated in place.
- `num_heads_q`, `num_heads_k`, `num_heads_v`, `head_dim`: Python ints; head_dim is 64,
  128 or 256.
- `eps`: a Python float.
- `q_weight`, `k_weight`: [head_dim], qkv's dtype.
- `cos_sin_cache`: [max_position, head_dim] (cosines then sines), float32 or qkv's dtype.
- `is_neox`: a Python bool.
- `position_ids`: int64 [num_tokens], values in [0, max_position).
Inputs other than qkv are not modified.
"""

import torch

from kgb.operators import Case
from kgb.vllm.attention import rope_cos_sin_cache

VERSION = 1
# Speed baseline: the reference below. vLLM's own kernel would be the fairer baseline, but
# vllm is not importable on the GPU host, so timings compare against PyTorch.

SIGNATURES = '''
def fused_qk_norm_rope(
    qkv: torch.Tensor,
    num_heads_q: int,
    num_heads_k: int,
    num_heads_v: int,
    head_dim: int,
    eps: float,
    q_weight: torch.Tensor,
    k_weight: torch.Tensor,
    cos_sin_cache: torch.Tensor,
    is_neox: bool,
    position_ids: torch.Tensor,
) -> None:
    """vllm::fused_qk_norm_rope(Tensor! qkv, int num_heads_q, int num_heads_k, int num_heads_v,
    int head_dim, float eps, Tensor q_weight, Tensor k_weight, Tensor cos_sin_cache,
    bool is_neox, Tensor position_ids) -> ()"""
'''

INOUT_ARGS = ("qkv",)


def _case(name, tag, tokens, hq, hk, hv, d, dtype, neox=True, cache_dtype="float32", max_pos=4096,
          seed=0):
    params = dict(tokens=tokens, hq=hq, hk=hk, hv=hv, d=d, dtype=dtype, neox=neox,
                  cache_dtype=cache_dtype, max_pos=max_pos)
    return Case(name, tag, params, seed=seed, reduction=d)


CASES = [
    _case("smoke-bf16-neox", "smoke", 5, 4, 2, 2, 64, "bfloat16"),
    _case("smoke-f16-gptj-f16-cache", "smoke", 3, 2, 1, 1, 128, "float16", neox=False,
          cache_dtype="float16", seed=1),
    _case("qwen3-8b", "check", 77, 32, 8, 8, 128, "bfloat16", max_pos=40960),
    _case("qwen3-30b-a3b-tp2", "check", 33, 16, 2, 2, 128, "bfloat16", cache_dtype="bfloat16"),
    _case("qwen3-32b-f16", "check", 19, 64, 8, 8, 128, "float16"),
    _case("gptj-style-hd128", "check", 41, 16, 4, 4, 128, "bfloat16", neox=False),
    _case("hd256-gemma3", "check", 13, 8, 4, 4, 256, "bfloat16"),
    _case("hd64-gptj-f16", "check", 29, 12, 12, 12, 64, "float16", neox=False),
    _case("one-token", "check", 1, 32, 8, 8, 128, "bfloat16"),
    _case("qwen3-8b-prefill-bench", "bench", 8192, 32, 8, 8, 128, "bfloat16", max_pos=40960),
    _case("qwen3-32b-tp4-prefill-bench", "bench", 8192, 16, 2, 2, 128, "bfloat16"),
    _case("qwen3-8b-decode-bench", "bench", 256, 32, 8, 8, 128, "bfloat16"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    t, d = p["tokens"], p["d"]
    heads = p["hq"] + p["hk"] + p["hv"]
    qkv = (torch.randn(t, heads * d, generator=gen) * 2).to(dtype).to(device)
    q_weight = (1.0 + 0.3 * torch.randn(d, generator=gen)).to(dtype).to(device)
    k_weight = (1.0 + 0.3 * torch.randn(d, generator=gen)).to(dtype).to(device)
    positions = torch.randint(0, p["max_pos"], (t,), generator=gen, dtype=torch.int64).to(device)
    cache = rope_cos_sin_cache(p["max_pos"], d, getattr(torch, p["cache_dtype"]), base=1e6).to(device)
    return dict(qkv=qkv, num_heads_q=p["hq"], num_heads_k=p["hk"], num_heads_v=p["hv"], head_dim=d,
                eps=1e-6, q_weight=q_weight, k_weight=k_weight, cos_sin_cache=cache,
                is_neox=p["neox"], position_ids=positions)


def reference(qkv, num_heads_q, num_heads_k, num_heads_v, head_dim, eps, q_weight, k_weight,
              cos_sin_cache, is_neox, position_ids):
    heads = qkv.view(qkv.shape[0], -1, head_dim)
    qk = heads[:, :num_heads_q + num_heads_k].float()
    inv_rms = torch.rsqrt(qk.pow(2).mean(dim=-1, keepdim=True) + eps)
    w = torch.cat([q_weight.float().expand(num_heads_q, head_dim),
                   k_weight.float().expand(num_heads_k, head_dim)])
    y = qk * (inv_rms * w)
    half = head_dim // 2
    cos_sin = cos_sin_cache[position_ids].float()
    cos, sin = cos_sin[:, None, :half], cos_sin[:, None, half:]
    if is_neox:
        a, b = y[..., :half], y[..., half:]
        out = torch.cat([a * cos - b * sin, b * cos + a * sin], dim=-1)
    else:
        a, b = y[..., 0::2], y[..., 1::2]
        out = torch.stack([a * cos - b * sin, b * cos + a * sin], dim=-1).flatten(-2)
    heads[:, :num_heads_q + num_heads_k] = out.to(qkv.dtype)
