"""Dequantise a GGUF (GGML block-quantised) weight: vLLM's `ggml_dequantize` custom op
(vLLM 0.13).

    ggml_dequantize(W, type, m, n, dtype=None) -> Tensor

`W` is a contiguous uint8 tensor holding m * n / 32 GGML blocks of 32 values (in GGUF
files: [m, n / 32 * block_bytes], row after row). The result is a new tensor [m, n] of
`dtype` (float16 when None; float32 and bfloat16 also occur) whose flat element i is value
i % 32 of block i // 32. This spec covers three GGML types (the op in vLLM also decodes
the K- and IQ-quants, which are not required here):

- type 2, Q4_0, 18 bytes: float16 d (little-endian, bytes 0-1), then 16 bytes qs.
  Value j is d * (nib_j - 8).
- type 3, Q4_1, 20 bytes: float16 d, float16 m, then 16 bytes qs. Value j is d * nib_j + m.
- type 8, Q8_0, 34 bytes: float16 d, then 32 int8 qs. Value j is d * qs[j].

with nib_j = qs[j] & 15 for j < 16 and qs[j - 16] >> 4 for j >= 16 (the low nibbles
hold the first half of the block, the high nibbles the second half).

Rounding, as vLLM's kernel computes in half precision: Q4_0 float16((nib - 8) * d);
Q4_1 float16(float16(nib * d) + m) (two roundings); Q8_0 float16(q * d); the float16
value is then converted to `dtype` (exactly for float32, rounded to nearest for bfloat16).
`W` must not be modified.
"""

import torch

from kgb.operators import Case
from kgb.vllm.ggml import dequantize, random_blocks

VERSION = 1
# No speed_baseline: vllm is not importable on the GPU host, so the reference is the baseline.

SIGNATURES = '''
def ggml_dequantize(W: torch.Tensor, type: int, m: int, n: int, dtype: torch.dtype | None = None) -> torch.Tensor:
    """vllm::ggml_dequantize(Tensor W, int type, SymInt m, SymInt n, ScalarType? dtype) -> Tensor"""
'''

def _case(name, tag, type_id, m, n, dtype=None, seed=0):
    return Case(name, tag, dict(type=type_id, m=m, n=n, dtype=dtype), seed=seed)


CASES = [
    _case("smoke-q4_0", "smoke", 2, 5, 64),
    _case("smoke-q4_1-f32", "smoke", 3, 3, 96, dtype="float32", seed=1),
    _case("smoke-q8_0-bf16", "smoke", 8, 4, 32, dtype="bfloat16", seed=2),
    # GGUF tensors of Llama-3 8B and Qwen2 7B
    _case("llama8b-qkv-q4_0", "check", 2, 6144, 4096),
    _case("llama8b-down-q4_1-bf16", "check", 3, 4096, 14336, dtype="bfloat16"),
    _case("qwen2-7b-up-q8_0-f32", "check", 8, 18944, 3584, dtype="float32"),
    _case("llama8b-embed-q8_0", "check", 8, 1000, 4096),
    _case("odd-rows-q4_0-f32", "check", 2, 77, 160, dtype="float32"),
    _case("llama70b-up-q4_0", "bench", 2, 28672, 8192),
    _case("llama8b-up-q8_0-bf16", "bench", 8, 14336, 4096, dtype="bfloat16"),
    _case("llama8b-down-q4_1", "bench", 3, 4096, 14336),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    w = random_blocks(p["type"], p["m"], p["n"], gen)
    dtype = getattr(torch, p["dtype"]) if p["dtype"] else None
    return dict(W=w.to(device), type=p["type"], m=p["m"], n=p["n"], dtype=dtype)


def reference(W, type, m, n, dtype=None):
    return dequantize(W.reshape(-1), type).reshape(m, n).to(dtype or torch.float16)
