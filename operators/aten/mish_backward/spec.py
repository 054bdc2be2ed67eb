"""Gradient of Mish: `aten::mish_backward`.

    mish(x) = x * tanh(softplus(x)),  softplus(x) = log(1 + exp(x))
    out = grad_output * (t + x * sigmoid(x) * (1 - t * t)),   t = tanh(softplus(x))

Required entry point: `mish_backward` (the default overload).

- `grad_output` and `self` (the forward input x) broadcast against each other (normally they
  have the same shape); the result has the broadcast shape. Either may be non-contiguous;
  neither may be modified.
- Dtypes: float16, bfloat16, float32. The result dtype is PyTorch's promotion of the two
  (float16 gradient with float32 input -> float32). Half types are computed in float32 and
  rounded once.
- Must be stable over the whole range: for large x, exp(x) overflows but t -> 1 and
  sigmoid -> 1 (the factor is 1); for very negative x everything tends to 0. PyTorch
  computes exactly the formula above in float32, so x = +-inf gives NaN (inf * 0) and NaN
  propagates. Empty and 0-d tensors are valid.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def mish_backward(grad_output: torch.Tensor, self: torch.Tensor) -> torch.Tensor:
    """aten::mish_backward(Tensor grad_output, Tensor self) -> Tensor"""
'''


def _case(name, tag, shape, dtype, grad_shape=None, grad_dtype=None, layout=None, scale=3.0,
          seed=0, **extra):
    """`self` is N(0, scale^2) (`scale=None`: the special values below, crossed with a random
    gradient); `grad_output` has `grad_shape` (default: `shape`). Layout `t` makes `self` a
    transposed view, `slice` every other column, `grad-t` transposes `grad_output`."""
    params = dict(shape=shape, dtype=dtype, grad_shape=grad_shape or shape, grad_dtype=grad_dtype or dtype,
                  layout=layout, scale=scale, **extra)
    return Case(name, tag, params, seed=seed)


CASES = [
    _case("smoke-f32", "smoke", (5, 37), "float32"),
    _case("smoke-special", "smoke", (14,), "float32", scale=None),
    _case("smoke-bf16-t", "smoke", (9, 6), "bfloat16", layout="t", seed=1),
    _case("mlp-bf16", "check", (4, 512, 768), "bfloat16"),
    _case("mlp-f16", "check", (2, 1024, 1024), "float16"),
    _case("conv-f32", "check", (8, 64, 56, 56), "float32"),
    _case("wide-f32", "check", (1000, 1000), "float32", scale=30.0),
    _case("odd-f32-t", "check", (300, 257), "float32", layout="t"),
    _case("slice-bf16", "check", (128, 513), "bfloat16", layout="slice"),
    _case("grad-t-f16", "check", (257, 300), "float16", layout="grad-t"),
    _case("grad-bcast-f32", "check", (64, 1, 33), "float32", grad_shape=(64, 47, 33)),
    _case("mixed-f16-f32", "check", (1000, 130), "float32", grad_dtype="float16"),
    _case("special-f16", "check", (14,), "float16", scale=None),
    _case("special-bf16", "check", (14,), "bfloat16", scale=None),
    _case("vector-f32", "check", (70001,), "float32"),
    _case("zero-dim", "check", (), "float32"),
    _case("empty", "check", (0, 5), "float32"),
    _case("mish_backward-bf16-bench", "bench", (16, 2048, 4096), "bfloat16"),
    _case("mish_backward-f32-bench", "bench", (8192, 8192), "float32"),
    _case("mish_backward-f16-bench", "bench", (64, 256, 64, 64), "float16"),
]

_SPECIAL = [0.0, 1.0, -1.0, 10.0, -10.0, 20.0, -20.0, 50.0, -50.0, 100.0, -100.0,
            float("inf"), float("-inf"), float("nan")]


def _inputs(p, gen, device):
    dtype, grad_dtype, shape = getattr(torch, p["dtype"]), getattr(torch, p["grad_dtype"]), p["shape"]
    if p["scale"] is None:
        self = torch.tensor(_SPECIAL).to(dtype).to(device)
    elif p["layout"] == "t":
        self = (torch.randn(shape[::-1], generator=gen) * p["scale"]).to(dtype).to(device).t()
    elif p["layout"] == "slice":
        full = (*shape[:-1], 2 * shape[-1])
        self = (torch.randn(full, generator=gen) * p["scale"]).to(dtype).to(device)[..., ::2]
    else:
        self = (torch.randn(shape, generator=gen) * p["scale"]).to(dtype).to(device)
    if p["layout"] == "grad-t":
        grad = torch.randn(p["grad_shape"][::-1], generator=gen).to(grad_dtype).to(device).t()
    else:
        grad = torch.randn(p["grad_shape"], generator=gen).to(grad_dtype).to(device)
    return self, grad


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    self, grad = _inputs(case.params, gen, device)
    return dict(grad_output=grad, self=self)

def reference(grad_output, self):
    return torch.ops.aten.mish_backward.default(grad_output, self)
