"""Write values at positions given along one dimension: `aten::scatter` (`src` and `value`).

The result is a copy of `self` in which, for every position c of `index`,
out[c with its `dim` coordinate replaced by index[c]] = src[c]  (scatter.src), or = value
(scatter.value). In 3-D with dim=0: out[index[i][j][k]][j][k] = src[i][j][k].
- `index` is an int64 tensor with the same number of dimensions as `self` (and `src`),
  with index.size(d) <= self.size(d) for d != dim and index.size(d) <= src.size(d) for
  every d: only the leading part of `src` of index's shape is read. Its values are in
  [0, self.size(dim)). When two positions write the same element, which one wins is
  unspecified; the cases never do that (a permutation along dim).
- `src` has self's dtype. `value` is a Python scalar converted to self's dtype (a float
  into an integer tensor truncates toward zero); the cases pass floats for floating
  tensors, ints for integer tensors and bools for bool tensors.
- `dim` may be negative. Tensors may be non-contiguous views. 0-d tensors are valid, as
  is an empty `index` (the result is then a copy of `self`). Any dtype.
- The result is a new tensor with self's shape and dtype (its strides are free);
  `self`, `index` and `src` must not be modified.

Required overloads: `scatter.src`, `scatter.value`. Left out: the deprecated `reduce=`
overloads (`scatter.reduce`, `scatter.value_reduce`; `scatter_reduce` is its own op), the
`out=` variants and the Dimname overloads.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def scatter_src(self: torch.Tensor, dim: int, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    """aten::scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor"""


def scatter_value(self: torch.Tensor, dim: int, index: torch.Tensor, value: float | int | bool) -> torch.Tensor:
    """aten::scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor"""
'''


def _case(name, tag, entry, shape, dim, ishape, dtype="float32", sshape=None, layout="plain", value=None, seed=0):
    params = dict(shape=shape, dim=dim, ishape=ishape, sshape=sshape or ishape, dtype=dtype, layout=layout, value=value)
    return Case(name, tag, params, seed=seed, entry=entry)


CASES = [
    _case("smoke-src-f32", "smoke", "scatter_src", (6, 9), 1, (6, 4)),
    _case("smoke-value-f16", "smoke", "scatter_value", (7, 5), 0, (3, 5), "float16", value=-1.5, seed=1),
    _case("onehot-f32", "check", "scatter_value", (64, 1000), 1, (64, 1), value=1.0),
    _case("labels-bf16", "check", "scatter_src", (33, 500), 1, (33, 50), "bfloat16"),
    _case("dim0-larger-src", "check", "scatter_src", (100, 20), 0, (70, 13), sshape=(80, 19)),
    _case("3d-middle-f16", "check", "scatter_src", (4, 129, 17), 1, (4, 100, 17), "float16"),
    _case("4d-last", "check", "scatter_src", (2, 3, 5, 40), -1, (2, 3, 5, 7)),
    _case("transposed", "check", "scatter_src", (50, 60), 1, (50, 9), layout="transposed"),
    _case("zero-dim", "check", "scatter_src", (), 0, ()),
    _case("empty-index", "check", "scatter_src", (10, 4), 1, (10, 0)),
    _case("int64-value", "check", "scatter_value", (30, 40), 1, (30, 11), "int64", value=-7),
    _case("int32-src", "check", "scatter_src", (30, 40), 0, (20, 40), "int32"),
    _case("bool-value", "check", "scatter_value", (30, 40), 1, (30, 5), "bool", value=True),
    _case("bench-onehot-f32", "bench", "scatter_value", (8192, 32000), 1, (8192, 1), value=1.0),
    _case("bench-src-bf16", "bench", "scatter_src", (4096, 8192), 1, (4096, 4096), "bfloat16"),
]


def _tensor(shape, dtype, gen):
    if dtype == "bool":
        return torch.rand(shape, generator=gen) < 0.5
    if dtype in ("int64", "int32"):
        return torch.randint(-1000, 1000, shape, generator=gen, dtype=getattr(torch, dtype))
    return torch.randn(shape, generator=gen).to(getattr(torch, dtype))


def _unique_index(shape, ishape, dim, gen):
    """index of shape ishape whose values never repeat along dim (a permutation prefix)."""
    if not shape:
        return torch.zeros((), dtype=torch.int64)
    dim = dim % len(shape)
    rows = 1
    for k, s in enumerate(ishape):
        rows *= s if k != dim else 1
    keys = torch.rand((rows, shape[dim]), generator=gen)
    perm = keys.argsort(dim=1)[:, : ishape[dim]]
    moved = [s for k, s in enumerate(ishape) if k != dim] + [ishape[dim]]
    return perm.reshape(moved).movedim(-1, dim).contiguous()


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    shape, dtype = tuple(p["shape"]), p["dtype"]
    if p["layout"] == "transposed":
        x = _tensor(shape[::-1], dtype, gen).to(device).t()
    else:
        x = _tensor(shape, dtype, gen).to(device)
    index = _unique_index(shape, tuple(p["ishape"]), p["dim"], gen).to(device)
    if p["layout"] == "transposed":
        index = index.t().contiguous().t()
    args = dict(self=x, dim=p["dim"], index=index)
    if case.entry == "scatter_src":
        args["src"] = _tensor(tuple(p["sshape"]), dtype, gen).to(device)
    else:
        args["value"] = p["value"]
    return args


def scatter_src(self, dim, index, src):
    return torch.ops.aten.scatter.src(self, dim, index, src)


def scatter_value(self, dim, index, value):
    return torch.ops.aten.scatter.value(self, dim, index, value)


reference = {"scatter_src": scatter_src, "scatter_value": scatter_value}
