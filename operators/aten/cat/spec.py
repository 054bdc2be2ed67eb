"""Concatenate tensors along a dimension: `aten::cat`.

The result joins `tensors` in order along `dim`: its size there is the sum of their sizes,
and all other sizes are the common ones. Inputs:
- a non-empty list of tensors with the same number of dimensions (>= 1) and equal sizes
  except along `dim`; `dim` may be negative. Any input may be empty along `dim`.
- legacy rule: a 1-D tensor of shape (0,) is ignored whatever the other shapes are.
- dtypes may differ: the result has the promoted dtype (as torch.promote_types over all
  inputs: e.g. float16 with float32 gives float32, int64 with bfloat16 gives bfloat16,
  bool with int32 gives int32); every value is converted to it.
- inputs may be non-contiguous views (transposed, sliced) and the same tensor may appear
  several times.
The result is a new tensor (its strides are free); inputs must not be modified.
This is pure data movement: PyTorch's own copy ops (`copy_`, `clone`, `contiguous`) are
not allowed; the data must be moved by Triton kernels.

Required overload: `cat` (default). Left out: `cat.out` and the Dimname overloads.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def cat(tensors: list[torch.Tensor], dim: int = 0) -> torch.Tensor:
    """aten::cat(Tensor[] tensors, int dim=0) -> Tensor"""
'''

DENIED_TORCH_OPS = ("aten::copy_", "aten::clone", "aten::contiguous", "aten::cat")
# dtype arithmetic only (no tensor data): the promoted dtype of the inputs
ALLOWED_TORCH_OPS = ("aten::promote_types", "aten::result_type")

# Each part: (shape, dtype) or (shape, dtype, "t") for a transposed view of that shape.


def _case(name, tag, parts, dim, seed=0):
    return Case(name, tag, dict(parts=parts, dim=dim), seed=seed)


CASES = [
    _case("smoke-f32", "smoke", [((3, 5), "float32"), ((2, 5), "float32")], 0),
    _case("smoke-mixed", "smoke", [((4, 3), "float16"), ((4, 6), "float32"), ((0,), "float32")], 1, seed=1),
    _case("kv-append-bf16", "check", [((2, 8, 100, 64), "bfloat16"), ((2, 8, 1, 64), "bfloat16")], 2),
    _case("channels-f16", "check", [((2, 64, 13, 13), "float16"), ((2, 32, 13, 13), "float16"), ((2, 3, 13, 13), "float16")], 1),
    _case("last-dim-f32", "check", [((5, 7, 33), "float32"), ((5, 7, 1), "float32"), ((5, 7, 100), "float32")], -1),
    _case("many-parts", "check", [((3, 17), "float32")] * 12, 0),
    _case("transposed", "check", [((40, 30), "float32", "t"), ((40, 50), "float32"), ((40, 7), "float32", "t")], 1),
    _case("empty-part", "check", [((4, 0, 6), "float32"), ((4, 3, 6), "float32")], 1),
    _case("all-empty", "check", [((0, 5), "float16"), ((0, 5), "float16")], 0),
    _case("int-float", "check", [((10, 4), "int64"), ((10, 4), "bfloat16")], 0),
    _case("int-bool", "check", [((9,), "bool"), ((7,), "int32")], 0),
    _case("int64-only", "check", [((300,), "int64"), ((1025,), "int64")], 0),
    _case("bench-kv-bf16", "bench", [((16, 32, 2000, 128), "bfloat16"), ((16, 32, 48, 128), "bfloat16")], 2),
    _case("bench-channels-f16", "bench", [((32, 256, 56, 56), "float16"), ((32, 256, 56, 56), "float16")], 1),
    _case("bench-rows-f32", "bench", [((8192, 4096), "float32")] * 4, 0),
]


def _tensor(shape, dtype, gen):
    if dtype == "bool":
        return torch.rand(shape, generator=gen) < 0.5
    if dtype in ("int64", "int32"):
        return torch.randint(-1000, 1000, shape, generator=gen, dtype=getattr(torch, dtype))
    return torch.randn(shape, generator=gen).to(getattr(torch, dtype))


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    tensors = []
    for part in case.params["parts"]:
        shape, dtype = tuple(part[0]), part[1]
        if len(part) > 2:
            tensors.append(_tensor(shape[::-1], dtype, gen).to(device).t())
        else:
            tensors.append(_tensor(shape, dtype, gen).to(device))
    return dict(tensors=tensors, dim=case.params["dim"])


def reference(tensors, dim=0):
    return torch.ops.aten.cat(tensors, dim)
