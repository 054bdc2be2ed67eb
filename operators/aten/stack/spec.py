"""Stack tensors along a new dimension: `aten::stack`.

All `tensors` have the same shape S; the result has shape S with len(tensors) inserted at
position `dim`, and result.select(dim, k) equals tensors[k]. `dim` is in
[-(len(S) + 1), len(S)]; negative values count from the end of the result's shape.
- dtypes may differ: the result has the promoted dtype (as torch.promote_types over all
  inputs, e.g. float16 with float32 gives float32) and every value is converted to it.
- inputs may be 0-d (the result is then 1-D), empty, or non-contiguous views; the same
  tensor may appear several times.
The result is a new tensor (its strides are free); inputs must not be modified.
This is pure data movement: PyTorch's own copy ops (`copy_`, `clone`, `contiguous`,
`cat`) are not allowed; the data must be moved by Triton kernels.

Required overload: `stack` (default). Left out: `stack.out`.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def stack(tensors: list[torch.Tensor], dim: int = 0) -> torch.Tensor:
    """aten::stack(Tensor[] tensors, int dim=0) -> Tensor"""
'''

DENIED_TORCH_OPS = ("aten::copy_", "aten::clone", "aten::contiguous", "aten::cat", "aten::stack")
# dtype arithmetic only (no tensor data): the promoted dtype of the inputs
ALLOWED_TORCH_OPS = ("aten::promote_types", "aten::result_type")


def _case(name, tag, shape, count, dim, dtypes=("float32",), transpose=False, seed=0):
    return Case(name, tag, dict(shape=shape, count=count, dim=dim, dtypes=dtypes, transpose=transpose), seed=seed)


CASES = [
    _case("smoke-f32", "smoke", (3, 5), 2, 0),
    _case("smoke-last-mixed", "smoke", (4, 3), 3, -1, ("float16", "float32"), seed=1),
    _case("heads-bf16", "check", (2, 77, 64), 12, 1, ("bfloat16",)),
    _case("last-dim-f32", "check", (33, 65), 4, 2),
    _case("middle-f16", "check", (5, 7, 9), 3, -2, ("float16",)),
    _case("scalars", "check", (), 7, 0),
    _case("empty", "check", (0, 4), 3, 1),
    _case("transposed", "check", (40, 30), 3, 0, transpose=True),
    _case("int-float", "check", (10, 4), 2, 0, ("int64", "float16")),
    _case("bool", "check", (100,), 5, 1, ("bool",)),
    _case("bench-heads-bf16", "bench", (8, 4096, 128), 32, 1, ("bfloat16",)),
    _case("bench-pair-f32", "bench", (4096, 4096), 2, -1),
]


def _tensor(shape, dtype, gen):
    if dtype == "bool":
        return torch.rand(shape, generator=gen) < 0.5
    if dtype in ("int64", "int32"):
        return torch.randint(-1000, 1000, shape, generator=gen, dtype=getattr(torch, dtype))
    return torch.randn(shape, generator=gen).to(getattr(torch, dtype))


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    shape, dtypes = tuple(p["shape"]), p["dtypes"]
    tensors = []
    for k in range(p["count"]):
        dtype = dtypes[k % len(dtypes)]
        if p["transpose"] and k % 2 == 0:
            tensors.append(_tensor(shape[::-1], dtype, gen).to(device).t())
        else:
            tensors.append(_tensor(shape, dtype, gen).to(device))
    return dict(tensors=tensors, dim=p["dim"])


def reference(tensors, dim=0):
    return torch.ops.aten.stack(tensors, dim)
