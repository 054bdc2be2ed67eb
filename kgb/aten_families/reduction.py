"""The reduction family: `mean` and `sum`, each over all elements or over some dimensions.
They share the strided reduction kernel (kernels/reduction.py), the case builder and the
input generator; each member's task text, cases and entry points are its own. The cases
and their builder are in reduction_cases.py."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from kgb.aten_families.member import Member
from kgb.aten_families.source import solution
from kgb.aten_families.sum_tolerance import compare_sums
from kgb.operators import Case

VERSION = 2  # 2: an output's atol is at least 1e-4 x the magnitude of the terms it adds
SPEC_HELPERS = ("layout", "sum_tolerance")

MEAN_TASK = """\
Arithmetic mean of the elements of a tensor: `aten::mean` (all elements) and
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

Checked with the published tolerance, each output's atol at least 1e-4 sqrt(sum of the
squares of the elements it averages) / their count: the order of the additions is free,
and its rounding follows the size of the terms, not of a mean that cancels.
"""

SUM_TASK = """\
Sum of the elements of a tensor: `aten::sum` (all elements) and `aten::sum.dim_IntList`
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

Checked with the published tolerance (integers exactly), each output's atol at least 1e-4
sqrt(sum of the squares of the elements it adds): the order of the additions is free, and
its rounding follows the size of the terms, not of a sum that cancels.
"""

# `{dim}` names the overload over dimensions: `dim` for mean, `dim_IntList` for sum
SIGNATURES = '''\
def {name}(self: torch.Tensor, *, dtype: torch.dtype | None = None) -> torch.Tensor:
    """aten::{name}(Tensor self, *, ScalarType? dtype=None) -> Tensor"""


def {name}_{dim}(self: torch.Tensor, dim: list[int] | None, keepdim: bool = False, *, dtype: torch.dtype | None = None) -> torch.Tensor:
    """aten::{name}.{dim}(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""
'''

REFERENCES = '''\
def _{name}(self, *, dtype=None):
    return torch.ops.aten.{name}.default(self, dtype=dtype)


def _{name}_dim(self, dim, keepdim=False, *, dtype=None):
    return torch.ops.aten.{name}.{dim}(self, dim, keepdim, dtype=dtype)


reference = {{"{name}": _{name}, "{name}_{dim}": _{name}_dim}}
'''

MEAN_ENTRIES = '''\
def _mean_dims(self, dims, keepdim, dtype):
    out_dtype = self.dtype if dtype is None else dtype
    if not out_dtype.is_floating_point:
        raise TypeError(f"mean(): the result dtype must be floating, got {out_dtype}")
    if self.ndim == 0:
        out = torch.empty((), dtype=out_dtype, device=self.device)
        _reduce(self.reshape(1), [0], out.view(1), 1)
        return out
    dims = sorted({d % self.ndim for d in dims}) if dims else list(range(self.ndim))
    count = math.prod(self.shape[d] for d in dims)
    shape = [1 if d in dims else n for d, n in enumerate(self.shape)]
    out = torch.empty(shape, dtype=out_dtype, device=self.device)
    _reduce(self, dims, out, count)  # count 0 gives 0 / 0 = NaN, as in PyTorch
    return out if keepdim else out.reshape([n for d, n in enumerate(self.shape) if d not in dims])


def mean(self: torch.Tensor, *, dtype: torch.dtype | None = None) -> torch.Tensor:
    return _mean_dims(self, None, False, dtype)


def mean_dim(self: torch.Tensor, dim: list[int] | None, keepdim: bool = False, *,
             dtype: torch.dtype | None = None) -> torch.Tensor:
    return _mean_dims(self, dim, keepdim, dtype)
'''

SUM_ENTRIES = '''\
def _result_dtype(self, dtype):
    if dtype is not None:
        return dtype
    return self.dtype if self.is_floating_point() else torch.int64


def _sum_dims(self, dims, keepdim, dtype):
    out_dtype = _result_dtype(self, dtype)
    if self.ndim == 0:
        out = torch.empty((), dtype=out_dtype, device=self.device)
        _reduce(self.reshape(1), [0], out.view(1), 1)
        return out
    dims = sorted({d % self.ndim for d in dims}) if dims else list(range(self.ndim))
    shape = [1 if d in dims else n for d, n in enumerate(self.shape)]
    out = torch.empty(shape, dtype=out_dtype, device=self.device)
    _reduce(self, dims, out, 1)
    return out if keepdim else out.reshape([n for d, n in enumerate(self.shape) if d not in dims])


def sum(self: torch.Tensor, *, dtype: torch.dtype | None = None) -> torch.Tensor:
    return _sum_dims(self, None, False, dtype)


def sum_dim_IntList(self: torch.Tensor, dim: list[int] | None, keepdim: bool = False, *,
                    dtype: torch.dtype | None = None) -> torch.Tensor:
    return _sum_dims(self, dim, keepdim, dtype)
'''


@dataclass(frozen=True)
class Reduction:
    name: str
    dim: str  # the overload over dimensions
    task: str
    entries: str


REDUCTIONS = [
    Reduction("mean", "dim", MEAN_TASK, MEAN_ENTRIES),
    Reduction("sum", "dim_IntList", SUM_TASK, SUM_ENTRIES),
]


def cases(name: str) -> list[Case]:
    # not at the top: engines import this module for its specs and must not hold the hidden cases
    from kgb.aten_families import reduction_cases

    return reduction_cases.cases(name)


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    shape = tuple(reversed(p["shape"])) if p["transpose"] else tuple(p["shape"])
    averaging = case.entry.startswith("mean")
    if dtype == torch.bool:
        x = torch.rand(shape, generator=gen) < 0.5
    elif dtype.is_floating_point:
        x = torch.randn(shape, generator=gen) * 2
        if averaging:  # an offset keeps the means away from zero, so relative errors mean something
            x = x + 0.5
    else:
        lo, hi = (0, 256) if dtype == torch.uint8 else (-100, 100)
        x = torch.randint(lo, hi, shape, generator=gen)
    x = x.to(dtype).to(device)
    if p["transpose"]:
        x = x.t()
    out_dtype = getattr(torch, p["out_dtype"]) if p["out_dtype"] else None
    if case.entry in ("mean", "sum"):
        return dict(self=x, dtype=out_dtype)
    return dict(self=x, dim=p["dim"], keepdim=p["keepdim"], dtype=out_dtype)


def _terms_magnitude(inputs: dict, mean: bool) -> torch.Tensor:
    """float64, per output: sqrt(sum of the squares of the elements it reduces), divided by
    their count for a mean."""
    x = inputs["self"].detach().double()
    if "dim" in inputs:
        magnitude = torch.ops.aten.sum.dim_IntList(x * x, inputs["dim"], inputs["keepdim"]).sqrt()
    else:
        magnitude = (x * x).sum().sqrt()
    return magnitude / max(x.numel() // max(magnitude.numel(), 1), 1) if mean else magnitude


def compare(actual, expected, case, inputs):
    """`sum_tolerance.compare_sums`: an output that cancels is judged by its terms' magnitude."""
    return compare_sums(actual, expected, case, inputs, lambda i: _terms_magnitude(i, case.entry.startswith("mean")))


def members() -> list[Member]:
    imports = "import math\n\nimport torch\nimport triton\nimport triton.language as tl\n"
    return [
        Member(
            name=r.name, family="reduction", version=VERSION, task=r.task,
            signatures=SIGNATURES.format(name=r.name, dim=r.dim), cases=cases(r.name),
            references=REFERENCES.format(name=r.name, dim=r.dim),
            solution=solution(["merge", "onk", "tl_types", "reduction"], r.entries, imports),
            binds={"make_inputs": "make_inputs", "compare": "compare"},
        )
        for r in REDUCTIONS
    ]
