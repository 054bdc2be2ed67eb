"""Evenly spaced values: `aten::arange` (overloads `default`, `start`, `start_step`).

Returns a new 1-D tensor `out` of length `n = ceil((end - start) / step)` with
`out[i] = start + i * step`, for i = 0 .. n-1. `start`, `end` and `step` are Python
numbers (int or float); `start` defaults to 0 and `step` to 1.

- Length: computed in double precision from the Python values, exactly as
  `math.ceil((end - start) / step)`; it is 0 when `start == end`. A zero step, or a step
  whose sign disagrees with `end - start`, is an error (not tested).
- Result dtype: `dtype` when given; otherwise int64 if `start`, `end` and `step` are all
  Python ints, else the default floating dtype (float32).
- Values: for floating results compute `start + i * step` in double precision (as PyTorch
  does on the CPU) and round once to the result dtype; float16 and bfloat16 results are
  compared with their usual tolerance. Integer results (int64, int32) are only requested
  with integer arguments and must be exact, including values beyond 2**31.
- `device` says where the result lives; `layout` (strided or None) and `pin_memory`
  (None or False) can be ignored.
- The result must be computed by a Triton kernel (no `torch.arange`, no host loops).

Required entry points: `arange` (end only), `arange_start` (start, end) and
`arange_start_step` (start, end, step). The `out=` overloads are not required.
"""

import torch

from kgb.operators import Case

VERSION = 1

_KW = "dtype: torch.dtype | None = None, layout: torch.layout | None = None, device: torch.device | None = None, pin_memory: bool | None = None"

SIGNATURES = f'''
def arange(end: int | float, *, {_KW}) -> torch.Tensor:
    """aten::arange(Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""


def arange_start(start: int | float, end: int | float, *, {_KW}) -> torch.Tensor:
    """aten::arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""


def arange_start_step(start: int | float, end: int | float, step: int | float = 1, *, {_KW}) -> torch.Tensor:
    """aten::arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
'''


def _case(name, tag, entry, args, dtype=None):
    return Case(name, tag, dict(args=args, dtype=dtype), entry=entry)


CASES = [
    _case("smoke-int", "smoke", "arange", (37,)),
    _case("smoke-float-step", "smoke", "arange_start_step", (-2.5, 3.7, 0.13)),
    _case("smoke-start-f16", "smoke", "arange_start", (3, 40), "float16"),
    _case("empty", "check", "arange", (0,)),
    _case("empty-start", "check", "arange_start", (5, 5)),
    _case("one", "check", "arange", (1,)),
    _case("positions", "check", "arange", (4097,)),
    _case("positions-int32", "check", "arange_start", (0, 8191), "int32"),
    _case("float-end", "check", "arange", (10.5,)),
    _case("negative-step", "check", "arange_start_step", (100, -7, -3)),
    _case("negative-float-step", "check", "arange_start_step", (1.0, -1.0, -0.01)),
    _case("tenth-f32", "check", "arange_start_step", (-1.0, 1.0, 0.1)),
    _case("inv-freq-f32", "check", "arange_start_step", (0, 128, 2), "float32"),
    _case("bf16", "check", "arange_start_step", (0.5, 300.25, 0.25), "bfloat16"),
    _case("f16-int-args", "check", "arange_start_step", (-1000, 1000, 7), "float16"),
    _case("int64-big", "check", "arange_start_step", (2**33, 2**33 + 50000, 3)),
    _case("int-float-dtype", "check", "arange", (100003,), "float32"),
    _case("float64", "check", "arange_start_step", (0.0, 1.0, 1e-4), "float64"),
    _case("bench-int64", "bench", "arange", (2**26,)),
    _case("bench-f32", "bench", "arange_start_step", (0.0, 1.0, 1.0 / 2**25), "float32"),
    _case("bench-bf16", "bench", "arange_start", (0, 2**25), "bfloat16"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    names = {
        "arange": ("end",),
        "arange_start": ("start", "end"),
        "arange_start_step": ("start", "end", "step"),
    }
    inputs = dict(zip(names[case.entry], case.params["args"], strict=True))
    dtype = case.params["dtype"]
    return dict(inputs, dtype=getattr(torch, dtype) if dtype else None, device=torch.device(device))


reference = {
    "arange": torch.ops.aten.arange.default,
    "arange_start": torch.ops.aten.arange.start,
    "arange_start_step": torch.ops.aten.arange.start_step,
}
