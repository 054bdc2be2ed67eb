"""Zeros shaped like a tensor: `aten::zeros_like` (default overload).

Returns a new tensor with the shape of `self` and every element zero (False for bool).
Only the shape (and, by default, dtype and device) of `self` matter; its values are never
read and `self` must not be modified.

- Result dtype: `dtype` when given, else `self.dtype`. Any dtype may occur (float16,
  bfloat16, float32, int32, int64, bool...).
- Result device: `device` when given, else `self.device`.
- `memory_format` (None means torch.preserve_format) chooses the result's strides as in
  `torch.empty_like`; only shape, dtype, device and values are checked, not strides.
- `self` may be non-contiguous (transposed, sliced), 0-d or empty.
- `layout` (strided or None) and `pin_memory` (None or False) can be ignored.
- The zeros must be written by a Triton kernel: PyTorch may allocate the result
  (`torch.empty_like`, `torch.empty`) but its fill, zero, copy and clone ops are not
  allowed here. Freshly allocated memory is not zero on a GPU.

Required entry point: `zeros_like`. Not required: `zeros_like.out`.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def zeros_like(self: torch.Tensor, *, dtype: torch.dtype | None = None, layout: torch.layout | None = None, device: torch.device | None = None, pin_memory: bool | None = None, memory_format: torch.memory_format | None = None) -> torch.Tensor:
    """aten::zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor"""
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


def _case(
    name, tag, shape, dtype="float32", layout="contiguous", out_dtype=None, memory_format=None
):
    params = dict(
        shape=shape, dtype=dtype, layout=layout, out_dtype=out_dtype, memory_format=memory_format
    )
    return Case(name, tag, params)


# The smoke cases use integer and bool results on purpose: the self-test checks that an
# all-zero floating answer fails, which cannot hold for this operator.
CASES = [
    _case("smoke-int64", "smoke", [5, 37], "int64"),
    _case("smoke-to-bool-transposed", "smoke", [7, 9], "float32", "transposed", out_dtype="bool"),
    _case("f32", "check", [33, 65]),
    _case("scalar", "check", [], "float16"),
    _case("empty", "check", [0, 7], "bfloat16"),
    _case("f16-transposed", "check", [129, 1000], "float16", "transposed"),
    _case("bf16-sliced", "check", [64, 4097], "bfloat16", "sliced"),
    _case("int32", "check", [12345], "int32"),
    _case("bool", "check", [31, 3], "bool"),
    _case("f16-to-f32", "check", [4, 4099], "float16", out_dtype="float32"),
    _case(
        "contiguous-format",
        "check",
        [65, 33],
        "float32",
        "transposed",
        memory_format="contiguous_format",
    ),
    _case("channels-last", "check", [2, 3, 17, 19], "float32", "channels_last"),
    _case("bench-f32", "bench", [8192, 8192]),
    _case("bench-bf16", "bench", [32, 32, 256, 128], "bfloat16"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    shape = list(p["shape"])
    if p["layout"] == "transposed":
        shape[-2], shape[-1] = shape[-1], shape[-2]
    elif p["layout"] == "sliced":
        shape[-1] *= 2
    x = (torch.randn(shape, generator=gen) * 10).to(dtype).to(device)
    if p["layout"] == "transposed":
        x = x.transpose(-2, -1)
    elif p["layout"] == "sliced":
        x = x[..., ::2]
    elif p["layout"] == "channels_last":
        x = x.to(memory_format=torch.channels_last)
    inputs = dict(self=x)
    if p["out_dtype"]:
        inputs["dtype"] = getattr(torch, p["out_dtype"])
    if p["memory_format"]:
        inputs["memory_format"] = getattr(torch, p["memory_format"])
    return inputs


reference = torch.ops.aten.zeros_like.default
