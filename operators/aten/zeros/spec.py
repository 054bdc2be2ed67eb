"""A tensor of zeros: `aten::zeros` (default overload).

Returns a new contiguous tensor of shape `size` (a list of ints; `[]` gives a 0-d tensor,
a 0 in it gives an empty tensor) with every element equal to zero (False for bool).

- Result dtype: `dtype` when given, else the default floating dtype (float32). Any dtype
  may be requested: float16, bfloat16, float32, int32, int64, uint8, bool...
- `device` says where the result lives; `layout` (strided or None) and `pin_memory`
  (None or False) can be ignored.
- The zeros must be written by a Triton kernel: PyTorch may allocate the result
  (`torch.empty`) but its fill, zero, copy and clone ops are not allowed here. Freshly
  allocated memory is not zero on a GPU.

Required entry point: `zeros`. Not required: `zeros.out` and `zeros.names`.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def zeros(size: list[int], *, dtype: torch.dtype | None = None, layout: torch.layout | None = None, device: torch.device | None = None, pin_memory: bool | None = None) -> torch.Tensor:
    """aten::zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
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


def _case(name, tag, size, dtype=None):
    return Case(name, tag, dict(size=size, dtype=dtype))


# The smoke cases use integer and bool results on purpose: the self-test checks that an
# all-zero floating answer fails, which cannot hold for this operator.
CASES = [
    _case("smoke-int64", "smoke", [5, 37], "int64"),
    _case("smoke-bool", "smoke", [3, 1, 9], "bool"),
    _case("default-f32", "check", [33, 65]),
    _case("scalar", "check", []),
    _case("empty", "check", [0, 7]),
    _case("f16", "check", [4, 4099], "float16"),
    _case("bf16", "check", [2, 16, 1023], "bfloat16"),
    _case("int32", "check", [12345], "int32"),
    _case("uint8", "check", [129, 3], "uint8"),
    _case("kv-cache-f16", "check", [2, 8, 256, 64], "float16"),
    _case("bench-f32", "bench", [8192, 8192]),
    _case("bench-bf16", "bench", [32, 32, 256, 128], "bfloat16"),
    _case("bench-int64", "bench", [2**25], "int64"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"]) if p["dtype"] else None
    return dict(size=list(p["size"]), dtype=dtype, device=torch.device(device))


reference = torch.ops.aten.zeros.default
