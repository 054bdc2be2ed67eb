"""Matrix product with NumPy-style broadcasting: `aten::matmul`.

`matmul(self, other)` follows torch.matmul:
- both 1-D (K) and (K): the dot product, a 0-d tensor;
- 2-D (M, K) and 2-D (K, N): the matrix product (M, N);
- 1-D (K) and 2-D (K, N): (N) (the vector is a row, then that dimension is removed);
- 2-D (M, K) and 1-D (K): (M) (the vector is a column, then removed);
- either at least 3-D: a batched product. The last two dimensions are the matrices; all
  leading (batch) dimensions broadcast against each other (sizes equal or 1, missing
  leading dimensions count as 1). A 1-D operand is first made a matrix as above and that
  dimension is removed from the result. E.g. (2, 1, 40, 64) @ (3, 64, 50) -> (2, 3, 40, 50)
  and (5, 7, 300) @ (300) -> (5, 7).
- dtypes: float16, bfloat16 or float32, the same for both operands; the result has that
  dtype. Accumulate in float32 and round once. float32 products must be computed at full
  float32 precision (no TF32): the tolerance is float32's.
- Operands may have any strides (transposed or expanded views). K = 0 gives zeros; other
  empty sizes give empty results.
- The result is a new tensor; the inputs must not be modified.
- Required: the default overload. Left out: `matmul.out`.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def matmul(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """aten::matmul(Tensor self, Tensor other) -> Tensor"""
'''


def _case(name, tag, a, b, dtype, ta=False, tb=False, seed=0):
    # ta / tb: store that operand's last two dims transposed (a column-major view)
    params = dict(a=a, b=b, dtype=dtype, ta=ta, tb=tb)
    k = a[-1] if a else 1
    return Case(name, tag, params, seed=seed, reduction=max(k, 1))


CASES = [
    _case("smoke-mm-f32", "smoke", (5, 7), (7, 3), "float32"),
    _case("smoke-batched-f16", "smoke", (2, 1, 9, 17), (3, 17, 6), "float16", tb=True, seed=1),
    _case("smoke-dot-f32", "smoke", (33,), (33,), "float32", seed=2),
    _case("mm-f32", "check", (300, 768), (768, 100), "float32"),
    _case("mm-transposed-bf16", "check", (130, 257), (257, 65), "bfloat16", ta=True, tb=True),
    _case("vec-mat-bf16", "check", (512,), (512, 300), "bfloat16"),
    _case("mat-vec-f16", "check", (300, 512), (512,), "float16"),
    _case("dot-long-f32", "check", (4096,), (4096,), "float32"),
    _case("attn-f16", "check", (2, 12, 77, 64), (2, 12, 64, 77), "float16", tb=True),
    _case("broadcast-f32", "check", (2, 1, 40, 64), (3, 64, 50), "float32"),
    _case("tokens-weight-bf16", "check", (4, 77, 256), (256, 96), "bfloat16"),
    _case("weight-tokens-f32", "check", (96, 256), (4, 256, 77), "float32"),
    _case("batched-vec-f32", "check", (5, 7, 300), (300,), "float32"),
    _case("vec-batched-f16", "check", (300,), (5, 300, 7), "float16"),
    _case("k-zero", "check", (4, 0), (0, 5), "float32"),
    _case("dot-empty", "check", (0,), (0,), "float32"),
    _case("batch-empty", "check", (0, 4, 8), (8, 5), "float16"),
    _case("bench-square-bf16", "bench", (4096, 4096), (4096, 4096), "bfloat16"),
    _case("bench-tokens-f16", "bench", (8, 2048, 4096), (4096, 4096), "float16"),
    _case("bench-attn-f16", "bench", (32, 16, 1024, 128), (32, 16, 128, 1024), "float16", tb=True),
    _case("bench-f32", "bench", (2048, 2048), (2048, 2048), "float32"),
]


def _draw(shape, transpose, dtype, gen):
    if transpose and len(shape) >= 2:
        swapped = (*shape[:-2], shape[-1], shape[-2])
        return torch.randn(swapped, generator=gen).to(dtype).transpose(-1, -2)
    return torch.randn(shape, generator=gen).to(dtype)


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    a = _draw(tuple(p["a"]), p["ta"], dtype, gen)
    b = _draw(tuple(p["b"]), p["tb"], dtype, gen)
    return dict(self=a.to(device), other=b.to(device))


def reference(self, other):
    return torch.ops.aten.matmul.default(self, other)
