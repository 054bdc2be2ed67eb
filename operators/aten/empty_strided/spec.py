"""An uninitialised tensor with given strides: `aten::empty_strided` (default overload).

Returns a new tensor with shape `size` and exactly the strides `stride` (in elements),
whose values are left uninitialised: nothing needs to be computed, so this operator needs
no Triton kernel (a solution may launch none).

- `len(stride) == len(size)`; `[]`/`[]` gives a 0-d tensor; a 0 in `size` gives an empty
  tensor. Strides may leave gaps (padded rows), be 0 (broadcast dims, several indices
  share one element) or overlap; all are non-negative.
- The storage must be large enough for every element the strides address: at least
  `1 + sum((size[i] - 1) * stride[i])` elements past the result's storage offset when the
  tensor is non-empty.
- Result dtype: `dtype` when given, else the default floating dtype (float32). `device`
  says where it lives; `layout` (strided or None) and `pin_memory` (None or False) can be
  ignored.
- Checked: shape, strides, dtype, device and storage size; never the values.
- Allocate the storage yourself (for example `torch.empty` of the right length) and view
  it with `as_strided`: PyTorch's `empty_strided` and `new_empty_strided` are not allowed
  here.

Required entry point: `empty_strided`. Not required: `empty_strided.out`.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def empty_strided(size: list[int], stride: list[int], *, dtype: torch.dtype | None = None, layout: torch.layout | None = None, device: torch.device | None = None, pin_memory: bool | None = None) -> torch.Tensor:
    """aten::empty_strided(SymInt[] size, SymInt[] stride, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
'''

KERNEL_REQUIRED = False

# The op's whole job is this call: the candidate must size the storage itself.
DENIED_TORCH_OPS = ("aten::empty_strided", "aten::new_empty_strided")


def _case(name, tag, size, stride, dtype=None):
    return Case(name, tag, dict(size=size, stride=stride, dtype=dtype))


# Floating smoke cases have gaps in their strides: the self-test's all-zero stand-in is
# then contiguous, and fails on strides as it should.
CASES = [
    _case("smoke-padded-rows", "smoke", [4, 5], [8, 1]),
    _case("smoke-column-major-int", "smoke", [3, 4, 5], [1, 3, 12], "int64"),
    _case("smoke-f16-gaps", "smoke", [2, 3, 4], [40, 12, 2], "float16"),
    _case("scalar", "check", [], []),
    _case("empty", "check", [0, 5], [5, 1]),
    _case("empty-odd-strides", "check", [3, 0, 2], [100, 7, 1], "bfloat16"),
    _case("contiguous", "check", [7, 129], [129, 1], "float16"),
    _case("broadcast-zero-stride", "check", [4, 5, 6], [0, 6, 1]),
    _case("overlapping", "check", [10, 4], [2, 1], "int32"),
    _case("channels-last", "check", [2, 3, 17, 19], [969, 1, 57, 3], "bfloat16"),
    _case("transposed", "check", [1024, 4096], [1, 1024], "float32"),
    _case("bool", "check", [5, 7], [16, 2], "bool"),
    _case("size-one-dims", "check", [1, 8, 1], [123, 1, 456], "float32"),
    _case("bench-f32", "bench", [8192, 8192], [8192, 1]),
    _case("bench-bf16-padded", "bench", [4096, 11008], [11072, 1], "bfloat16"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"]) if p["dtype"] else None
    return dict(
        size=list(p["size"]), stride=list(p["stride"]), dtype=dtype, device=torch.device(device)
    )


reference = torch.ops.aten.empty_strided.default


def compare(actual, expected, case, inputs):
    a, e = actual["return"], expected["return"]
    if not isinstance(a, torch.Tensor):
        return f"return value: expected a tensor, got {type(a).__name__}"
    for what, got, want in (
        ("shape", tuple(a.shape), tuple(e.shape)),
        ("stride", a.stride(), e.stride()),
        ("dtype", a.dtype, e.dtype),
        ("device", a.device.type, e.device.type),
    ):
        if got != want:
            return f"return value: {what} {got}, expected {want}"
    if a.numel():
        needed = (
            a.storage_offset()
            + 1
            + sum((n - 1) * s for n, s in zip(a.shape, a.stride(), strict=True))
        )
        if a.untyped_storage().nbytes() < needed * a.itemsize:
            return f"return value: storage of {a.untyped_storage().nbytes()} bytes, needs {needed * a.itemsize}"
    return None
