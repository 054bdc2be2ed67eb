"""Make a 0-d tensor holding a Python number: `aten::scalar_tensor`.

`scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None)` returns a new
0-d tensor on `device` whose single element is `s` converted to `dtype`.

- `s` is a Python float, int or bool. `dtype` None means the default dtype
  (torch.get_default_dtype(), float32), whatever the type of `s`.
- Conversion: to a floating dtype, round to nearest (s is a double; NaN and infinities
  stay); to an integer dtype, truncate toward zero (2.7 -> 2, -2.7 -> -2; `s` is within
  the dtype's range); to bool, True when s is non-zero. int64 values are exact.
- `layout` is None or torch.strided; `pin_memory` is None or False; `device` is where the
  tensor lives (a string or torch.device; None means the CPU).
- The value must be written by a Triton kernel into the allocated tensor: PyTorch's
  fills and copies (`fill_`, `zero_`, `copy_`, `torch.tensor`, `full`, ...) may not be
  used to produce it.
- Required: the default overload. Left out: `scalar_tensor.out`.
"""

import torch

from kgb.operators import Case

VERSION = 1

# Its whole job is a fill: the value must come from a Triton kernel.
DENIED_TORCH_OPS = ("aten::fill_", "aten::zero_", "aten::copy_", "aten::lift_fresh",
                    "aten::zeros", "aten::zeros_like", "aten::new_zeros")

SIGNATURES = '''
def scalar_tensor(s: float | int | bool, *, dtype: torch.dtype | None = None, layout: torch.layout | None = None, device: torch.device | None = None, pin_memory: bool | None = None) -> torch.Tensor:
    """aten::scalar_tensor(Scalar s, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
'''


def _case(name, tag, s, dtype=None):
    return Case(name, tag, dict(s=s, dtype=dtype))


CASES = [
    _case("smoke-float", "smoke", 3.5),
    _case("smoke-int64", "smoke", 7, "int64"),
    _case("smoke-bool", "smoke", True, "bool"),
    _case("f16", "check", -2.25, "float16"),
    _case("f16-rounded", "check", 0.1, "float16"),
    _case("bf16-rounded", "check", 1e-3, "bfloat16"),
    _case("f64-exact", "check", 0.1, "float64"),
    _case("f32-rounded", "check", 1 / 3),
    _case("f32-large", "check", 1e10, "float32"),
    _case("inf", "check", float("inf"), "float32"),
    _case("nan-f16", "check", float("nan"), "float16"),
    _case("trunc-int64", "check", 2.7, "int64"),
    _case("trunc-negative-int32", "check", -2.7, "int32"),
    _case("int16", "check", 300, "int16"),
    _case("uint8", "check", 255, "uint8"),
    _case("int8-negative", "check", -128, "int8"),
    _case("int64-big", "check", 2**62 + 3, "int64"),
    _case("int-to-f16", "check", 3, "float16"),
    _case("int-default", "check", 5),
    _case("bool-default", "check", True),
    _case("float-to-bool", "check", 0.5, "bool"),
    _case("zero-to-bool", "check", 0.0, "bool"),
    _case("bench-float", "bench", 1.5),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"]) if p["dtype"] else None
    return dict(s=p["s"], dtype=dtype, layout=None, device=torch.device(device), pin_memory=None)


def reference(s, *, dtype=None, layout=None, device=None, pin_memory=None):
    return torch.ops.aten.scalar_tensor.default(s, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)
