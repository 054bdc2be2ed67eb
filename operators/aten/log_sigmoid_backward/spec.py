"""Gradient of log-sigmoid: `aten::log_sigmoid_backward`.

    log_sigmoid(x) = log(1 / (1 + exp(-x)))
    out = grad_output * sigmoid(-x) = grad_output * (1 - sigmoid(x))

Required entry point: `log_sigmoid_backward` (the default overload; the `grad_input=`
variant is not required).

- `buffer` is the second output of `aten::log_sigmoid_forward(self)`: on CPU it holds
  exp(-|x|), on CUDA it is an EMPTY tensor (numel 0). So it must not be relied on: recompute
  what you need from `self`. PyTorch computes, with z = exp(-|x|),
  x < 0: grad * (1 - z / (1 + z));  x >= 0: grad * (z / (1 + z))
  which never overflows; x = -inf gives grad, +inf gives 0, NaN gives NaN.
- `grad_output` and `self` broadcast against each other (normally the same shape); the
  result has the broadcast shape. Inputs may be non-contiguous and must not be modified.
- Dtypes: float16, bfloat16, float32; `grad_output` and `self` have the same dtype (PyTorch's
  CPU kernel refuses a mix), which the result has too. Half types are computed in float32
  and rounded once. Empty and 0-d tensors are valid.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def log_sigmoid_backward(grad_output: torch.Tensor, self: torch.Tensor, buffer: torch.Tensor) -> torch.Tensor:
    """aten::log_sigmoid_backward(Tensor grad_output, Tensor self, Tensor buffer) -> Tensor"""
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
    _case("special-f16", "check", (14,), "float16", scale=None),
    _case("special-bf16", "check", (14,), "bfloat16", scale=None),
    _case("vector-f32", "check", (70001,), "float32"),
    _case("zero-dim", "check", (), "float32"),
    _case("empty", "check", (0, 5), "float32"),
    _case("log_sigmoid_backward-bf16-bench", "bench", (16, 2048, 4096), "bfloat16"),
    _case("log_sigmoid_backward-f32-bench", "bench", (8192, 8192), "float32"),
    _case("log_sigmoid_backward-f16-bench", "bench", (64, 256, 64, 64), "float16"),
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
    # what the forward leaves for the backward on this device (empty on CUDA)
    buffer = torch.ops.aten.log_sigmoid_forward.default(self)[1]
    return dict(grad_output=grad, self=self, buffer=buffer)

def reference(grad_output, self, buffer):
    return torch.ops.aten.log_sigmoid_backward.default(grad_output, self, buffer)
