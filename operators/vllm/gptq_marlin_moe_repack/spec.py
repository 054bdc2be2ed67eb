"""Repack the GPTQ-format weights of every expert of a mixture-of-experts layer into
Marlin's tiled layout: vLLM's `gptq_marlin_moe_repack` (vLLM 0.13; it runs the
`gptq_marlin_repack` kernel once per expert).

    gptq_marlin_moe_repack(b_q_weight, perm, size_k, size_n, num_bits, is_a_8bit=False) -> Tensor

A pure permutation of `num_bits`-wide unsigned integers; nothing is dequantised. With
pf = 32 // num_bits values per int32 word (num_bits is 4 or 8, pf 8 or 4):

Input, per expert e (GPTQ layout, packed along K):
- `b_q_weight`: int32 [E, size_k // pf, size_n], contiguous. Value q[e, k, n] is bits
  [(k % pf) * num_bits, (k % pf + 1) * num_bits) of word b_q_weight[e, k // pf, n],
  read as unsigned.
- `perm`: int32 [E, size_k] (GPTQ act-order: a permutation of 0..size_k-1 per expert) or
  an empty [E, 0] tensor (no reordering). With a permutation, row k of the repacked
  weight is row perm[e, k] of the input: q'[e, k, n] = q[e, perm[e, k], n]. Without,
  q' = q.
- size_k is a multiple of 16 and size_n a multiple of 64.

Output: a new int32 tensor [E, size_k // 16, size_n * 16 // pf] (= size_n * num_bits // 2
columns). Row kt of expert e holds the 16 x 64 tiles T(kt, nt) = q'[e, 16*kt : 16*kt+16,
64*nt : 64*nt+64] for nt = 0, 1, ... one after the other, each tile taking
wpt = 1024 // pf consecutive words (128 for 4 bits, 256 for 8 bits). Inside a tile, for
warp w in 0..3 and thread t in 0..31, let

    rows r[0..3] = (t % 4) * 2 + (0, 1, 8, 9),   column c = w * 16 + t // 4
    v[i] = T[r[i], c],  v[4 + i] = T[r[i], c + 8]         (i = 0..3)

- 4 bits: word t * 4 + w of the tile holds, in fields 0..7 (field i = bits [4i, 4i+4)),
  the values v[0], v[2], v[4], v[6], v[1], v[3], v[5], v[7].
- 8 bits: word t * 8 + 2w holds v[0], v[2], v[1], v[3] in fields 0..3 (field i = bits
  [8i, 8i+8)) and word t * 8 + 2w + 1 holds v[4], v[6], v[5], v[7].

This is the register fragment of an NVIDIA m16n8k16 tensor-core instruction, which
Marlin loads with one 32-bit read per thread; the op itself is a plain gather that any
GPU can run, so a Triton kernel computes exactly the same words.

`is_a_8bit` (a layout for 8-bit activations) is False in every case. The inputs must not
be modified.
"""

import torch

from kgb.operators import Case
from kgb.vllm.packing import marlin_pack, unpack_fields

VERSION = 1
# No speed_baseline: vllm is not importable on the GPU host, so the reference is the baseline.

SIGNATURES = '''
def gptq_marlin_moe_repack(b_q_weight: torch.Tensor, perm: torch.Tensor, size_k: int, size_n: int, num_bits: int, is_a_8bit: bool = False) -> torch.Tensor:
    """vllm._custom_ops.gptq_marlin_moe_repack: torch.ops._C.gptq_marlin_repack per expert"""
'''


def _case(name, tag, experts, k, n, bits, act_order, seed=0):
    params = dict(experts=experts, k=k, n=n, bits=bits, act_order=act_order)
    return Case(name, tag, params, seed=seed)


CASES = [
    _case("smoke-4bit-perm", "smoke", 2, 32, 64, 4, True),
    _case("smoke-8bit", "smoke", 1, 16, 128, 8, False, seed=1),
    # per-expert shapes of real MoE models (w13: [hidden, 2 * inter]; w2: [inter, hidden])
    _case("qwen3-30b-w2-4bit", "check", 8, 768, 2048, 4, False),
    _case("qwen3-30b-w13-4bit-perm", "check", 4, 2048, 1536, 4, True),
    _case("deepseek-v2-lite-w2-8bit", "check", 4, 1408, 2048, 8, False),
    _case("deepseek-v2-lite-w13-8bit-perm", "check", 2, 2048, 2816, 8, True),
    _case("odd-tiles-4bit", "check", 3, 48, 192, 4, False),
    _case("mixtral-w13-4bit", "bench", 8, 4096, 28672, 4, False),
    _case("qwen3-30b-w13-4bit-perm-all", "bench", 128, 2048, 1536, 4, True),
    _case("deepseek-v2-lite-w2-8bit-all", "bench", 64, 1408, 2048, 8, False),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    e, k, n, bits = p["experts"], p["k"], p["n"], p["bits"]
    # every bit pattern is a valid word: uniform random words are uniform random values
    weight = torch.randint(-(2**31), 2**31, (e, k * bits // 32, n), generator=gen, dtype=torch.int32)
    if p["act_order"]:
        perm = torch.stack([torch.randperm(k, generator=gen) for _ in range(e)]).to(torch.int32)
    else:
        perm = torch.empty(e, 0, dtype=torch.int32)
    return dict(
        b_q_weight=weight.to(device), perm=perm.to(device), size_k=k, size_n=n,
        num_bits=bits, is_a_8bit=False,
    )


def reference(b_q_weight, perm, size_k, size_n, num_bits, is_a_8bit=False):
    q = unpack_fields(b_q_weight.transpose(1, 2), num_bits).transpose(1, 2)  # [E, K, N], GPTQ packs along K
    if perm.shape[-1] > 0:
        q = q.gather(1, perm.long()[:, :, None].expand(-1, -1, size_n))
    return marlin_pack(q, num_bits)
