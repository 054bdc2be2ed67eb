"""n-th forward difference along one dimension: `aten::diff`.

`diff(self, n=1, dim=-1, prepend=None, append=None)`:
1. If given, `prepend` is concatenated before and `append` after `self` along `dim`
   (negative values count from the end). They have the same number of dimensions as
   `self` and the same sizes except along `dim`. The concatenation has the dtype that
   type promotion gives (torch.result_type of the three); in the cases here all three
   share one dtype.
2. The first difference out[i] = v[i + 1] - v[i] along `dim` is applied `n` times, each
   time to the previous result, so the length along `dim` shrinks by one per step (never
   below 0). `n = 0` returns a copy of `self` alone: ATen then ignores `prepend` and
   `append`.
- Each step is computed in the tensor's dtype, as PyTorch does: float16 and bfloat16 round
  every intermediate difference to their precision, integers wrap around (uint8 2 - 5 is
  253), and for bool the difference is logical xor (v[i + 1] != v[i]).
- `self` has at least one dimension and may have any strides. The result is a new
  contiguous-or-not tensor of the right shape; the inputs must not be modified.
- Required: the default overload. Left out: `diff.out`.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def diff(self: torch.Tensor, n: int = 1, dim: int = -1, prepend: torch.Tensor | None = None, append: torch.Tensor | None = None) -> torch.Tensor:
    """aten::diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) -> Tensor"""
'''


def _case(name, tag, shape, dtype, n=1, dim=-1, prepend=0, append=0, transpose=False, seed=0):
    params = dict(shape=shape, dtype=dtype, n=n, dim=dim, prepend=prepend, append=append, transpose=transpose)
    # each output combines n + 1 inputs; ulp-level differences stay far below rtol
    return Case(name, tag, params, seed=seed)


CASES = [
    _case("smoke-f32", "smoke", (5, 37), "float32"),
    _case("smoke-f16-n2-dim0-pre", "smoke", (19, 6), "float16", n=2, dim=0, prepend=2, seed=1),
    _case("smoke-int32-app", "smoke", (4, 9), "int32", append=3, seed=2),
    _case("rows-f32", "check", (1823, 781), "float32"),
    _case("rows-bf16-n3", "check", (64, 4099), "bfloat16", n=3),
    _case("cols-f16", "check", (3000, 100), "float16", dim=0),
    _case("middle-f32-pre-app", "check", (8, 129, 33), "float32", dim=1, prepend=3, append=5),
    _case("transposed", "check", (300, 257), "float32", transpose=True),
    _case("transposed-dim0", "check", (300, 257), "float32", dim=0, transpose=True),
    _case("vector-f32-n2", "check", (70001,), "float32", n=2),
    _case("int64", "check", (40, 1000), "int64", n=2),
    _case("uint8-wrap", "check", (10, 3000), "uint8"),
    _case("int8-n4", "check", (7, 300), "int8", n=4),
    _case("bool", "check", (16, 4096), "bool", n=2, prepend=1),
    _case("n-too-large", "check", (6, 4), "float32", n=5),
    _case("n0-copy", "check", (6, 40), "float32", n=0, append=2),
    _case("length-one", "check", (30, 1), "float32"),
    _case("empty-batch", "check", (0, 16), "float32"),
    _case("bench-f32", "bench", (8192, 8192), "float32"),
    _case("bench-bf16-dim0", "bench", (8192, 8192), "bfloat16", dim=0),
    _case("bench-i64-n2", "bench", (64 * 1024 * 1024,), "int64", n=2, prepend=1),
]


def _draw(shape, dtype, gen):
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen) < 0.5
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=gen) * 3).to(dtype)
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max, shape, generator=gen, dtype=torch.int64).to(dtype)


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    shape = tuple(reversed(p["shape"])) if p["transpose"] else tuple(p["shape"])
    x = _draw(shape, dtype, gen).to(device)
    if p["transpose"]:
        x = x.t()
    extra = {}
    for key in ("prepend", "append"):
        if p[key]:
            s = list(x.shape)
            s[p["dim"]] = p[key]
            extra[key] = _draw(tuple(s), dtype, gen).to(device)
        else:
            extra[key] = None
    return dict(self=x, n=p["n"], dim=p["dim"], **extra)


def reference(self, n=1, dim=-1, prepend=None, append=None):
    return torch.ops.aten.diff.default(self, n, dim, prepend, append)
