"""Gradient of randomized leaky ReLU: `aten::rrelu_with_noise_backward`.

    training=True:   out = noise * grad_output
    training=False:  out = grad_output              where self > 0
                     out = grad_output * slope      elsewhere,  slope = (lower + upper) / 2

Required entry point: `rrelu_with_noise_backward` (the default overload; `.out` is not
required).

- `noise` is what the training forward drew: 1 where the input was >= 0 and a slope in
  [lower, upper] elsewhere; in training mode it alone decides the gradient (`self` is not
  read). In eval mode `noise` is ignored and the fixed mean slope is used, as in
  `leaky_relu_backward`; NaN in `self` is not > 0, so it takes the slope branch.
- `self_is_result`: `self` holds the forward's output instead of its input; with a
  non-negative slope the sign test is the same, so the result does not change (PyTorch
  refuses a negative slope then; not tested).
- `lower` and `upper` are Python floats; the slope is computed in double and used in
  float32 (half types are computed in float32 and rounded once).
- Shapes: the operands that are used broadcast against each other (noise with
  grad_output in training, grad_output with self in eval); normally all have one shape.
  Inputs may be non-contiguous and must not be modified. The result dtype is PyTorch's
  promotion of those operands. Dtypes: float16, bfloat16, float32. Empty and 0-d tensors
  are valid.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def rrelu_with_noise_backward(grad_output: torch.Tensor, self: torch.Tensor, noise: torch.Tensor, lower: int | float, upper: int | float, training: bool, self_is_result: bool) -> torch.Tensor:
    """aten::rrelu_with_noise_backward(Tensor grad_output, Tensor self, Tensor noise, Scalar lower, Scalar upper, bool training, bool self_is_result) -> Tensor"""
'''

DEFAULT = (1.0 / 8, 1.0 / 3)


def _case(name, tag, shape, dtype, training, bounds=DEFAULT, is_result=False, grad_dtype=None,
          layout=None, seed=0):
    """Layouts: `t` makes `self` and `noise` transposed views, `grad-t` transposes
    grad_output, `slice` takes every other column of `noise` and `self`."""
    params = dict(shape=shape, dtype=dtype, training=training, bounds=bounds, is_result=is_result,
                  grad_dtype=grad_dtype or dtype, layout=layout)
    return Case(name, tag, params, seed=seed)


CASES = [
    _case("smoke-train-f32", "smoke", (5, 37), "float32", True),
    _case("smoke-eval-f32", "smoke", (4, 33), "float32", False, seed=1),
    _case("smoke-eval-result-bf16-t", "smoke", (9, 6), "bfloat16", False, is_result=True, layout="t", seed=2),
    _case("train-bf16", "check", (4, 512, 768), "bfloat16", True),
    _case("train-f16", "check", (2, 1024, 1024), "float16", True, bounds=(0.1, 0.3)),
    _case("train-f32-conv", "check", (8, 64, 56, 56), "float32", True),
    _case("train-fixed-slope", "check", (1000, 100), "float32", True, bounds=(0.2, 0.2)),
    _case("train-grad-t", "check", (300, 257), "float32", True, layout="grad-t"),
    _case("train-slice-bf16", "check", (128, 513), "bfloat16", True, layout="slice"),
    _case("eval-f32-conv", "check", (8, 64, 56, 56), "float32", False),
    _case("eval-f16", "check", (2, 1024, 1024), "float16", False, bounds=(0.1, 0.3)),
    _case("eval-bf16", "check", (1000, 300), "bfloat16", False),
    _case("eval-t-f32", "check", (300, 257), "float32", False, layout="t"),
    _case("eval-result-f32", "check", (1000, 100), "float32", False, is_result=True),
    _case("eval-mixed-f16-f32", "check", (1000, 130), "float32", False, grad_dtype="float16"),
    _case("eval-nan-f32", "check", (16, 33, 10), "float32", False),
    _case("zero-dim", "check", (), "float32", True),
    _case("zero-dim-eval", "check", (), "float32", False),
    _case("empty", "check", (0, 5), "float32", False),
    _case("train-bf16-bench", "bench", (16, 2048, 4096), "bfloat16", True),
    _case("eval-f32-bench", "bench", (8192, 8192), "float32", False),
    _case("train-f16-bench", "bench", (64, 256, 64, 64), "float16", True),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype, grad_dtype, shape = getattr(torch, p["dtype"]), getattr(torch, p["grad_dtype"]), p["shape"]
    lower, upper = p["bounds"]
    full = shape[::-1] if p["layout"] == "t" else (*shape[:-1], 2 * shape[-1]) if p["layout"] == "slice" else shape
    x = torch.randn(full, generator=gen)
    if case.name.startswith("eval-nan"):
        x[torch.rand(full, generator=gen) < 0.05] = float("nan")
    slopes = torch.rand(full, generator=gen) * (upper - lower) + lower
    noise = torch.where(x >= 0, torch.ones(()), slopes)
    if p["is_result"]:
        x = torch.where(x >= 0, x, x * (lower + upper) / 2)  # the forward's output
    self, noise = x.to(dtype).to(device), noise.to(dtype).to(device)
    if p["layout"] == "t":
        self, noise = self.t(), noise.t()
    elif p["layout"] == "slice":
        self, noise = self[..., ::2], noise[..., ::2]
    if p["layout"] == "grad-t":
        grad = torch.randn(shape[::-1], generator=gen).to(grad_dtype).to(device).t()
    else:
        grad = torch.randn(shape, generator=gen).to(grad_dtype).to(device)
    return dict(grad_output=grad, self=self, noise=noise, lower=lower, upper=upper,
                training=p["training"], self_is_result=p["is_result"])


def reference(grad_output, self, noise, lower, upper, training, self_is_result):
    return torch.ops.aten.rrelu_with_noise_backward.default(
        grad_output, self, noise, lower, upper, training, self_is_result)
