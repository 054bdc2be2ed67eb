"""Gather values along one dimension: `aten::gather`.

For a result of index's shape: out[c] = self[c with its `dim` coordinate replaced by
index[c]]. In 3-D with dim=1: out[i][j][k] = self[i][index[i][j][k]][k].
- `index` is an int64 tensor with the same number of dimensions as `self`;
  index.size(d) <= self.size(d) for every d != dim (only that leading part of `self` is
  read); its values are in [0, self.size(dim)), may repeat, in any order. It may be a
  non-contiguous view (transposed, sliced, or expanded with stride 0).
- `dim` may be negative. The result has index's shape and self's dtype (floating,
  integer or bool) and is a new tensor; `self` and `index` must not be modified.
- `self` may be non-contiguous. 0-d `self` with 0-d `index` is valid (index value 0).
  An empty `index` gives an empty result.
- `sparse_grad` only affects the backward pass; it changes nothing here.

Required overload: `gather` (default). Left out: `gather.out` and the Dimname overload.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def gather(self: torch.Tensor, dim: int, index: torch.Tensor, *, sparse_grad: bool = False) -> torch.Tensor:
    """aten::gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor"""
'''


def _case(name, tag, shape, dim, ishape, dtype="float32", layout="plain", seed=0):
    return Case(name, tag, dict(shape=shape, dim=dim, ishape=ishape, dtype=dtype, layout=layout), seed=seed)


CASES = [
    _case("smoke-f32", "smoke", (6, 9), 1, (6, 4)),
    _case("smoke-dim0-f16", "smoke", (7, 5), 0, (3, 5), "float16", seed=1),
    _case("logprobs-f32", "check", (64, 32000), -1, (64, 1)),
    _case("topk-bf16", "check", (33, 1000), 1, (33, 50), "bfloat16"),
    _case("dim0-partial", "check", (100, 20), 0, (70, 13)),
    _case("3d-middle-f16", "check", (4, 129, 17), 1, (4, 300, 17), "float16"),
    _case("4d-last", "check", (2, 3, 5, 40), 3, (2, 3, 5, 7)),
    _case("transposed-self", "check", (50, 60), 1, (50, 9), layout="tself"),
    _case("expanded-index", "check", (8, 16, 32), 1, (8, 5, 32), layout="expand"),
    _case("transposed-index", "check", (40, 30), 0, (25, 30), layout="tindex"),
    _case("zero-dim", "check", (), 0, ()),
    _case("empty-index", "check", (10, 4), 1, (10, 0)),
    _case("int64-data", "check", (30, 40), 1, (30, 40), "int64"),
    _case("bool-data", "check", (30, 40), 0, (20, 40), "bool"),
    _case("bench-logprobs-f32", "bench", (4096, 32000), 1, (4096, 64)),
    _case("bench-dense-bf16", "bench", (2048, 8192), 1, (2048, 8192), "bfloat16"),
]


def _tensor(shape, dtype, gen):
    if dtype == "bool":
        return torch.rand(shape, generator=gen) < 0.5
    if dtype == "int64":
        return torch.randint(-1000, 1000, shape, generator=gen)
    return torch.randn(shape, generator=gen).to(getattr(torch, dtype))


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    shape, ishape, layout = tuple(p["shape"]), tuple(p["ishape"]), p["layout"]
    size = shape[p["dim"]] if shape else 1
    if layout == "tself":
        x = _tensor(shape[::-1], p["dtype"], gen).to(device).t()
    else:
        x = _tensor(shape, p["dtype"], gen).to(device)
    if layout == "expand":  # one index row shared by all leading positions (stride 0)
        index = torch.randint(0, size, (1, *ishape[1:]), generator=gen).to(device).expand(ishape)
    elif layout == "tindex":
        index = torch.randint(0, size, ishape[::-1], generator=gen).to(device).t()
    else:
        index = torch.randint(0, size, ishape, generator=gen).to(device)
    return dict(self=x, dim=p["dim"], index=index, sparse_grad=False)


def reference(self, dim, index, *, sparse_grad=False):
    return torch.ops.aten.gather(self, dim, index, sparse_grad=sparse_grad)
