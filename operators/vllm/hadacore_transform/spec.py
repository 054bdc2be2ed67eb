"""Normalised Walsh-Hadamard transform of the last dimension: vLLM's `hadacore_transform`
custom op (vLLM 0.13), used by compressed-tensors checkpoints that rotate activations
(QuaRot / SpinQuant-style online Hadamard transforms) before quantising them.

    hadacore_transform(x, inplace) -> Tensor

With n = x.shape[-1] (a power of two, 2 <= n <= 32768) and the Sylvester Hadamard matrix

    H[i, j] = (-1) ** popcount(i & j)        (0 <= i, j < n; H = [[1, 1], [1, -1]] (x) ... )

every row v (last dimension) of x becomes

    y = (v @ H) / sqrt(n)

(H is symmetric and H @ H = n I, so the op is its own inverse). The sum is computed in
float32 from the exact inputs and rounded once to x's dtype; the published tolerance of
the dtype applies (reduction = n).

- `x`: float16 or bfloat16, contiguous, shape [..., n].
- `inplace=True`: x is overwritten with the result, which is also returned (x itself or a
  tensor equal to it). `inplace=False`: the result is returned in a new tensor and x is
  left unchanged. (vLLM 0.13's CUDA kernel writes into x even with inplace=False, and
  then returns an unwritten buffer; this task asks for the documented behaviour.)

Why this is in a Triton benchmark: vLLM's kernel (HadaCore) is written for NVIDIA tensor
cores with hand-laid 16x16 Hadamard fragments; what it computes is the transform above,
which Triton can express with tl.dot on Kronecker factors of H (H_n = H_a (x) H_b for
n = a * b) or with butterflies.

Speed baseline: the reference below (vllm is not importable on the GPU host).
"""

import math

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def hadacore_transform(x: torch.Tensor, inplace: bool) -> torch.Tensor:
    """vllm::hadacore_transform(Tensor! x, bool inplace) -> Tensor"""
'''

INOUT_ARGS = ("x",)


def _case(name, tag, shape, dtype, inplace=True, seed=0):
    return Case(name, tag, dict(shape=shape, dtype=dtype, inplace=inplace), seed=seed, reduction=shape[-1])


CASES = [
    _case("smoke-n8-f16", "smoke", (5, 8), "float16"),
    _case("smoke-n64-bf16-copy", "smoke", (3, 64), "bfloat16", inplace=False, seed=1),
    _case("smoke-n512-f16", "smoke", (2, 512), "float16", seed=2),
    _case("n2-bf16", "check", (7, 2), "bfloat16"),
    _case("head-dim-128-f16", "check", (33, 32, 128), "float16"),
    _case("llama3-8b-hidden-bf16", "check", (17, 4096), "bfloat16"),
    _case("n1024-copy-f16", "check", (9, 1024), "float16", inplace=False),
    _case("n256-bf16", "check", (100, 256), "bfloat16"),
    _case("n32768-f16", "check", (2, 32768), "float16"),
    _case("n16-odd-rows-bf16", "check", (333, 16), "bfloat16"),
    _case("llama3-8b-prefill-bf16", "bench", (8192, 4096), "bfloat16"),
    _case("llama3-8b-down-16k-f16", "bench", (4096, 16384), "float16"),
    _case("heads-128-bf16", "bench", (4096, 32, 128), "bfloat16"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    x = torch.randn(p["shape"], generator=gen).to(getattr(torch, p["dtype"])).to(device)
    return dict(x=x, inplace=p["inplace"])


def walsh_hadamard(v: torch.Tensor) -> torch.Tensor:
    """v @ H for the rows of v [rows, n] (float32): log2(n) butterfly stages, each pairing
    index i with i + h inside blocks of 2h (Sylvester order)."""
    rows, n = v.shape
    h = 1
    while h < n:
        pairs = v.reshape(rows, n // (2 * h), 2, h)
        a, b = pairs[:, :, 0], pairs[:, :, 1]
        v = torch.stack([a + b, a - b], dim=2).reshape(rows, n)
        h *= 2
    return v


def reference(x, inplace):
    n = x.shape[-1]
    y = walsh_hadamard(x.float().reshape(-1, n)) * (1.0 / math.sqrt(n))
    y = y.reshape(x.shape).to(x.dtype)
    if inplace:
        x.copy_(y)
        return x
    return y
