"""Distance between paired vectors: `aten::pairwise_distance`.

`pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False)` = the p-norm of
(x1 - x2 + eps) over the last dimension, where x1 and x2 broadcast against each other
(NumPy rules: trailing dimensions aligned, sizes equal or 1, missing leading dimensions
count as 1). The last dimension of the broadcast shape is reduced; with `keepdim` it stays
with size 1, otherwise it is removed. A 0-d pair gives a 0-d result.

- Norms: p = 2 is sqrt(sum d^2), p = 1 is sum |d|, p = inf is max |d|, p = 0 counts the
  non-zero d, any other p > 0 is (sum |d|^p)^(1/p), with d = x1 - x2 + eps.
- dtypes: float16, bfloat16 or float32, the same for both inputs; the result has that
  dtype. As in PyTorch, x1 - x2 and then + eps are each rounded to the input dtype; the
  norm is accumulated in float32 and rounded once.
- Inputs may have any strides. An empty last dimension gives zeros; other empty
  dimensions give an empty result.
- The result is a new tensor; the inputs must not be modified.
- Required: the default overload (it has no `out=` variant).
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def pairwise_distance(x1: torch.Tensor, x2: torch.Tensor, p: float = 2.0, eps: float = 1e-06, keepdim: bool = False) -> torch.Tensor:
    """aten::pairwise_distance(Tensor x1, Tensor x2, float p=2., float eps=9.9999999999999995e-07, bool keepdim=False) -> Tensor"""
'''


def _case(name, tag, s1, s2, dtype, p=2.0, keepdim=False, transpose=False, seed=0):
    params = dict(s1=s1, s2=s2, dtype=dtype, p=p, keepdim=keepdim, transpose=transpose)
    d = max(s1[-1] if s1 else 1, s2[-1] if s2 else 1)
    # capped so that atol (1e-4 x reduction x RMS) stays below the output's RMS
    return Case(name, tag, params, seed=seed, reduction=max(1, min(d, 1024)))


CASES = [
    _case("smoke-f32", "smoke", (5, 37), (5, 37), "float32"),
    _case("smoke-f16-bcast-p1", "smoke", (3, 1, 16), (4, 16), "float16", p=1.0, keepdim=True, seed=1),
    _case("embeddings-f32", "check", (1024, 512), (1024, 512), "float32"),
    _case("embeddings-bf16", "check", (300, 768), (300, 768), "bfloat16"),
    _case("anchor-f16", "check", (1000, 128), (128,), "float16"),
    _case("triplet-3d-f32", "check", (8, 50, 64), (8, 1, 64), "float32", keepdim=True),
    _case("p1-f32", "check", (200, 300), (200, 300), "float32", p=1.0),
    _case("pinf-bf16", "check", (200, 300), (200, 300), "bfloat16", p=float("inf")),
    _case("p0-f32", "check", (64, 33), (64, 33), "float32", p=0.0),
    _case("p3-f16", "check", (100, 65), (100, 65), "float16", p=3.0),
    _case("transposed", "check", (300, 129), (300, 129), "float32", transpose=True),
    _case("vectors", "check", (4099,), (4099,), "float32"),
    _case("scalars", "check", (), (), "float32"),
    _case("empty-rows", "check", (0, 16), (0, 16), "float32"),
    _case("empty-dim", "check", (5, 0), (5, 0), "float32"),
    _case("bench-f32", "bench", (65536, 512), (65536, 512), "float32"),
    _case("bench-bf16", "bench", (16384, 4096), (16384, 4096), "bfloat16"),
    _case("bench-anchor-f16", "bench", (1048576, 128), (128,), "float16"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    out = []
    for shape in (tuple(p["s1"]), tuple(p["s2"])):
        if p["transpose"]:
            x = torch.randn(tuple(reversed(shape)), generator=gen).to(dtype).t()
        else:
            x = torch.randn(shape, generator=gen).to(dtype)
        if p["p"] == 0.0:  # many exact zeros in x1 - x2 + eps: integers and -eps
            x = torch.round(x)
        out.append(x.to(device))
    return dict(x1=out[0], x2=out[1], p=p["p"], eps=1e-6, keepdim=p["keepdim"])


def reference(x1, x2, p=2.0, eps=1e-06, keepdim=False):
    return torch.ops.aten.pairwise_distance.default(x1, x2, p, eps, keepdim)
