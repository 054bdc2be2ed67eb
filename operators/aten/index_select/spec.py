"""Select slices along one dimension: `aten::index_select`.

out = self with dimension `dim` replaced by the positions in `index`: for every j,
out[..., j, ...] = self[..., index[j], ...] (the `...` are the other dimensions, unchanged).
- `index` is a 1-D (or 0-d, meaning one element) int64 or int32 tensor; its values are in
  [0, self.size(dim)) and may repeat and come in any order. It may be a strided view.
- `dim` may be negative (counted from the end). The result has self's shape except
  size(dim) = index.numel(), and self's dtype (any dtype: floating, integer, bool).
- `self` may be non-contiguous (a transposed view). A 0-d `self` acts as a 1-element
  vector along dim 0 and gives a 0-d result. Empty `index` or empty `self` give an empty
  result.
- The result is a new tensor; `self` and `index` must not be modified.

Required overload: `index_select` (default). Left out: `index_select.out` and the
Dimname overload.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def index_select(self: torch.Tensor, dim: int, index: torch.Tensor) -> torch.Tensor:
    """aten::index_select(Tensor self, int dim, Tensor index) -> Tensor"""
'''


def _case(name, tag, shape, dim, count, dtype="float32", idx="int64", transpose=False, seed=0):
    params = dict(shape=shape, dim=dim, count=count, dtype=dtype, idx=idx, transpose=transpose)
    return Case(name, tag, params, seed=seed)


CASES = [
    _case("smoke-rows-f32", "smoke", (11, 7), 0, 5),
    _case("smoke-cols-f16", "smoke", (6, 9), -1, 4, "float16", seed=1),
    _case("embedding-rows-bf16", "check", (1000, 768), 0, 300, "bfloat16"),
    _case("middle-dim-f32", "check", (4, 77, 33), 1, 50),
    _case("last-dim-f16", "check", (3, 5, 129), 2, 200, "float16"),
    _case("int32-index", "check", (257, 31), 0, 100, idx="int32"),
    _case("strided-index", "check", (50, 13), 0, 20, idx="strided"),
    _case("scalar-index", "check", (20, 6), 1, None),
    _case("zero-dim-self", "check", (), 0, 1),
    _case("empty-index", "check", (8, 5), 0, 0),
    _case("transposed", "check", (64, 40), 0, 33, transpose=True),
    _case("int64-data", "check", (100, 3), 0, 64, "int64"),
    _case("bool-data", "check", (7, 100), 1, 20, "bool"),
    _case("bench-vocab-f16", "bench", (50257, 1024), 0, 16384, "float16"),
    _case("bench-cols-f32", "bench", (4096, 8192), 1, 2048),
]


def _tensor(shape, dtype, gen):
    if dtype == "bool":
        return torch.rand(shape, generator=gen) < 0.5
    if dtype == "int64":
        return torch.randint(-1000, 1000, shape, generator=gen)
    return torch.randn(shape, generator=gen).to(getattr(torch, dtype))


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    shape = tuple(p["shape"])
    x = _tensor(shape[::-1], p["dtype"], gen).t() if p["transpose"] else _tensor(shape, p["dtype"], gen)
    size = shape[p["dim"]] if shape else 1
    if p["count"] is None:
        index = torch.randint(0, size, (), generator=gen)
    elif p["idx"] == "strided":
        index = torch.randint(0, size, (2 * p["count"],), generator=gen).to(device)[::2]
    else:
        index = torch.randint(0, size, (p["count"],), generator=gen)
        index = index.to(torch.int32) if p["idx"] == "int32" else index
    return dict(self=x.to(device), dim=p["dim"], index=index.to(device))


def reference(self, dim, index):
    return torch.ops.aten.index_select(self, dim, index)
