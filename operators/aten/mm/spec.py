"""Matrix product of two 2-D tensors: `aten::mm`.

out = self @ mat2, where self is [M, K] and mat2 is [K, N]; out is [M, N] with
out[i, j] = sum_p self[i, p] * mat2[p, j].

- dtypes: float16, bfloat16 or float32; both inputs have the same dtype and the result
  has it too. There is no broadcasting and no batching (see bmm/matmul for those).
- Accumulate in float32 and round once at the end. For float32 inputs the products must
  be full float32 ones (PyTorch's default "highest" matmul precision): TF32 tensor-core
  arithmetic is not accurate enough (in Triton, tl.dot(..., input_precision="ieee")).
  float16 and bfloat16 may use tensor cores with float32 accumulation.
- Either input may be non-contiguous: transposed views (column-major storage, as for
  `x @ w.t()`), row slices or column slices with any strides.
- M or N may be 0 (an empty result). K is at least 1 in the cases (with K == 0 the result
  is all zeros).
- The result is a new tensor (any strides); the inputs must not be modified.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def mm(self: torch.Tensor, mat2: torch.Tensor) -> torch.Tensor:
    """aten::mm(Tensor self, Tensor mat2) -> Tensor"""
'''


def _case(name, tag, m, k, n, dtype, layout_a="", layout_b="", seed=0):
    """layout: "" contiguous, "T" a transposed view, "S" a column slice of a wider tensor."""
    params = dict(m=m, k=k, n=n, dtype=dtype, layout_a=layout_a, layout_b=layout_b)
    return Case(name, tag, params, seed=seed, reduction=k)


CASES = [
    _case("smoke-f32", "smoke", 9, 13, 7, "float32"),
    _case("smoke-f16-wt", "smoke", 16, 40, 24, "float16", layout_b="T", seed=1),
    _case("f32", "check", 257, 300, 129, "float32"),
    _case("f16", "check", 500, 1000, 333, "float16"),
    _case("bf16", "check", 128, 4096, 96, "bfloat16"),
    _case("linear-bf16", "check", 77, 2048, 1024, "bfloat16", layout_b="T"),
    _case("linear-f32", "check", 33, 1024, 511, "float32", layout_b="T"),
    _case("both-transposed-f16", "check", 200, 64, 300, "float16", layout_a="T", layout_b="T"),
    _case("a-transposed-f32", "check", 65, 513, 130, "float32", layout_a="T"),
    _case("sliced-f16", "check", 100, 256, 90, "float16", layout_a="S", layout_b="S"),
    _case("vector-row-bf16", "check", 1, 4096, 4096, "bfloat16", layout_b="T"),
    _case("vector-col-f32", "check", 1000, 777, 1, "float32"),
    _case("k1-f16", "check", 64, 1, 80, "float16"),
    _case("long-k-f32", "check", 16, 16384, 16, "float32"),
    _case("empty-m", "check", 0, 64, 32, "float32"),
    _case("empty-n", "check", 32, 64, 0, "bfloat16"),
    # bench: real layer shapes and large squares
    _case("square-8192-bf16", "bench", 8192, 8192, 8192, "bfloat16"),
    _case("square-4096-f16", "bench", 4096, 4096, 4096, "float16"),
    _case("llama-mlp-up-bf16", "bench", 16384, 4096, 14336, "bfloat16", layout_b="T"),
    _case("llama-qkv-f16", "bench", 4096, 4096, 6144, "float16", layout_b="T"),
    _case("square-4096-f32", "bench", 4096, 4096, 4096, "float32"),
    _case("decode-bf16", "bench", 16, 8192, 8192, "bfloat16", layout_b="T"),
]


def _matrix(rows, cols, dtype, layout, gen, device):
    if layout == "T":  # stored [cols, rows], seen transposed
        return torch.randn(cols, rows, generator=gen).to(dtype).to(device).t()
    if layout == "S":  # the middle columns of a wider tensor: row stride > cols
        return torch.randn(rows, cols + 19, generator=gen).to(dtype).to(device)[:, 7 : 7 + cols]
    return torch.randn(rows, cols, generator=gen).to(dtype).to(device)


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    a = _matrix(p["m"], p["k"], dtype, p["layout_a"], gen, device)
    b = _matrix(p["k"], p["n"], dtype, p["layout_b"], gen, device)
    return dict(self=a, mat2=b)


def reference(self, mat2):
    return torch.ops.aten.mm.default(self, mat2)
