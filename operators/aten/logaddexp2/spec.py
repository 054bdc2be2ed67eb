"""Base-2 log-sum-exp of two tensors: `aten::logaddexp2`.

    out = log2(2**self + 2**other)

Required entry point: `logaddexp2` (the default overload; `logaddexp2.out` is not required).

- Must be computed stably: 2**x overflows float32 beyond 128, and the inputs here reach
  hundreds. PyTorch computes max(a, b) + log1p(2**-|a - b|) / ln 2, with the special case
  a == b == +-inf giving that infinity. So: +inf with anything but NaN gives +inf, -inf
  with a finite b gives b, and NaN anywhere gives NaN.
- Floating dtypes only: float16, bfloat16, float32 (PyTorch refuses integer inputs).
  float16/bfloat16 are computed in float32 and rounded once. The result dtype is PyTorch's
  promotion of the two (dimensioned tensors decide, a 0-d tensor only raises the
  category): float16 with bfloat16 -> float32, bfloat16 with a 0-d float32 -> bfloat16.
  Such a 0-d tensor of a wider dtype is only tested with values exactly representable in
  the common dtype (PyTorch's CPU and CUDA kernels disagree on whether to round it first).
- Broadcasting: `self` and `other` broadcast against each other (NumPy rules); the result
  has the broadcast shape. Inputs may be non-contiguous and must not be modified.
- Empty and 0-d tensors are valid.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def logaddexp2(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """aten::logaddexp2(Tensor self, Tensor other) -> Tensor"""
'''


def _case(name, tag, shape, other, dtype, other_dtype=None, layout=None, other_layout=None,
          scale=4.0, seed=0):
    """Values are N(0, scale^2); `scale=None` crosses the special values instead. Layouts: `t`
    is a transposed view, `slice` a view of every other column."""
    params = dict(shape=shape, other=other, dtype=dtype, other_dtype=other_dtype or dtype,
                  layout=layout, other_layout=other_layout, scale=scale)
    return Case(name, tag, params, seed=seed)


CASES = [
    _case("smoke-f32", "smoke", (5, 37), (37,), "float32"),
    _case("smoke-special", "smoke", (10, 1), (1, 10), "float32", scale=None),
    _case("smoke-t-f16-bf16", "smoke", (9, 6), (6,), "float16", "bfloat16", layout="t", seed=1),
    _case("bf16", "check", (4, 512, 768), (4, 512, 768), "bfloat16"),
    _case("f16-rows", "check", (2, 1024, 1024), (1024,), "float16"),
    _case("f32-column", "check", (1823, 781), (1823, 1), "float32"),
    _case("f32-wide", "check", (1000, 1000), (1000, 1000), "float32", scale=300.0),
    _case("f32-close", "check", (1000, 1000), (1000, 1000), "float32", scale=0.01),
    _case("f32-outer", "check", (64, 1, 33), (1, 47, 33), "float32"),
    _case("f32-t-slice", "check", (300, 257), (300, 257), "float32", layout="t", other_layout="slice"),
    _case("f16-bf16", "check", (1000, 130), (1000, 130), "float16", "bfloat16"),
    _case("bf16-0d-f32", "check", (1000, 33), (), "bfloat16", "float32"),
    _case("special-f16", "check", (10, 1), (1, 10), "float16", scale=None),
    _case("special-bf16", "check", (10, 1), (1, 10), "bfloat16", scale=None),
    _case("empty", "check", (0, 5), (5,), "float32"),
    _case("zero-dim", "check", (), (), "float32"),
    _case("logaddexp2-f32", "bench", (8192, 8192), (8192, 8192), "float32"),
    _case("logaddexp2-bf16", "bench", (16, 2048, 4096), (16, 2048, 4096), "bfloat16"),
    _case("logaddexp2-f16-rows", "bench", (16384, 4096), (4096,), "float16"),
]

_SPECIAL = [0.0, 1.0, -1.0, 30.0, -30.0, 200.0, -200.0, float("inf"), float("-inf"), float("nan")]


def _tensor(shape, dtype, layout, scale, gen, device):
    full = shape[::-1] if layout == "t" else (*shape[:-1], 2 * shape[-1]) if layout == "slice" else shape
    x = (torch.randn(full, generator=gen) * scale).to(dtype).to(device)
    return x.t() if layout == "t" else x[..., ::2] if layout == "slice" else x


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype, other_dtype = getattr(torch, p["dtype"]), getattr(torch, p["other_dtype"])
    if p["scale"] is None:
        values = torch.tensor(_SPECIAL)
        return dict(self=values.reshape(p["shape"]).to(dtype).to(device),
                    other=values.reshape(p["other"]).to(other_dtype).to(device))
    self = _tensor(p["shape"], dtype, p["layout"], p["scale"], gen, device)
    other = _tensor(p["other"], other_dtype, p["other_layout"], p["scale"], gen, device)
    if other.ndim == 0 and dtype in (torch.float16, torch.bfloat16):
        other = other.to(dtype).to(other_dtype)  # representable in the common dtype (see above)
    return dict(self=self, other=other)


def reference(self, other):
    return torch.ops.aten.logaddexp2.default(self, other)
