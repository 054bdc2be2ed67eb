"""Advanced indexing: `aten::index.Tensor`, what `self[i0, i1, ...]` does with tensor indices.

`indices` is a list with at most `self.ndim` entries (missing trailing entries mean None).
Entry k is either None (keep that dimension whole, like `:`) or a tensor:
- an integer tensor (int64 or int32) of any shape, holding positions along its dimension of
  `self`; negative values count from the end (-1 is the last). Values are always in range
  [-size, size); behaviour for other values is not tested.
- a bool mask: a mask of m dimensions covers the next m dimensions of `self` (its shape
  must equal theirs) and is equivalent to the m integer tensors of its nonzero coordinates,
  listed in row-major order (so the result's size there depends on the number of True
  values). uint8 masks are deprecated and not tested.
All integer tensors (after masks are expanded) broadcast together to one shape B; every
position of B picks one element along each indexed dimension. The result's shape is:
- if the indexed dimensions are adjacent: self.shape before them, then B, then
  self.shape after them (x[:, idx] with idx of shape (2, 3) on a (4, 5, 6) tensor gives
  (4, 2, 3, 6));
- otherwise: B first, then the non-indexed dimensions of self in order.
The result is a new tensor with the dtype of `self` (any dtype: floating, integer, bool),
which may be non-contiguous (transposed views) and has at least one dimension. Index
tensors may be broadcast views (stride 0). Empty results (an empty index tensor, a mask
with no True value) are valid. `self` and the indices must not be modified.

Required overload: `index.Tensor`. Left out: `index.Tensor_hacked_twin` (the same without
None entries), `index.Tensor_out`, and the TorchScript list/str overloads.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def index_Tensor(self: torch.Tensor, indices: list[torch.Tensor | None]) -> torch.Tensor:
    """aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor"""
'''

# An index entry: None, ("i64" | "i32", shape, dim, negative_allowed) or ("bool", shape).


def _case(name, tag, shape, dtype, indices, transpose=False, seed=0):
    return Case(name, tag, dict(shape=shape, dtype=dtype, indices=indices, transpose=transpose), seed=seed)


CASES = [
    _case("smoke-rows-f32", "smoke", (9, 7), "float32", [("i64", (5,), 0, True)]),
    _case("smoke-mask-f16", "smoke", (6, 5), "float16", [None, ("bool", (5,))], seed=1),
    _case("embedding-like-bf16", "check", (1000, 64), "bfloat16", [("i64", (8, 33), 0, False)]),
    _case("middle-dim-f32", "check", (4, 50, 6), "float32", [None, ("i64", (2, 3), 1, True)]),
    _case("split-dims-f32", "check", (6, 7, 8), "float32", [("i64", (5,), 0, False), None, ("i64", (5,), 2, True)]),
    _case("broadcast-f16", "check", (9, 11, 3), "float16", [("i64", (4, 1), 0, True), ("i64", (1, 5), 1, False)]),
    _case("all-dims-i64", "check", (13, 17), "int64", [("i64", (100,), 0, True), ("i64", (100,), 1, True)]),
    _case("int32-index", "check", (300, 33), "float32", [("i32", (129,), 0, False)]),
    _case("scalar-index", "check", (10, 3, 4), "float32", [None, ("i64", (), 1, False)]),
    _case("empty-index", "check", (10, 3), "float32", [("i64", (0,), 0, False)]),
    _case("transposed", "check", (37, 19), "float16", [("i64", (21,), 0, False)], transpose=True),
    _case("mask-2d-bf16", "check", (16, 10, 3), "bfloat16", [("bool", (16, 10))]),
    _case("mask-full-f32", "check", (33, 65), "float32", [("bool", (33, 65))]),
    _case("mask-empty", "check", (5, 6), "float32", [("bool", (5,), 0.0)]),
    _case("mask-and-int", "check", (8, 12), "float32", [("bool", (8,), 1.0), ("i64", (8,), 1, True)]),
    _case("bool-data", "check", (40, 3), "bool", [("i64", (17,), 0, False)]),
    _case("4d-channels", "check", (2, 8, 5, 5), "float32", [None, ("i64", (3,), 1, False), None, ("i64", (3,), 3, False)]),
    _case("bench-rows-f16", "bench", (32000, 4096), "float16", [("i64", (8192,), 0, False)]),
    _case("bench-mask-f32", "bench", (4096, 4096), "float32", [("bool", (4096, 4096))]),
    _case("bench-middle-bf16", "bench", (64, 2048, 128), "bfloat16", [None, ("i64", (1024,), 1, False)]),
]


def _tensor(shape, dtype, gen):
    if dtype == "bool":
        return torch.rand(shape, generator=gen) < 0.5
    if dtype in ("int64", "int32"):
        return torch.randint(-1000, 1000, shape, generator=gen, dtype=getattr(torch, dtype))
    return torch.randn(shape, generator=gen).to(getattr(torch, dtype))


def _index(entry, shape, gen, device):
    if entry is None:
        return None
    if entry[0] == "bool":
        p = entry[2] if len(entry) > 2 else 0.5
        return (torch.rand(entry[1], generator=gen) < p).to(device)
    kind, ishape, dim, neg = entry
    size = shape[dim]
    t = torch.randint(-size if neg else 0, size, ishape, generator=gen)
    return t.to(torch.int32 if kind == "i32" else torch.int64).to(device)


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    shape = tuple(p["shape"])
    if p["transpose"]:
        x = _tensor(shape[::-1], p["dtype"], gen).to(device).t()
    else:
        x = _tensor(shape, p["dtype"], gen).to(device)
    return dict(self=x, indices=[_index(e, shape, gen, device) for e in p["indices"]])


def reference(self, indices):
    return torch.ops.aten.index.Tensor(self, indices)
