"""Fill a tensor in place with one value: `aten::fill_` (overloads `Scalar` and `Tensor`).

Sets every element of `self` to `value` and returns `self` itself (the same tensor
object, or at least a tensor with the same storage, offset, shape and strides).

- `fill__Scalar`: `value` is a Python bool, int or float (inf and nan included).
- `fill__Tensor`: `value` is a 0-d tensor (on the same device as `self`) whose dtype may
  differ from `self`'s; read it on the device rather than copying it back to the host.
- The value is converted to `self.dtype` as PyTorch converts a scalar: floats round to
  the nearest representable value; float -> integer truncates toward zero (2.75 -> 2,
  -2.75 -> -2); ints are exact, including int64 values beyond 2**31; for a bool tensor
  any nonzero value is True.
- `self` can have any dtype (float16, bfloat16, float32, int32, int64, uint8, bool), any
  rank (0-d and empty included) and any non-overlapping strides: a transposed tensor, a
  strided slice (`x[:, ::2]`), a column block of a wider matrix. Only the elements that
  `self` views may be written; the rest of its storage must stay untouched.
- The values must be written by a Triton kernel: PyTorch's own fill, zero, copy and clone
  ops are not allowed here (views and `.item()` are).

Required entry points: `fill__Scalar` and `fill__Tensor`.
"""

import torch

from kgb.aten_families.views import same_outside
from kgb.evaluate.correctness import compare_values
from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def fill__Scalar(self: torch.Tensor, value: bool | int | float) -> torch.Tensor:
    """aten::fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)"""


def fill__Tensor(self: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    """aten::fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)"""
'''

INOUT_ARGS = ("self",)

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


def _case(name, tag, shape, dtype, value, layout="contiguous", value_dtype=None):
    entry = "fill__Tensor" if value_dtype else "fill__Scalar"
    params = dict(shape=shape, dtype=dtype, value=value, layout=layout, value_dtype=value_dtype)
    return Case(name, tag, params, entry=entry)


CASES = [
    _case("smoke-f32", "smoke", [5, 37], "float32", 0.5),
    _case("smoke-f16-sliced", "smoke", [6, 9], "float16", -1.5, "sliced"),
    _case(
        "smoke-tensor-bf16", "smoke", [3, 17], "bfloat16", 2.25, "transposed", value_dtype="float32"
    ),
    _case("scalar", "check", [], "float32", 3.0),
    _case("empty", "check", [0, 5], "float32", 1.0),
    _case("neg-inf-f32", "check", [8, 1, 129, 129], "float32", float("-inf")),
    _case("nan-bf16", "check", [77, 77], "bfloat16", float("nan"), "transposed"),
    _case("f16-rounding", "check", [4099], "float16", 0.1),
    _case("column-block", "check", [512, 384], "float32", -3.5, "column_block"),
    _case("sliced-3d", "check", [4, 33, 65], "bfloat16", 1e-3, "sliced"),
    _case("int64-big", "check", [1000, 3], "int64", 2**40 + 3),
    _case("int32-trunc", "check", [513, 7], "int32", -2.75, "transposed"),
    _case("int-to-float", "check", [65, 65], "float16", 3),
    _case("bool", "check", [17, 33], "bool", True, "sliced"),
    _case("uint8", "check", [300], "uint8", 200),
    _case("tensor-int-to-f32", "check", [1023, 5], "float32", 7, value_dtype="int64"),
    _case("tensor-f32-to-int32", "check", [100], "int32", -9.5, value_dtype="float32"),
    _case("tensor-to-bool", "check", [31], "bool", 0.25, value_dtype="float32"),
    _case("tensor-scalar-self", "check", [], "float16", -0.125, value_dtype="float16"),
    _case("bench-f32", "bench", [8192, 8192], "float32", 0.0),
    _case("bench-bf16-column-block", "bench", [16384, 2048], "bfloat16", 1.0, "column_block"),
    _case(
        "bench-tensor-f16", "bench", [32, 32, 256, 128], "float16", -65504.0, value_dtype="float16"
    ),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    shape = list(p["shape"])
    layout = p["layout"]
    if layout == "transposed":
        shape[-2], shape[-1] = shape[-1], shape[-2]
    elif layout == "sliced":
        shape[-1] *= 2
    elif layout == "column_block":
        shape[-1] += 128
    x = (torch.randn(shape, generator=gen) * 10).to(dtype).to(device)
    if layout == "transposed":
        x = x.transpose(-2, -1)
    elif layout == "sliced":
        x = x[..., ::2]
    elif layout == "column_block":
        x = x[..., 64 : 64 + p["shape"][-1]]
    value = p["value"]
    if p["value_dtype"]:
        value = torch.tensor(value, dtype=getattr(torch, p["value_dtype"])).to(device)
    return dict(self=x, value=value)


reference = {
    "fill__Scalar": torch.ops.aten.fill_.Scalar,
    "fill__Tensor": torch.ops.aten.fill_.Tensor,
}



def compare(actual, expected, case, inputs):
    ret, self_ = actual["return"], inputs["self"]
    if not isinstance(ret, torch.Tensor):
        return f"return value: expected self, got {type(ret).__name__}"
    if not (
        ret.untyped_storage().data_ptr() == self_.untyped_storage().data_ptr()
        and ret.storage_offset() == self_.storage_offset()
        and ret.shape == self_.shape
        and ret.stride() == self_.stride()
    ):
        return "return value: fill_ must return self (the same storage, offset, shape and strides)"
    message, _, _ = compare_values(
        "argument self", actual["self"], expected["self"], case.reduction
    )
    if message:
        return message
    # a view as large as its storage (self is non-overlapping) leaves nothing outside it
    covers_storage = self_.numel() * self_.itemsize == self_.untyped_storage().nbytes()
    if not covers_storage and not same_outside(self_, expected["self"]):
        return "argument self: storage outside the view of self was modified"
    return None
