"""Huber loss: `aten::huber_loss`.

`huber_loss(self, target, reduction=1, delta=1.0)`: with z = |self - target| elementwise,
  loss = 0.5 * z * z            if z < delta
  loss = delta * (z - 0.5 * delta)  otherwise,
then reduced according to `reduction`: 0 = none (the elementwise losses), 1 = mean
(a 0-d tensor; NaN when there are no elements), 2 = sum (a 0-d tensor; 0 when empty).

- `self` and `target` broadcast against each other (NumPy rules); the unreduced result
  has the broadcast shape. `delta` > 0 is a Python float.
- dtypes: float16, bfloat16 or float32, the same for both; the result has that dtype.
  PyTorch evaluates the formula in the input dtype, rounding every operation (z = |a - b|,
  0.5 * z, then * z; or z - 0.5 * delta, then * delta, with delta itself rounded to the
  dtype); a reduction adds these rounded losses in float32 and rounds the mean or sum once.
- Inputs may have any strides; they must not be modified.
- Required: the default overload. Left out: `huber_loss.out`.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def huber_loss(self: torch.Tensor, target: torch.Tensor, reduction: int = 1, delta: float = 1.0) -> torch.Tensor:
    """aten::huber_loss(Tensor self, Tensor target, int reduction=1, float delta=1.) -> Tensor"""
'''


def _case(name, tag, s1, s2, dtype, reduction=1, delta=1.0, transpose=False, seed=0):
    params = dict(s1=s1, s2=s2, dtype=dtype, reduction=reduction, delta=delta, transpose=transpose)
    n = 1
    for a, b in zip((1,) * (len(s2) - len(s1)) + tuple(s1), (1,) * (len(s1) - len(s2)) + tuple(s2), strict=False):
        n *= max(a, b) if min(a, b) else 0
    # mean and sum add every element: reduction = the count, capped so that atol
    # (1e-4 x reduction x RMS) stays below the result and a zero answer fails
    red = max(1, min(n, 1024)) if reduction else 1
    return Case(name, tag, params, seed=seed, reduction=red)


CASES = [
    _case("smoke-mean-f32", "smoke", (5, 37), (5, 37), "float32"),
    _case("smoke-none-f16", "smoke", (4, 33), (4, 33), "float16", reduction=0, delta=0.5, seed=1),
    _case("smoke-sum-bf16", "smoke", (3, 1, 16), (4, 16), "bfloat16", reduction=2, delta=2.0, seed=2),
    _case("none-f32", "check", (1823, 781), (1823, 781), "float32", reduction=0, delta=1.35),
    _case("mean-f32", "check", (1000, 999), (1000, 999), "float32"),
    _case("sum-f32", "check", (64, 4099), (64, 4099), "float32", reduction=2, delta=0.7),
    _case("none-f16", "check", (300, 512), (300, 512), "float16", reduction=0),
    _case("mean-f16", "check", (300, 512), (300, 512), "float16", delta=0.5),
    _case("none-bf16", "check", (64, 1000), (64, 1000), "bfloat16", reduction=0, delta=2.0),
    _case("mean-bf16", "check", (8, 129, 33), (8, 129, 33), "bfloat16"),
    _case("broadcast-none", "check", (16, 1, 64), (8, 64), "float32", reduction=0),
    _case("broadcast-mean-f16", "check", (100, 64), (64,), "float16"),
    _case("transposed", "check", (300, 257), (300, 257), "float32", reduction=0, transpose=True),
    _case("scalars", "check", (), (), "float32", reduction=0),
    _case("empty-mean", "check", (0, 4), (0, 4), "float32"),
    _case("empty-sum", "check", (0, 4), (0, 4), "float32", reduction=2),
    _case("empty-none", "check", (0, 4), (0, 4), "float16", reduction=0),
    _case("bench-none-f32", "bench", (8192, 8192), (8192, 8192), "float32", reduction=0),
    _case("bench-mean-bf16", "bench", (16384, 4096), (16384, 4096), "bfloat16"),
    _case("bench-sum-f16", "bench", (4096, 8192), (4096, 8192), "float16", reduction=2, delta=0.5),
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
        out.append(x.to(device))
    return dict(self=out[0], target=out[1], reduction=p["reduction"], delta=p["delta"])


def reference(self, target, reduction=1, delta=1.0):
    return torch.ops.aten.huber_loss.default(self, target, reduction, delta)
