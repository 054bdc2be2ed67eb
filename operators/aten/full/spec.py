"""A tensor filled with one value: `aten::full` (default overload).

Returns a new tensor of shape `size` (a list of ints; `[]` gives a 0-d tensor, a 0 in it
gives an empty tensor) whose every element is `fill_value`.

- `fill_value` is a Python bool, int or float (including inf and -inf).
- Result dtype: `dtype` when given; otherwise inferred from the Python type of
  `fill_value`: bool -> torch.bool, int -> torch.int64, float -> the default floating
  dtype (float32).
- The value is converted to the result dtype as PyTorch converts a scalar: floats round to
  the nearest representable value (float16, bfloat16, float32); ints are exact, including
  int64 values beyond 2**31; for a bool result any nonzero value is True.
- `device` says where the result lives; `layout` (strided or None) and `pin_memory`
  (None or False) can be ignored. The result is contiguous.
- The values must be written by a Triton kernel: PyTorch may allocate the result
  (`torch.empty`) but its fill, zero, copy and clone ops are not allowed here.

Required entry point: `full`. Not required: `full.out` and `full.names`.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def full(size: list[int], fill_value: bool | int | float, *, dtype: torch.dtype | None = None, layout: torch.layout | None = None, device: torch.device | None = None, pin_memory: bool | None = None) -> torch.Tensor:
    """aten::full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
'''

# Its whole job is a fill: PyTorch's own fills and copies would do it without Triton.
DENIED_TORCH_OPS = (
    "aten::fill_",
    "aten::zero_",
    "aten::zeros",
    "aten::zeros_like",
    "aten::new_zeros",
    "aten::copy_",
    "aten::clone",
    "aten::contiguous",
)


def _case(name, tag, size, value, dtype=None):
    return Case(name, tag, dict(size=size, value=value, dtype=dtype))


CASES = [
    _case("smoke-f32", "smoke", [5, 37], 0.5),
    _case("smoke-int", "smoke", [3, 7], 7),
    _case("smoke-f16", "smoke", [2, 3, 9], -0.1, "float16"),
    _case("neg-inf-f16", "check", [2, 3, 9], float("-inf"), "float16"),
    _case("scalar", "check", [], 3.25),
    _case("empty", "check", [4, 0, 3], 1.0),
    _case("mask-min-bf16", "check", [1, 1, 77, 77], -3.3895313892515355e38, "bfloat16"),
    _case("mask-neg-inf-f32", "check", [8, 1, 129, 129], float("-inf")),
    _case("f16-value", "check", [4099], 0.1, "float16"),
    _case("int64-big", "check", [1000, 3], 2**40 + 3),
    _case("int32", "check", [513, 7], -123456, "int32"),
    _case("int-to-float", "check", [65, 65], 3, "float32"),
    _case("float-to-int", "check", [100], 2.75, "int64"),
    _case("bool-true", "check", [17, 33], True),
    _case("bool-from-int", "check", [31], 2, "bool"),
    _case("uint8", "check", [300], 200, "uint8"),
    _case("nan", "check", [3, 5], float("nan")),
    _case("bench-mask-f32", "bench", [16, 1, 2048, 2048], float("-inf")),
    _case("bench-bf16", "bench", [8192, 8192], 1.0, "bfloat16"),
    _case("bench-int64", "bench", [2**25], 7),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"]) if p["dtype"] else None
    return dict(
        size=list(p["size"]), fill_value=p["value"], dtype=dtype, device=torch.device(device)
    )


reference = torch.ops.aten.full.default
