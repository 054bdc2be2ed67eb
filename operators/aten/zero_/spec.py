"""Zero a tensor in place: `aten::zero_` (default overload).

Sets every element of `self` to zero (False for bool) and returns `self` itself (the same
tensor object, or at least a tensor with the same storage, offset, shape and strides).

- `self` can have any dtype (float16, bfloat16, float32, int32, int64, uint8, bool), any
  rank (0-d and empty included) and any non-overlapping strides: a transposed tensor, a
  strided slice (`x[:, ::2]`), a column block of a wider matrix. Only the elements that
  `self` views may be written; the rest of its storage must stay untouched.
- The zeros must be written by a Triton kernel: PyTorch's own fill, zero, copy and clone
  ops are not allowed here (views are).

Required entry point: `zero_`.
"""

import torch

from kgb.aten_families.views import same_outside
from kgb.evaluate.correctness import compare_values
from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def zero_(self: torch.Tensor) -> torch.Tensor:
    """aten::zero_(Tensor(a!) self) -> Tensor(a!)"""
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


def _case(name, tag, shape, dtype, layout="contiguous"):
    return Case(name, tag, dict(shape=shape, dtype=dtype, layout=layout))


# An all-zero answer is right here; the smoke cases still fail a fresh zero tensor
# because the result must be self.
CASES = [
    _case("smoke-f32", "smoke", [5, 37], "float32"),
    _case("smoke-f16-sliced", "smoke", [6, 9], "float16", "sliced"),
    _case("smoke-int64-transposed", "smoke", [3, 17], "int64", "transposed"),
    _case("scalar", "check", [], "float32"),
    _case("empty", "check", [0, 5], "float32"),
    _case("grad-buffer-f32", "check", [1024, 1023], "float32"),
    _case("bf16-transposed", "check", [77, 129], "bfloat16", "transposed"),
    _case("f16", "check", [4099], "float16"),
    _case("column-block", "check", [512, 384], "float32", "column_block"),
    _case("sliced-3d", "check", [4, 33, 65], "bfloat16", "sliced"),
    _case("int32", "check", [513, 7], "int32", "transposed"),
    _case("bool", "check", [17, 33], "bool", "sliced"),
    _case("uint8", "check", [300], "uint8"),
    _case("bench-f32", "bench", [8192, 8192], "float32"),
    _case("bench-bf16-column-block", "bench", [16384, 2048], "bfloat16", "column_block"),
    _case("bench-f16", "bench", [32, 32, 256, 128], "float16"),
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
    x = (torch.randn(shape, generator=gen) * 10 + 1).to(dtype).to(device)
    if layout == "transposed":
        x = x.transpose(-2, -1)
    elif layout == "sliced":
        x = x[..., ::2]
    elif layout == "column_block":
        x = x[..., 64 : 64 + p["shape"][-1]]
    return dict(self=x)


reference = torch.ops.aten.zero_.default



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
        return "return value: zero_ must return self (the same storage, offset, shape and strides)"
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
