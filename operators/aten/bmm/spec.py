"""Batched matrix product: `aten::bmm`.

`bmm(self, mat2)`: `self` is (B, M, K) and `mat2` is (B, K, N); the result is (B, M, N)
with out[b] = self[b] @ mat2[b]. No broadcasting: both batch sizes are equal.

- dtypes: float16, bfloat16 or float32, the same for both inputs; the result has that
  dtype. Accumulate in float32 and round once. float32 products must be computed at full
  float32 precision (no TF32): the tolerance is float32's.
- Inputs may have any strides: transposed matrices (column-major), sliced views, and
  batch strides of 0 (an expanded matrix shared by every batch).
- Empty sizes are allowed: K = 0 gives zeros; B, M or N = 0 gives an empty result.
- The result is a new tensor; the inputs must not be modified.
- Required: the default overload. Left out: `bmm.out`, and `bmm.dtype`/`bmm.dtype_out`
  (an output dtype other than the inputs'), which PyTorch implements only on CUDA.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def bmm(self: torch.Tensor, mat2: torch.Tensor) -> torch.Tensor:
    """aten::bmm(Tensor self, Tensor mat2) -> Tensor"""
'''


def _case(name, tag, b, m, k, n, dtype, layout="nn", seed=0):
    # layout: one letter per input, n = row-major, t = transposed view, e = expanded batch
    params = dict(b=b, m=m, k=k, n=n, dtype=dtype, layout=layout)
    return Case(name, tag, params, seed=seed, reduction=max(k, 1))


CASES = [
    _case("smoke-f32", "smoke", 2, 5, 7, 3, "float32"),
    _case("smoke-f16-nt", "smoke", 3, 17, 33, 9, "float16", layout="nt", seed=1),
    _case("attn-scores-f32", "check", 24, 77, 64, 77, "float32", layout="nt"),
    _case("attn-values-f16", "check", 24, 77, 77, 64, "float16"),
    _case("vit-bf16", "check", 12, 197, 64, 197, "bfloat16", layout="nt"),
    _case("a-transposed-f32", "check", 4, 100, 300, 50, "float32", layout="tn"),
    _case("both-transposed-f16", "check", 4, 65, 129, 33, "float16", layout="tt"),
    _case("expanded-bf16", "check", 6, 40, 256, 96, "bfloat16", layout="ne"),
    _case("long-k-f32", "check", 2, 64, 2000, 48, "float32"),
    _case("vector-like", "check", 5, 1, 300, 1, "float32"),
    _case("odd-f16", "check", 3, 31, 17, 129, "float16"),
    _case("k-zero", "check", 3, 4, 0, 5, "float32"),
    _case("m-zero", "check", 3, 0, 8, 5, "float32"),
    _case("batch-zero", "check", 0, 4, 8, 5, "float16"),
    _case("bench-attn-f16", "bench", 512, 1024, 128, 1024, "float16", layout="nt"),
    _case("bench-square-bf16", "bench", 64, 512, 512, 512, "bfloat16"),
    _case("bench-f32", "bench", 16, 1024, 1024, 1024, "float32"),
]


def _mat(rows, cols, batch, letter, dtype, gen):
    if letter == "t":  # column-major storage
        return torch.randn((batch, cols, rows), generator=gen).to(dtype).transpose(1, 2)
    if letter == "e":  # one matrix shared by every batch (batch stride 0)
        return torch.randn((1, rows, cols), generator=gen).to(dtype).expand(batch, rows, cols)
    return torch.randn((batch, rows, cols), generator=gen).to(dtype)


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    a = _mat(p["m"], p["k"], p["b"], p["layout"][0], dtype, gen)
    b = _mat(p["k"], p["n"], p["b"], p["layout"][1], dtype, gen)
    return dict(self=a.to(device), mat2=b.to(device))


def reference(self, mat2):
    return torch.ops.aten.bmm.default(self, mat2)
