"""Rearrange a GPTQ weight in place into the layout of the exllama GEMM kernels: vLLM's
`gptq_shuffle` custom op (vLLM 0.13), run once when a GPTQ checkpoint is loaded.

    gptq_shuffle(q_weight, q_perm, bit) -> None

A pure permutation of `bit`-wide unsigned integers (bit is 4 or 8; pf = 32 // bit values
per int32 word); nothing is dequantised.

- `q_weight`: int32 [K // pf, N], contiguous, GPTQ layout: value q[k, n] is field k % pf
  of word q_weight[k // pf, n], read as unsigned, where field f means bits
  [f * bit, (f + 1) * bit). It is overwritten with the result.
- `q_perm`: int32 [K], a permutation of 0..K-1 (GPTQ act-order: vLLM passes
  argsort(g_idx)), or an empty int32 tensor [0] for "no reordering".

Two steps, the second on the result of the first:
1. Row reordering (only with a permutation): q'[k, n] = q[q_perm[k], n]; without one
   q' = q.
2. Field reordering inside each word (only for 4 bits): the word holding rows
   8r .. 8r+7 of q' stores, in fields 0..7, rows 8r + (0, 2, 4, 6, 1, 3, 5, 7):
   field p holds q'[8r + (p % 4) * 2 + p // 4, n]. (exllama's dequantiser then extracts
   two values at once from bits 0-3 and 16-19.) 8-bit words keep the GPTQ order.

The result has the shape of the input: q_weight[r, n] after the call is the word packed
from those values. K is a multiple of 32 and, for 8 bits, N is even. `q_perm` must not be
modified.
"""

import torch

from kgb.operators import Case
from kgb.vllm.packing import exllama_shuffle

VERSION = 1
# No speed_baseline: vllm is not importable on the GPU host, so the reference is the baseline.

SIGNATURES = '''
def gptq_shuffle(q_weight: torch.Tensor, q_perm: torch.Tensor, bit: int) -> None:
    """vllm::gptq_shuffle(Tensor! q_weight, Tensor q_perm, int bit) -> ()"""
'''

INOUT_ARGS = ("q_weight",)


def _case(name, tag, k, n, bits, act_order, seed=0):
    return Case(name, tag, dict(k=k, n=n, bits=bits, act_order=act_order), seed=seed)


CASES = [
    _case("smoke-4bit-perm", "smoke", 64, 24, 4, True),
    _case("smoke-8bit", "smoke", 32, 16, 8, False, seed=1),
    _case("smoke-4bit", "smoke", 32, 8, 4, False, seed=2),
    # Llama-3 8B projections ([in_features, out_features])
    _case("llama8b-qkv-4bit-perm", "check", 4096, 6144, 4, True),
    _case("llama8b-down-4bit", "check", 14336, 4096, 4, False),
    _case("llama8b-o-8bit-perm", "check", 4096, 4096, 8, True),
    _case("qwen2-7b-up-8bit", "check", 3584, 18944, 8, False),
    _case("narrow-4bit-perm", "check", 96, 100, 4, True),
    _case("llama70b-up-4bit-perm", "bench", 8192, 28672, 4, True),
    _case("llama70b-down-4bit", "bench", 28672, 8192, 4, False),
    _case("llama8b-up-8bit-perm", "bench", 4096, 14336, 8, True),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    k, n, bits = p["k"], p["n"], p["bits"]
    # every bit pattern is a valid word: uniform random words are uniform random values
    weight = torch.randint(-(2**31), 2**31, (k * bits // 32, n), generator=gen, dtype=torch.int32)
    if p["act_order"]:
        perm = torch.randperm(k, generator=gen).to(torch.int32)
    else:
        perm = torch.empty(0, dtype=torch.int32)
    return dict(q_weight=weight.to(device), q_perm=perm.to(device), bit=bits)


def reference(q_weight, q_perm, bit):
    q_weight.copy_(exllama_shuffle(q_weight, q_perm, bit))
