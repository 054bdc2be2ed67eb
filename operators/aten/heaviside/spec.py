"""Heaviside step function: `aten::heaviside`.

    out = 0 where self < 0,  values where self == 0,  1 where self > 0

Required entry point: `heaviside` (the default overload; `heaviside.out` is not required).

- NaN in `self` is neither == 0 nor > 0, so it gives 0 (PyTorch computes
  `self == 0 ? values : (self > 0)`); -0.0 counts as zero. `values` may hold anything,
  NaN included, and is returned as is where `self` is zero.
- `self` and `values` must have the same dtype (PyTorch refuses mixed dtypes); the result
  has that dtype. Dtypes: float16, bfloat16, float32, int8..int64 and bool (for bool,
  `self > 0` means True).
- Broadcasting: `self` and `values` broadcast against each other (often `values` is a 0-d
  tensor or a vector); the result has the broadcast shape. Inputs may be non-contiguous
  and must not be modified.
- Empty and 0-d tensors are valid.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def heaviside(self: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """aten::heaviside(Tensor self, Tensor values) -> Tensor"""
'''


def _case(name, tag, shape, values, dtype, layout=None, values_layout=None, seed=0):
    """Layouts: `t` is a transposed view, `slice` a view of every other column."""
    params = dict(shape=shape, values=values, dtype=dtype, layout=layout, values_layout=values_layout)
    return Case(name, tag, params, seed=seed)


CASES = [
    _case("smoke-f32", "smoke", (5, 37), (37,), "float32"),
    _case("smoke-t-f16", "smoke", (9, 6), (), "float16", layout="t", seed=1),
    _case("smoke-i32", "smoke", (3, 7), (3, 1), "int32", seed=2),
    _case("bf16", "check", (4, 512, 768), (4, 512, 768), "bfloat16"),
    _case("f16-rows", "check", (2, 1024, 1024), (1024,), "float16"),
    _case("f32-column", "check", (1823, 781), (1823, 1), "float32"),
    _case("f32-0d", "check", (1000, 1000), (), "float32"),
    _case("f32-outer", "check", (64, 1, 33), (1, 47, 33), "float32"),
    _case("f32-t-slice", "check", (300, 257), (300, 257), "float32", layout="t", values_layout="slice"),
    _case("bf16-slice", "check", (128, 513), (513,), "bfloat16", layout="slice"),
    _case("i64", "check", (1000, 1000), (1000, 1000), "int64"),
    _case("i8", "check", (64, 1000), (1000,), "int8"),
    _case("bool", "check", (100, 77), (100, 77), "bool"),
    _case("empty", "check", (0, 5), (5,), "float32"),
    _case("zero-dim", "check", (), (), "float32"),
    _case("heaviside-f32", "bench", (8192, 8192), (), "float32"),
    _case("heaviside-bf16", "bench", (16, 2048, 4096), (16, 2048, 4096), "bfloat16"),
    _case("heaviside-f16-rows", "bench", (16384, 4096), (4096,), "float16"),
]


def _rand(shape, dtype, gen):
    """Small integers (and halves, for floats), so that zeros are frequent; 5% NaN in floats."""
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    if not dtype.is_floating_point:
        lo = 0 if dtype == torch.uint8 else -5
        return torch.randint(lo, 6, shape, generator=gen).to(dtype)
    x = torch.randint(-6, 7, shape, generator=gen) / 2
    x[torch.rand(shape, generator=gen) < 0.05] = float("nan")
    return x.to(dtype)


def _tensor(shape, dtype, layout, gen, device):
    if layout == "t":
        return _rand(shape[::-1], dtype, gen).to(device).t()
    if layout == "slice":
        return _rand((*shape[:-1], 2 * shape[-1]), dtype, gen).to(device)[..., ::2]
    return _rand(shape, dtype, gen).to(device)


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    self = _tensor(p["shape"], dtype, p["layout"], gen, device)
    values = _tensor(p["values"], dtype, p["values_layout"], gen, device)
    return dict(self=self, values=values)


def heaviside(self, values):
    return torch.ops.aten.heaviside.default(self, values)


reference = heaviside
