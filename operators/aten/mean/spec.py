"""Arithmetic mean of the elements of a tensor: `aten::mean` (all elements) and
`aten::mean.dim` (over some dimensions).

- `mean(self, *, dtype=None)` averages every element and returns a 0-d tensor.
- `mean_dim(self, dim, keepdim=False, *, dtype=None)` averages over the dimensions listed
  in `dim` (negative values count from the end; no dimension repeats). `dim=None` or an
  empty list means every dimension. With `keepdim` the reduced dimensions stay with size 1,
  otherwise they are removed. A 0-d `self` accepts `dim` 0 or -1 and gives a 0-d result.
- Result dtype: `dtype` when given, else the input's dtype. The result dtype must be
  floating: integer inputs are allowed only together with a floating `dtype` (each element
  is converted to `dtype` first).
- Inputs: float16, bfloat16, float32 (and integers with `dtype`), any strides. Half
  precision is accumulated in float32, divided by the count, and rounded once at the end.
- Averaging zero elements gives NaN.
- The result is a new tensor; `self` must not be modified.
- Required overloads: `mean` (default) and `mean.dim`. Left out: the `out=` variants.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def mean(self: torch.Tensor, *, dtype: torch.dtype | None = None) -> torch.Tensor:
    """aten::mean(Tensor self, *, ScalarType? dtype=None) -> Tensor"""


def mean_dim(self: torch.Tensor, dim: list[int] | None, keepdim: bool = False, *, dtype: torch.dtype | None = None) -> torch.Tensor:
    """aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""
'''


def _case(name, tag, shape, dtype, dim="all", keepdim=False, out_dtype=None, transpose=False, seed=0):
    entry = "mean" if dim == "all" else "mean_dim"
    dims = range(len(shape)) if dim in ("all", None) or dim == [] else dim
    n = 1
    for d in dims:
        n *= shape[d] if shape else 1
    params = dict(shape=shape, dtype=dtype, dim=dim, keepdim=keepdim, out_dtype=out_dtype, transpose=transpose)
    # reduction = elements averaged per output, capped so that atol (1e-4 x reduction x
    # RMS) stays well below the output's RMS: an all-zero answer must fail.
    return Case(name, tag, params, seed=seed, reduction=max(1, min(n, 1024)), entry=entry)


CASES = [
    _case("smoke-all-f32", "smoke", (7, 33), "float32"),
    _case("smoke-dim-f16", "smoke", (5, 9, 6), "float16", dim=[1], keepdim=True, seed=1),
    _case("smoke-dims-bf16", "smoke", (4, 5, 6), "bfloat16", dim=[0, 2], seed=2),
    _case("all-f16", "check", (1000, 999), "float16"),
    _case("all-bf16-to-f32", "check", (3, 5000), "bfloat16", out_dtype="float32"),
    _case("all-int-to-f32", "check", (100, 77), "int32", out_dtype="float32"),
    _case("all-transposed", "check", (300, 129), "float32", transpose=True),
    _case("rows-f32", "check", (1823, 781), "float32", dim=[-1]),
    _case("rows-bf16", "check", (64, 4099), "bfloat16", dim=[1], keepdim=True),
    _case("cols-f32", "check", (2000, 300), "float32", dim=[0]),
    _case("middle-f16", "check", (8, 129, 33), "float16", dim=[1]),
    _case("spatial-f32", "check", (4, 16, 14, 14), "float32", dim=[2, 3], keepdim=True),
    _case("outer-inner-f32", "check", (6, 7, 8, 9), "float32", dim=[0, 3]),
    _case("transposed-rows", "check", (257, 300), "float32", dim=[1], transpose=True),
    _case("dim-none", "check", (33, 44), "float32", dim=None, keepdim=True),
    _case("dim-empty-list", "check", (33, 44), "float16", dim=[]),
    _case("f16-to-f32", "check", (64, 512), "float16", dim=[1], out_dtype="float32"),
    _case("tokens-f32", "check", (4, 77, 768), "float32", dim=[1]),
    _case("scalar", "check", (), "float32"),
    _case("scalar-dim", "check", (), "float32", dim=[-1], keepdim=True),
    _case("empty-reduced", "check", (5, 0), "float32", dim=[1]),
    _case("empty-all", "check", (0, 3), "float32"),
    _case("empty-kept", "check", (0, 7), "float32", dim=[1]),
    _case("bench-all-f32", "bench", (64 * 1024 * 1024,), "float32"),
    _case("bench-rows-bf16", "bench", (8192, 8192), "bfloat16", dim=[-1]),
    _case("bench-cols-f16", "bench", (8192, 8192), "float16", dim=[0]),
    _case("bench-spatial-f32", "bench", (64, 256, 56, 56), "float32", dim=[2, 3]),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    shape = tuple(reversed(p["shape"])) if p["transpose"] else tuple(p["shape"])
    if dtype.is_floating_point:
        # an offset keeps the means away from zero, so relative errors mean something
        x = torch.randn(shape, generator=gen) * 2 + 0.5
    else:
        x = torch.randint(-100, 100, shape, generator=gen)
    x = x.to(dtype).to(device)
    if p["transpose"]:
        x = x.t()
    out_dtype = getattr(torch, p["out_dtype"]) if p["out_dtype"] else None
    if case.entry == "mean":
        return dict(self=x, dtype=out_dtype)
    return dict(self=x, dim=p["dim"], keepdim=p["keepdim"], dtype=out_dtype)


def _mean(self, *, dtype=None):
    return torch.ops.aten.mean.default(self, dtype=dtype)


def _mean_dim(self, dim, keepdim=False, *, dtype=None):
    return torch.ops.aten.mean.dim(self, dim, keepdim, dtype=dtype)


reference = {"mean": _mean, "mean_dim": _mean_dim}
