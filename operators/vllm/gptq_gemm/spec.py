"""Matrix product with GPTQ-quantised weights: vLLM's `gptq_gemm` custom op (vLLM 0.13).

    gptq_gemm(a, b_q_weight, b_gptq_qzeros, b_gptq_scales, b_g_idx, use_exllama, use_v2_format, bit) -> Tensor

out = a @ W, where W [K, N] is dequantised from `bit`-wide unsigned codes (bit is 4 or 8;
pf = 32 // bit codes per int32 word; field f of a word means bits [f * bit, (f+1) * bit))
with one scale and one zero point per group of gs = K // groups rows of W.

Arguments (all contiguous):
- `a`: float16 [M, K].
- `b_gptq_scales`: float16 [groups, N].
- `b_gptq_qzeros`: int32 [groups, N // pf]; stored zero zs[g, n] is field n % pf of word
  b_gptq_qzeros[g, n // pf]. The zero point used is z = zs + 1 (GPTQ "v1" checkpoints
  store zero - 1) when use_v2_format is False, and z = zs when it is True.
- `b_q_weight`: int32 [K // pf, N], packed along K. Its meaning depends on `use_exllama`:
  * use_exllama=False: plain GPTQ layout, code q[k, n] = field k % pf of word
    b_q_weight[k // pf, n]; `b_g_idx` is int32 [K] and row k belongs to group b_g_idx[k].
  * use_exllama=True: the weight has been through `gptq_shuffle(b_q_weight, perm, bit)`:
    its rows are in "sequential" order r = 0..K-1, and for 4 bits the fields of each
    word are reordered: field p of word [r8, n] holds sequential row
    8 * r8 + (0, 2, 4, 6, 1, 3, 5, 7)[p] (8-bit words keep the plain order, field p =
    row 4 * r8 + p). Sequential row r belongs to group r // gs. `b_g_idx` is either
    empty (int32 [0]: sequential row r is row r of W) or the int32 [K] permutation that
    was given to gptq_shuffle (act-order): sequential row r is row b_g_idx[r] of W.

Dequantisation, as vLLM's kernels do it in half precision, for the code q of a row in
group g:

    W[row, n] = float16((q - z[g, n]) * b_gptq_scales[g, n])      (rounded once)

The product is accumulated in float32 and rounded once to float16 (vLLM's kernels
accumulate partly in half precision; this spec asks for the float32 result). The result
is a new float16 [M, N]; the inputs must not be modified.
"""

import torch

from kgb.operators import Case
from kgb.vllm.packing import (
    exllama_pack,
    exllama_unshuffle,
    gptq_pack_weight,
    gptq_unpack_weight,
    pack_columns,
    unpack_columns,
)

VERSION = 1
# No speed_baseline: vllm is not importable on the GPU host, so the reference is the baseline.

SIGNATURES = '''
def gptq_gemm(a: torch.Tensor, b_q_weight: torch.Tensor, b_gptq_qzeros: torch.Tensor, b_gptq_scales: torch.Tensor, b_g_idx: torch.Tensor, use_exllama: bool, use_v2_format: bool, bit: int) -> torch.Tensor:
    """vllm::gptq_gemm(Tensor a, Tensor b_q_weight, Tensor b_gptq_qzeros, Tensor b_gptq_scales, Tensor b_g_idx, bool use_exllama, bool use_v2_format, int bit) -> Tensor"""
'''


def _case(name, tag, m, k, n, bits=4, group=128, exllama=True, act_order=False, v2=False, seed=0):
    params = dict(m=m, k=k, n=n, bits=bits, group=group, exllama=exllama, act_order=act_order, v2=v2)
    return Case(name, tag, params, seed=seed, reduction=k)


CASES = [
    _case("smoke-exllama-4bit", "smoke", 3, 64, 32, group=32),
    _case("smoke-exllama-actorder-4bit", "smoke", 2, 64, 24, group=32, act_order=True, seed=1),
    _case("smoke-gptq-8bit-v2", "smoke", 4, 32, 16, bits=8, group=16, exllama=False, v2=True, seed=2),
    _case("smoke-exllama-8bit-actorder", "smoke", 2, 32, 8, bits=8, group=32, act_order=True, seed=3),
    _case("llama8b-qkv-decode", "check", 1, 4096, 6144),
    _case("llama8b-o-actorder", "check", 16, 4096, 4096, act_order=True),
    _case("llama8b-down-8bit", "check", 9, 14336, 4096, bits=8),
    _case("qwen2-7b-up-gptq-actorder", "check", 33, 3584, 18944, exllama=False, act_order=True),
    _case("per-channel-v2", "check", 65, 1024, 264, group=1024, v2=True),
    _case("prefill-8bit-gptq", "check", 300, 2048, 512, bits=8, group=64, exllama=False),
    _case("llama8b-gate-up-decode", "bench", 1, 4096, 28672),
    _case("llama8b-down-batch-actorder", "bench", 32, 14336, 4096, act_order=True),
    _case("llama70b-qkv-prefill", "bench", 2048, 8192, 10240),
    _case("llama8b-o-8bit", "bench", 16, 4096, 4096, bits=8),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    m, k, n, bits, gs = p["m"], p["k"], p["n"], p["bits"], p["group"]
    groups = k // gs
    a = torch.randn(m, k, generator=gen).to(torch.float16)
    q = torch.randint(0, 2**bits, (k, n), generator=gen)
    zs = torch.randint(0, 2**bits - 1, (groups, n), generator=gen)  # stored zeros; +1 stays in range
    s = ((0.5 + torch.rand(groups, n, generator=gen)) * 2.0 / 2**bits).to(torch.float16)
    g_idx = torch.arange(k) // gs
    if p["act_order"]:
        g_idx = g_idx[torch.randperm(k, generator=gen)]
    if p["exllama"]:
        perm = torch.argsort(g_idx, stable=True).to(torch.int32) if p["act_order"] else torch.empty(0, dtype=torch.int32)
        weight, index = exllama_pack(q, perm, bits), perm
    else:
        weight, index = gptq_pack_weight(q, bits), g_idx.to(torch.int32)
    return dict(
        a=a.to(device), b_q_weight=weight.to(device), b_gptq_qzeros=pack_columns(zs, bits).to(device),
        b_gptq_scales=s.to(device), b_g_idx=index.to(device), use_exllama=p["exllama"],
        use_v2_format=p["v2"], bit=bits,
    )


def reference(a, b_q_weight, b_gptq_qzeros, b_gptq_scales, b_g_idx, use_exllama, use_v2_format, bit):
    k = a.shape[1]
    groups = b_gptq_scales.shape[0]
    z = unpack_columns(b_gptq_qzeros, bit) + (0 if use_v2_format else 1)
    s = b_gptq_scales.float()
    if use_exllama:
        q = exllama_unshuffle(b_q_weight, bit)
        group = torch.arange(k, device=a.device) // (k // groups)
    else:
        q = gptq_unpack_weight(b_q_weight, bit)
        group = b_g_idx.long()
    w = ((q - z[group]).float() * s[group]).half()
    if use_exllama and b_g_idx.numel() > 0:
        w = torch.empty_like(w).index_copy_(0, b_g_idx.long(), w)
    return (a.float() @ w.float()).half()
