"""Ones with another tensor's dtype and device: `aten::new_ones` (default overload).

Returns a new contiguous tensor of shape `size` (a list of ints; `[]` gives a 0-d
tensor, a 0 in it gives an empty tensor) with every element one (True for bool).
`self` only supplies defaults: its values are never read and it must not be modified.

- Result dtype: `dtype` when given, else `self.dtype` (any dtype: float16, bfloat16,
  float32, int32, int64, bool...).
- Result device: `device` when given, else `self.device`.
- `layout` (strided or None) and `pin_memory` (None or False) can be ignored.
- The ones must be written by a Triton kernel: PyTorch may allocate the result
  (`torch.empty`, `Tensor.new_empty`) but its fill, zero, copy and clone ops are not
  allowed here.

Required entry point: `new_ones`. Not required: `new_ones.out`.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def new_ones(self: torch.Tensor, size: list[int], *, dtype: torch.dtype | None = None, layout: torch.layout | None = None, device: torch.device | None = None, pin_memory: bool | None = None) -> torch.Tensor:
    """aten::new_ones(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
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


def _case(name, tag, self_shape, size, dtype="float32", out_dtype=None):
    return Case(name, tag, dict(self_shape=self_shape, size=size, dtype=dtype, out_dtype=out_dtype))


CASES = [
    _case("smoke-f32", "smoke", [3, 4], [5, 37]),
    _case("smoke-int64-to-f16", "smoke", [7], [2, 3, 9], "int64", out_dtype="float16"),
    _case("attention-mask-bf16", "check", [2, 8], [2, 1, 77, 77], "bfloat16"),
    _case("scalar", "check", [5], [], "float16"),
    _case("empty", "check", [5], [3, 0]),
    _case("from-scalar-self", "check", [], [4099]),
    _case("int32", "check", [1], [12345], "int32"),
    _case("int64", "check", [3], [17, 129], "int64"),
    _case("bool", "check", [2, 2], [31, 33], "bool"),
    _case("f32-to-bool", "check", [2], [1000], out_dtype="bool"),
    _case("bench-f32", "bench", [1], [8192, 8192]),
    _case("bench-bf16", "bench", [1], [32, 32, 256, 128], "bfloat16"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    x = (torch.randn(p["self_shape"], generator=gen) * 10).to(dtype).to(device)
    inputs = dict(self=x, size=list(p["size"]))
    if p["out_dtype"]:
        inputs["dtype"] = getattr(torch, p["out_dtype"])
    return inputs


reference = torch.ops.aten.new_ones.default
