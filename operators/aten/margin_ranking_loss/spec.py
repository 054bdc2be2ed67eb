"""Margin ranking loss: `aten::margin_ranking_loss`.

`margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1)` computes,
elementwise, loss = max(0, -target * (input1 - input2) + margin), then reduces it:
0 = none (elementwise), 1 = mean (a 0-d tensor; NaN when empty), 2 = sum (a 0-d tensor;
0 when empty).

- The three tensors broadcast against each other (NumPy rules); the unreduced result has
  the broadcast shape. `target` holds 1 (input1 should rank higher) or -1.
- dtypes: float16, bfloat16 or float32, the same for all three; the result has that dtype.
  PyTorch evaluates the formula in the input dtype, rounding each step (the difference,
  the product with -target, the sum with the margin); a reduction adds the rounded losses
  in float32 and rounds the mean or sum once.
- Inputs may have any strides; they must not be modified.
- Required: the default overload (it has no `out=` variant).
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def margin_ranking_loss(input1: torch.Tensor, input2: torch.Tensor, target: torch.Tensor, margin: float = 0.0, reduction: int = 1) -> torch.Tensor:
    """aten::margin_ranking_loss(Tensor input1, Tensor input2, Tensor target, float margin=0., int reduction=1) -> Tensor"""
'''


def _case(name, tag, s1, s2, st, dtype, margin=0.0, reduction=1, transpose=False, seed=0):
    params = dict(s1=s1, s2=s2, st=st, dtype=dtype, margin=margin, reduction=reduction, transpose=transpose)
    n = 1
    for s in s1:
        n *= s
    # mean and sum add every element: reduction = the count, capped so that atol
    # (1e-4 x reduction x RMS) stays below the result and a zero answer fails
    red = max(1, min(n, 1024)) if reduction else 1
    return Case(name, tag, params, seed=seed, reduction=red)


CASES = [
    _case("smoke-mean-f32", "smoke", (37,), (37,), (37,), "float32", margin=0.5),
    _case("smoke-none-f16", "smoke", (4, 33), (4, 33), (4, 33), "float16", margin=0.1, reduction=0, seed=1),
    _case("smoke-sum-bf16", "smoke", (3, 16), (3, 16), (16,), "bfloat16", margin=1.0, reduction=2, seed=2),
    _case("pairs-mean-f32", "check", (100003,), (100003,), (100003,), "float32", margin=0.2),
    _case("none-f32", "check", (1000, 999), (1000, 999), (1000, 999), "float32", margin=0.3, reduction=0),
    _case("sum-f32", "check", (64, 4099), (64, 4099), (64, 4099), "float32", reduction=2),
    _case("none-f16", "check", (300, 512), (300, 512), (300, 512), "float16", margin=0.25, reduction=0),
    _case("mean-f16", "check", (300, 512), (300, 512), (300, 512), "float16", margin=0.5),
    _case("none-bf16", "check", (64, 1000), (64, 1000), (64, 1000), "bfloat16", margin=0.1, reduction=0),
    _case("mean-bf16", "check", (8, 129, 33), (8, 129, 33), (8, 129, 33), "bfloat16", margin=1.0),
    _case("broadcast-none", "check", (16, 1, 64), (8, 64), (64,), "float32", margin=0.1, reduction=0),
    _case("broadcast-target-mean", "check", (256, 128), (256, 128), (256, 1), "float16", margin=0.3),
    _case("transposed", "check", (300, 257), (300, 257), (300, 257), "float32", reduction=0, transpose=True),
    _case("scalars", "check", (), (), (), "float32", margin=2.0, reduction=0),
    _case("empty-mean", "check", (0,), (0,), (0,), "float32"),
    _case("empty-none", "check", (0, 4), (0, 4), (0, 4), "float32", reduction=0),
    _case("bench-none-f32", "bench", (8192, 8192), (8192, 8192), (8192, 8192), "float32", margin=0.1, reduction=0),
    _case("bench-mean-bf16", "bench", (64 * 1024 * 1024,), (64 * 1024 * 1024,), (64 * 1024 * 1024,), "bfloat16", margin=0.5),
]


def _draw(shape, transpose, gen):
    if transpose:
        return torch.randn(tuple(reversed(shape)), generator=gen).t()
    return torch.randn(shape, generator=gen)


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    x1 = _draw(tuple(p["s1"]), p["transpose"], gen)
    x2 = _draw(tuple(p["s2"]), p["transpose"], gen)
    t = torch.where(_draw(tuple(p["st"]), p["transpose"], gen) > 0, 1.0, -1.0)
    if p["transpose"]:  # torch.where returns a contiguous tensor: keep the transposed layout
        t = t.t().contiguous().t()
    return dict(input1=x1.to(dtype).to(device), input2=x2.to(dtype).to(device),
                target=t.to(dtype).to(device), margin=p["margin"], reduction=p["reduction"])


def reference(input1, input2, target, margin=0.0, reduction=1):
    return torch.ops.aten.margin_ranking_loss.default(input1, input2, target, margin, reduction)
