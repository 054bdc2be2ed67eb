"""Binary cross-entropy on logits: `aten::binary_cross_entropy_with_logits`.

`binary_cross_entropy_with_logits(self, target, weight=None, pos_weight=None, reduction=1)`
computes, elementwise, with x = self and t = target:
  ls   = log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|))
  ls   = ls * ((pos_weight - 1) * t + 1)        if pos_weight is given
  loss = (1 - t) * x - ls
  loss = loss * weight                           if weight is given
which equals -w * (pw * t * log(sigmoid(x)) + (1 - t) * log(1 - sigmoid(x))), then
reduces it: 0 = none (elementwise), 1 = mean (a 0-d tensor; NaN when empty), 2 = sum
(a 0-d tensor; 0 when empty).

- `target`, `weight` and `pos_weight` broadcast against `self` (NumPy rules; typically
  `pos_weight` has one value per class along the last dimension); the unreduced result
  has the broadcast shape, which is the shape of `self` in the cases here. Targets are
  probabilities in [0, 1] (often exactly 0 or 1).
- dtypes: float16, bfloat16 or float32, the same for every tensor; the result has that
  dtype. PyTorch evaluates the steps above in the input dtype, rounding each one
  (log_sigmoid, each product, sum and difference); a reduction adds these rounded losses
  in float32 and rounds the mean or sum once. Half-precision inputs appear here with
  mean and sum reductions (autocast runs this op in float32).
- Inputs may have any strides; they must not be modified.
- Required: the default overload. Left out: the `out=` variant.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def binary_cross_entropy_with_logits(self: torch.Tensor, target: torch.Tensor, weight: torch.Tensor | None = None, pos_weight: torch.Tensor | None = None, reduction: int = 1) -> torch.Tensor:
    """aten::binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, Tensor? pos_weight=None, int reduction=1) -> Tensor"""
'''


def _case(name, tag, shape, dtype, reduction=1, weight=None, pos_weight=None, labels=False,
          transpose=False, seed=0):
    # weight / pos_weight: the shape to draw (broadcast against self), or None
    params = dict(shape=shape, dtype=dtype, reduction=reduction, weight=weight, pos_weight=pos_weight,
                  labels=labels, transpose=transpose)
    n = 1
    for s in shape:
        n *= s
    # mean and sum add every element: reduction = the count, capped so that atol
    # (1e-4 x reduction x RMS) stays below the result and a zero answer fails
    red = max(1, min(n, 1024)) if reduction else 1
    return Case(name, tag, params, seed=seed, reduction=red)


CASES = [
    _case("smoke-mean-f32", "smoke", (5, 37), "float32", labels=True),
    _case("smoke-none-weights-f32", "smoke", (4, 33), "float32", reduction=0, weight=(4, 33),
          pos_weight=(33,), seed=1),
    _case("smoke-mean-bf16", "smoke", (3, 50), "bfloat16", pos_weight=(50,), seed=2),
    _case("none-f32", "check", (1823, 781), "float32", reduction=0),
    _case("none-labels-f32", "check", (256, 1000), "float32", reduction=0, labels=True, pos_weight=(1000,)),
    _case("mean-pos-weight-f32", "check", (64, 1000), "float32", pos_weight=(1000,), labels=True),
    _case("sum-weight-f32", "check", (8, 129, 33), "float32", reduction=2, weight=(129, 1)),
    _case("mean-f16", "check", (300, 512), "float16", labels=True),
    _case("mean-weights-f16", "check", (64, 80), "float16", weight=(64, 80), pos_weight=(80,)),
    _case("sum-f16", "check", (100, 64), "float16", reduction=2),
    _case("mean-bf16", "check", (64, 1000), "bfloat16", pos_weight=(1000,), labels=True),
    _case("sum-bf16", "check", (40, 77), "bfloat16", reduction=2, weight=(40, 1)),
    _case("transposed", "check", (300, 257), "float32", reduction=0, transpose=True),
    _case("vector-mean", "check", (70001,), "float32"),
    _case("scalar", "check", (), "float32", reduction=0),
    _case("empty-mean", "check", (0, 4), "float32"),
    _case("empty-none", "check", (0, 4), "float32", reduction=0),
    _case("bench-none-f32", "bench", (8192, 8192), "float32", reduction=0),
    _case("bench-mean-f32", "bench", (16384, 4096), "float32", pos_weight=(4096,), labels=True),
    _case("bench-mean-bf16", "bench", (16384, 4096), "bfloat16"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    shape = tuple(p["shape"])
    if p["transpose"]:
        x = (torch.randn(tuple(reversed(shape)), generator=gen) * 3).t()
        t = torch.rand(tuple(reversed(shape)), generator=gen).t()
    else:
        x = torch.randn(shape, generator=gen) * 3
        t = torch.rand(shape, generator=gen)
    if p["labels"]:
        t = (t < 0.3).float()
    w = torch.rand(tuple(p["weight"]), generator=gen) + 0.5 if p["weight"] else None
    pw = torch.rand(tuple(p["pos_weight"]), generator=gen) * 3 + 0.1 if p["pos_weight"] else None

    def put(v):
        return None if v is None else v.to(dtype).to(device)

    return dict(self=put(x), target=put(t), weight=put(w), pos_weight=put(pw), reduction=p["reduction"])


def reference(self, target, weight=None, pos_weight=None, reduction=1):
    return torch.ops.aten.binary_cross_entropy_with_logits.default(self, target, weight, pos_weight, reduction)
