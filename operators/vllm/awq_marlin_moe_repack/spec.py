"""Repack the AWQ-format weights of every expert of a mixture-of-experts layer into
Marlin's tiled layout: vLLM's `awq_marlin_moe_repack` (vLLM 0.13; it runs the
`awq_marlin_repack` kernel once per expert).

    awq_marlin_moe_repack(b_q_weight, perm, size_k, size_n, num_bits, is_a_8bit=False) -> Tensor

A pure permutation of `num_bits`-wide unsigned integers; nothing is dequantised. With
pf = 32 // num_bits values per int32 word (num_bits is 4 or 8, pf 8 or 4):

Input, per expert e (AWQ layout, packed along N with interleaved fields):
- `b_q_weight`: int32 [E, size_k, size_n // pf], contiguous. Value q[e, k, n] is field
  F(n % pf) of word b_q_weight[e, k, n // pf], read as unsigned, where field f means bits
  [f * num_bits, (f + 1) * num_bits) and F = (0, 4, 1, 5, 2, 6, 3, 7) for 4 bits,
  (0, 2, 1, 3) for 8 bits (AWQ stores columns 0, 2, 4, 6, 1, 3, 5, 7 in fields 0..7).
- `perm`: ignored (AWQ has no act-order); the cases pass an empty [E, 0] int32 tensor.
- size_k is a multiple of 16 and size_n a multiple of 64.

Output: a new int32 tensor [E, size_k // 16, size_n * 16 // pf] (= size_n * num_bits // 2
columns). Row kt of expert e holds the 16 x 64 tiles T(kt, nt) = q[e, 16*kt : 16*kt+16,
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
Marlin loads with one 32-bit read per thread (the same layout `gptq_marlin_moe_repack`
produces); the op itself is a plain gather that any GPU can run, so a Triton kernel
computes exactly the same words.

`is_a_8bit` (a layout for 8-bit activations) is False in every case. The inputs must not
be modified.
"""

import torch

from kgb.operators import Case
from kgb.vllm.packing import awq_unpack, marlin_pack

VERSION = 1
# No speed_baseline: vllm is not importable on the GPU host, so the reference is the baseline.

SIGNATURES = '''
def awq_marlin_moe_repack(b_q_weight: torch.Tensor, perm: torch.Tensor, size_k: int, size_n: int, num_bits: int, is_a_8bit: bool = False) -> torch.Tensor:
    """vllm._custom_ops.awq_marlin_moe_repack: torch.ops._C.awq_marlin_repack per expert"""
'''


def _case(name, tag, experts, k, n, bits, seed=0):
    return Case(name, tag, dict(experts=experts, k=k, n=n, bits=bits), seed=seed)


CASES = [
    _case("smoke-4bit", "smoke", 2, 32, 64, 4),
    _case("smoke-8bit", "smoke", 1, 16, 128, 8, seed=1),
    # per-expert shapes of real AWQ MoE models (w13: [hidden, 2 * inter]; w2: [inter, hidden])
    _case("qwen3-30b-w2-4bit", "check", 8, 768, 2048, 4),
    _case("qwen3-30b-w13-4bit", "check", 4, 2048, 1536, 4),
    _case("deepseek-v2-lite-w2-8bit", "check", 4, 1408, 2048, 8),
    _case("deepseek-v2-lite-w13-8bit", "check", 2, 2048, 2816, 8),
    _case("odd-tiles-4bit", "check", 3, 48, 192, 4),
    _case("mixtral-w13-4bit", "bench", 8, 4096, 28672, 4),
    _case("qwen3-30b-w13-4bit-all", "bench", 128, 2048, 1536, 4),
    _case("deepseek-v2-lite-w2-8bit-all", "bench", 64, 1408, 2048, 8),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    e, k, n, bits = p["experts"], p["k"], p["n"], p["bits"]
    # every bit pattern is a valid word: uniform random words are uniform random values
    weight = torch.randint(-(2**31), 2**31, (e, k, n * bits // 32), generator=gen, dtype=torch.int32)
    perm = torch.empty(e, 0, dtype=torch.int32)
    return dict(
        b_q_weight=weight.to(device), perm=perm.to(device), size_k=k, size_n=n,
        num_bits=bits, is_a_8bit=False,
    )


def reference(b_q_weight, perm, size_k, size_n, num_bits, is_a_8bit=False):
    return marlin_pack(awq_unpack(b_q_weight, num_bits), num_bits)
