"""Reshape, as a view when possible: `aten::reshape` (default overload).

Returns a tensor with shape `shape` holding `self`'s elements in the same row-major
(C) order: element k of `self.flatten()` is element k of the result's flatten().

- `shape` is a list of ints whose product equals `self.numel()`; at most one entry may be
  -1, which is inferred from the others. `[]` gives a 0-d tensor (from a one-element
  tensor).
- View or copy, exactly as ATen decides: when the new shape can be expressed over
  `self`'s existing strides (always for contiguous `self`; often for sliced or expanded
  `self`, e.g. splitting or merging dims whose strides chain), the result must be a
  view sharing `self`'s storage, with the strides and storage offset such a view has.
  Only when no such view exists (e.g. flattening a transposed matrix) is the result a new
  tensor holding a copy; the copy must be made by a Triton kernel. Viewing is possible
  exactly when `self.view(shape)` would succeed.
- `self` can have any dtype (float16, bfloat16, float32, int64, bool...), be 0-d, empty,
  non-contiguous (transposed, sliced, channels-last) or expanded (stride 0), and have a
  storage offset. It must not be modified.
- PyTorch's `reshape`, `clone`, `contiguous` and `copy_` are not allowed here; `view`
  and `as_strided` are.
- Checked: shape, dtype, device and values; for a view also that it shares `self`'s
  storage at the right offset with the right strides (except on dims of size 1); for a
  copy that it does not share `self`'s storage.

Required entry point: `reshape`. A view needs no Triton kernel, so a call may launch none.
"""

import torch

from kgb.aten_families.results import tensor_form
from kgb.aten_families.views import same_values
from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def reshape(self: torch.Tensor, shape: list[int]) -> torch.Tensor:
    """aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)"""
'''

# Views launch nothing; copies are held to Triton by denying PyTorch's copy ops.
KERNEL_REQUIRED = False
DENIED_TORCH_OPS = (
    "aten::reshape",
    "aten::clone",
    "aten::contiguous",
    "aten::copy_",
    "aten::_reshape_copy",
)


def _case(name, tag, shape, new_shape, dtype="float32", layout="contiguous"):
    return Case(name, tag, dict(shape=shape, new_shape=new_shape, dtype=dtype, layout=layout))


CASES = [
    _case("smoke-view", "smoke", [4, 6], [2, 12]),
    _case("smoke-copy-transposed", "smoke", [5, 7], [35], "float32", "transposed"),
    _case("smoke-infer-f16", "smoke", [3, 4, 5], [-1, 10], "float16"),
    _case("merge-heads-bf16", "check", [2, 77, 12, 64], [2, 77, 768], "bfloat16"),
    _case(
        "merge-heads-transposed",
        "check",
        [2, 77, 12, 64],
        [2, 77, -1],
        "float16",
        "heads_transposed",
    ),
    _case("split-heads", "check", [4, 33, 512], [4, 33, 8, -1]),
    _case("sliced-view", "check", [12, 20], [12, 2, 10], "float32", "sliced"),
    _case("sliced-copy", "check", [12, 20], [240], "bfloat16", "sliced"),
    _case("transposed-copy-odd", "check", [129, 257], [257, 129], "float32", "transposed"),
    _case("expanded-copy", "check", [3, 5], [15], "float32", "expanded"),
    _case("expanded-view", "check", [3, 5], [3, 5, 1], "float32", "expanded"),
    _case("channels-last-flatten", "check", [2, 3, 9, 11], [2, -1], "float32", "channels_last"),
    _case("permuted-5d", "check", [2, 3, 4, 5, 6], [6, 120], "float16", "permuted"),
    _case("scalar-to-1", "check", [], [1]),
    _case("one-to-scalar", "check", [1, 1], [], "int64"),
    _case("empty", "check", [0, 4], [2, 0, 2]),
    _case("int64-copy", "check", [33, 65], [-1], "int64", "transposed"),
    _case("bool-copy", "check", [17, 9], [9, 17], "bool", "transposed"),
    _case("same-shape", "check", [7, 8], [7, 8], "int32", "sliced"),
    _case(
        "bench-merge-heads-copy",
        "bench",
        [8, 2048, 32, 128],
        [8, 2048, 4096],
        "bfloat16",
        "heads_transposed",
    ),
    _case("bench-transpose-copy", "bench", [8192, 8192], [-1], "float32", "transposed"),
    _case("bench-view", "bench", [8, 2048, 4096], [8, 2048, 32, 128], "bfloat16"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    shape, layout = list(p["shape"]), p["layout"]
    if layout == "transposed":
        shape[-2], shape[-1] = shape[-1], shape[-2]
    elif layout == "heads_transposed":  # attention output [B, H, S, D] seen as [B, S, H, D]
        shape[1], shape[2] = shape[2], shape[1]
    elif layout == "sliced":
        shape[-1] *= 2
    elif layout == "expanded":
        shape = shape[1:]
    elif layout == "permuted":
        shape = shape[::-1]
    x = torch.randn(shape, generator=gen) * 10
    x = ((x > 0) if dtype == torch.bool else x.to(dtype)).to(device)
    if layout == "transposed":
        x = x.transpose(-2, -1)
    elif layout == "heads_transposed":
        x = x.transpose(1, 2)
    elif layout == "sliced":
        x = x[..., 1::2]
    elif layout == "expanded":
        x = x.expand(p["shape"])
    elif layout == "permuted":
        x = x.permute(*reversed(range(x.dim())))
    elif layout == "channels_last":
        x = x.to(memory_format=torch.channels_last)
    return dict(self=x, shape=list(p["new_shape"]))


reference = torch.ops.aten.reshape.default


def compare(actual, expected, case, inputs):
    a, e, base = actual["return"], expected["return"], inputs["self"]
    message = tensor_form(a, e)
    if message:
        return message
    if a.numel() and not same_values(a, e):
        return "return value: values differ from the reference"
    shares = a.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
    if e._is_view():  # ATen viewed: the answer must be the same view
        if not shares:
            return "return value: a copy, but this reshape can be a view of self and must be"
        if a.numel():
            if a.storage_offset() != e.storage_offset():
                return f"return value: storage offset {a.storage_offset()}, expected {e.storage_offset()}"
            if any(
                n > 1 and sa != se
                for n, sa, se in zip(a.shape, a.stride(), e.stride(), strict=True)
            ):
                return f"return value: strides {a.stride()}, expected {e.stride()}"
    elif shares and a.numel():
        return "return value: shares self's storage, but no view can express this reshape: copy it"
    return None
