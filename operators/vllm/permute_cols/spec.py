"""Column permutation of a half-precision matrix: vLLM's `permute_cols` custom op
(vLLM 0.13), used by GPTQ "act-order" checkpoints to reorder activations along K so that
they match weights whose input channels were sorted by their quantisation group.

    permute_cols(A, perm) -> Tensor

Returns a new tensor D with A's shape and dtype where, for every row r (all leading
dimensions flattened) and every column k:

    D[r, k] = A[r, perm[k]]

- `A`: float16 or bfloat16, contiguous, shape [..., K] (usually [num_tokens, K]); K is a
  multiple of 8. A is not modified.
- `perm`: int32, contiguous, shape [K], a permutation of 0..K-1 (it must be gathered with,
  not inverted).
- The result is a fresh contiguous tensor (a pure copy: a correct answer is bit-exact).

Speed baseline: the reference below (vllm is not importable on the GPU host).
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def permute_cols(A: torch.Tensor, perm: torch.Tensor) -> torch.Tensor:
    """vllm::permute_cols(Tensor A, Tensor perm) -> Tensor"""
'''


def _case(name, tag, shape, dtype, seed=0):
    return Case(name, tag, dict(shape=shape, dtype=dtype), seed=seed)


CASES = [
    _case("smoke-f16", "smoke", (5, 24), "float16"),
    _case("smoke-bf16-3d", "smoke", (2, 3, 40), "bfloat16", seed=1),
    _case("llama3-8b-f16", "check", (37, 4096), "float16"),
    _case("llama3-8b-down-bf16", "check", (19, 14336), "bfloat16"),
    _case("one-token-f16", "check", (1, 8192), "float16"),
    _case("odd-rows-bf16", "check", (333, 1032), "bfloat16"),
    _case("batch-seq-f16", "check", (3, 17, 5120), "float16"),
    _case("llama3-8b-prefill-f16", "bench", (8192, 4096), "float16"),
    _case("llama3-70b-down-bf16", "bench", (4096, 28672), "bfloat16"),
    _case("decode-f16", "bench", (64, 14336), "float16"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    A = torch.randn(p["shape"], generator=gen).to(dtype).to(device)
    perm = torch.randperm(p["shape"][-1], generator=gen).to(torch.int32).to(device)
    return dict(A=A, perm=perm)


def reference(A, perm):
    return A.index_select(-1, perm.long()).contiguous()
