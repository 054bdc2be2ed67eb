"""Index of the largest element: `aten::argmax`.

`argmax(self, dim=None, keepdim=False)` returns int64 indices.

- With an integer `dim` (negative counts from the end), the result holds, for each
  position of the other dimensions, the index along `dim` of the largest element. With
  `keepdim` that dimension stays with size 1, otherwise it is removed.
- With `dim=None` the tensor is read as flattened in row-major (logical) order, whatever
  its strides, and the result is the flat index of the largest element: a 0-d tensor, or a
  tensor of shape [1, 1, ...] (one 1 per dimension of `self`) when `keepdim` is True.
- Ties: the smallest index wins (the first occurrence).
- NaN counts as larger than every number: if a group holds NaN, the index of its first NaN
  is returned.
- Inputs: float16, bfloat16, float32 and integer types (not bool), any strides. A 0-d
  `self` gives 0 (dim None, 0 or -1).
- The reduced dimension must be non-empty (PyTorch raises otherwise); other empty
  dimensions give an empty result.
- The result is a new tensor; `self` must not be modified.
- Required: the default overload. Left out: `argmax.out`.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def argmax(self: torch.Tensor, dim: int | None = None, keepdim: bool = False) -> torch.Tensor:
    """aten::argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor"""
'''


def _case(name, tag, shape, dtype, dim=None, keepdim=False, transpose=False, nans=0.0, ties=False, seed=0):
    params = dict(shape=shape, dtype=dtype, dim=dim, keepdim=keepdim, transpose=transpose, nans=nans, ties=ties)
    return Case(name, tag, params, seed=seed)


CASES = [
    _case("smoke-rows-f32", "smoke", (7, 33), "float32", dim=-1),
    _case("smoke-all-f16-ties", "smoke", (5, 9, 6), "float16", ties=True, seed=1),
    _case("smoke-dim0-int32", "smoke", (40, 6), "int32", dim=0, keepdim=True, seed=2),
    _case("all-f32", "check", (1000, 999), "float32"),
    _case("all-bf16-ties", "check", (3, 5000), "bfloat16", ties=True),
    _case("all-transposed", "check", (300, 129), "float32", transpose=True, keepdim=True),
    _case("all-nan", "check", (100, 1000), "float32", nans=2e-5),
    _case("rows-f16", "check", (1823, 781), "float16", dim=1),
    _case("rows-nan", "check", (64, 4099), "float32", dim=1, keepdim=True, nans=1e-4),
    _case("vocab-bf16", "check", (8, 32000), "bfloat16", dim=-1),
    _case("cols-f32", "check", (2000, 300), "float32", dim=0),
    _case("cols-ties-f16", "check", (300, 200), "float16", dim=0, ties=True),
    _case("middle-f32", "check", (8, 129, 33), "float32", dim=-2),
    _case("transposed-rows", "check", (257, 300), "float32", dim=1, transpose=True),
    _case("int64-rows", "check", (50, 600), "int64", dim=1),
    _case("int8-all", "check", (77, 33), "int8"),
    _case("uint8-cols", "check", (300, 50), "uint8", dim=0),
    _case("scalar", "check", (), "float32"),
    _case("scalar-dim", "check", (), "float32", dim=0, keepdim=True),
    _case("empty-kept", "check", (0, 7), "float32", dim=1),
    _case("bench-all-f32", "bench", (64 * 1024 * 1024,), "float32"),
    _case("bench-vocab-bf16", "bench", (1024, 128256), "bfloat16", dim=-1),
    _case("bench-cols-f16", "bench", (8192, 8192), "float16", dim=0),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    shape = tuple(reversed(p["shape"])) if p["transpose"] else tuple(p["shape"])
    if dtype.is_floating_point:
        x = torch.randn(shape, generator=gen) * 3
        if p["ties"]:  # few distinct values, so that maxima repeat
            x = torch.round(x.clamp(-3, 3))
        if p["nans"]:
            x[torch.rand(shape, generator=gen) < p["nans"]] = float("nan")
    else:
        info = torch.iinfo(dtype)
        x = torch.randint(max(info.min, -(2**40)), min(info.max, 2**40), shape, generator=gen)
    x = x.to(dtype).to(device)
    if p["transpose"]:
        x = x.t()
    return dict(self=x, dim=p["dim"], keepdim=p["keepdim"])


def reference(self, dim=None, keepdim=False):
    return torch.ops.aten.argmax.default(self, dim, keepdim)
