"""Sum of the elements of a tensor: `aten::sum` (all elements) and `aten::sum.dim_IntList`
(over some dimensions).

- `sum(self, *, dtype=None)` adds every element and returns a 0-d tensor.
- `sum_dim_IntList(self, dim, keepdim=False, *, dtype=None)` adds over the dimensions listed
  in `dim` (negative values count from the end; no dimension repeats). `dim=None` or an
  empty list means every dimension. With `keepdim` the reduced dimensions stay with size 1,
  otherwise they are removed. A 0-d `self` accepts `dim` 0 or -1 and gives a 0-d result.
- Result dtype: `dtype` when given (the input is converted to `dtype` element by element
  before adding, e.g. float to int truncates); otherwise int64 for integer and bool inputs,
  and the input's dtype for floating inputs.
- Inputs: float16, bfloat16, float32, integer types and bool, any strides (transposed or
  sliced views). Accumulate half precision in float32 (rounded once at the end) and
  integers in int64 (wrapping on overflow like PyTorch).
- Empty reductions give 0; a tensor with zero elements gives zeros (or an empty result if
  a kept dimension is empty).
- The result is a new tensor; `self` must not be modified.
- Required overloads: `sum` (default) and `sum.dim_IntList`. Left out: the `out=` variants
  and the list overloads `sum.int`, `sum.float`, `sum.complex`, `sum.bool`, which add
  Python numbers.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def sum(self: torch.Tensor, *, dtype: torch.dtype | None = None) -> torch.Tensor:
    """aten::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor"""


def sum_dim_IntList(self: torch.Tensor, dim: list[int] | None, keepdim: bool = False, *, dtype: torch.dtype | None = None) -> torch.Tensor:
    """aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""
'''


def _case(name, tag, shape, dtype, dim="all", keepdim=False, out_dtype=None, transpose=False, seed=0):
    entry = "sum" if dim == "all" else "sum_dim_IntList"
    dims = range(len(shape)) if dim in ("all", None) or dim == [] else dim
    n = 1
    for d in dims:
        n *= shape[d] if shape else 1
    params = dict(shape=shape, dtype=dtype, dim=dim, keepdim=keepdim, out_dtype=out_dtype, transpose=transpose)
    # reduction = elements added per output, capped so that atol (1e-4 x reduction x RMS)
    # stays well below the output's RMS: an all-zero answer must fail.
    return Case(name, tag, params, seed=seed, reduction=max(1, min(n, 1024)), entry=entry)


CASES = [
    _case("smoke-all-f32", "smoke", (7, 33), "float32"),
    _case("smoke-dim-f16", "smoke", (5, 9, 6), "float16", dim=[1], keepdim=True, seed=1),
    _case("smoke-dims-int32", "smoke", (4, 5, 6), "int32", dim=[0, 2], seed=2),
    _case("all-f16", "check", (1000, 999), "float16"),
    _case("all-bf16-to-f32", "check", (3, 5000), "bfloat16", out_dtype="float32"),
    _case("all-bool", "check", (100, 77), "bool"),
    _case("all-int64", "check", (12345,), "int64"),
    _case("all-transposed", "check", (300, 129), "float32", transpose=True),
    _case("rows-f32", "check", (1823, 781), "float32", dim=[-1]),
    _case("rows-bf16", "check", (64, 4099), "bfloat16", dim=[1], keepdim=True),
    _case("cols-f32", "check", (2000, 300), "float32", dim=[0]),
    _case("middle-f16", "check", (8, 129, 33), "float16", dim=[1]),
    _case("spatial-f32", "check", (4, 16, 14, 14), "float32", dim=[2, 3], keepdim=True),
    _case("outer-inner-f32", "check", (6, 7, 8, 9), "float32", dim=[0, 3]),
    _case("transposed-rows", "check", (257, 300), "float32", dim=[1], transpose=True),
    _case("dim-none", "check", (33, 44), "float32", dim=None, keepdim=True),
    _case("dim-empty-list", "check", (33, 44), "int32", dim=[]),
    _case("int8-to-int64", "check", (50, 60), "int8", dim=[1]),
    _case("uint8-rows", "check", (50, 600), "uint8", dim=[-1]),
    _case("bool-cols", "check", (300, 50), "bool", dim=[0]),
    _case("f32-to-int64", "check", (40, 50), "float32", dim=[1], out_dtype="int64"),
    _case("f16-to-f32", "check", (64, 512), "float16", dim=[1], out_dtype="float32"),
    _case("scalar", "check", (), "float32"),
    _case("scalar-dim", "check", (), "float32", dim=[0], keepdim=True),
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
    if dtype == torch.bool:
        x = torch.rand(shape, generator=gen) < 0.5
    elif dtype.is_floating_point:
        x = torch.randn(shape, generator=gen) * 2
    else:
        lo, hi = (0, 256) if dtype == torch.uint8 else (-100, 100)
        x = torch.randint(lo, hi, shape, generator=gen)
    x = x.to(dtype).to(device)
    if p["transpose"]:
        x = x.t()
    out_dtype = getattr(torch, p["out_dtype"]) if p["out_dtype"] else None
    if case.entry == "sum":
        return dict(self=x, dtype=out_dtype)
    return dict(self=x, dim=p["dim"], keepdim=p["keepdim"], dtype=out_dtype)


def _sum(self, *, dtype=None):
    return torch.ops.aten.sum.default(self, dtype=dtype)


def _sum_dim(self, dim, keepdim=False, *, dtype=None):
    return torch.ops.aten.sum.dim_IntList(self, dim, keepdim, dtype=dtype)


reference = {"sum": _sum, "sum_dim_IntList": _sum_dim}
