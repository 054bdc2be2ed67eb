"""Logit (inverse sigmoid), elementwise: `aten::logit` (default overload).

out[i] = log(z / (1 - z)), where z = self[i], first clamped to [eps, 1 - eps] when `eps`
is given.

- `eps` (a Python float or None): None, or a negative value, means no clamping; then
  logit(0) = -inf, logit(1) = +inf, and x outside [0, 1] gives NaN. With eps >= 0 the
  input is clamped as z = eps if x < eps, else 1 - eps if x > 1 - eps, else x (in that
  order, so eps > 0.5 maps everything below eps to eps and the rest to 1 - eps); NaN stays
  NaN. Compute the bounds in float32 (lo = eps, hi = 1 - lo) for every input dtype; the
  tests use values of eps that are exact in every dtype for half-precision inputs.
- Compute half-precision inputs in float32 and round once.
- Dtypes: float16, bfloat16 and float32 keep their dtype. Integer and bool inputs are
  converted to float32 and the result is float32. float64 and complex inputs are not
  required.
- `self` may have any shape, including 0-d and empty, and may be non-contiguous
  (transposed, sliced, expanded). The result is a new tensor of the same shape (any
  strides); `self` must not be modified.

Required entry point: `logit` (aten::logit(Tensor self, float? eps=None) -> Tensor). Not
required: the `out=` variant and the in-place `logit_`.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def logit(self: torch.Tensor, eps: float | None = None) -> torch.Tensor:
    """aten::logit(Tensor self, float? eps=None) -> Tensor"""
'''

# Special values: the ends 0 and 1, points just inside and outside [0, 1], 0.5 (logit 0),
# infinities and NaN.
EDGE = [0.0, -0.0, 1.0, 0.5, 1e-30, 1e-7, 0.9999999, 0.25, 0.75, -0.01, 1.01, 2.0, float("inf"),
        float("-inf"), float("nan")]


def _case(name, tag, shape, dtype="float32", layout="contiguous", dist="probs", seed=0, eps=None):
    return Case(name, tag, dict(shape=tuple(shape), dtype=dtype, layout=layout, dist=dist, eps=eps), seed=seed)


CASES = [
    _case("smoke-f32", "smoke", [7, 33]),
    _case("smoke-edge-eps-bf16", "smoke", [5, 17], "bfloat16", dist="edge", eps=2**-7),
    _case("f32-hidden", "check", [8, 128, 768]),
    _case("f32-eps", "check", [4096, 257], eps=1e-6),
    _case("f16-eps", "check", [4096, 257], "float16", eps=2**-7),
    _case("bf16", "check", [3, 1000, 129], "bfloat16"),
    _case("edge-f32", "check", [34, 9], dist="edge"),
    _case("edge-f32-eps0", "check", [34, 9], dist="edge", eps=0.0),
    _case("edge-f32-eps-neg", "check", [34, 9], dist="edge", eps=-0.5),
    _case("edge-f16-eps-big", "check", [17, 5], "float16", dist="edge", eps=0.75),
    _case("edge-bf16", "check", [17, 5], "bfloat16", dist="edge"),
    _case("transposed-f32", "check", [1023, 513], layout="transposed"),
    _case("strided-f16", "check", [300, 257], "float16", layout="strided", eps=0.0625),
    _case("expanded-f32", "check", [64, 1000], layout="expanded"),
    _case("scalar-f32", "check", []),
    _case("empty-f32", "check", [0, 16]),
    _case("int64", "check", [1000, 37], "int64", dist="int"),
    _case("int32-eps", "check", [4099], "int32", dist="int", eps=0.25),
    _case("bool", "check", [129, 7], "bool", dist="int"),
    _case("bench-f32", "bench", [8192, 8192]),
    _case("bench-bf16-eps", "bench", [16, 2048, 4096], "bfloat16", eps=2**-7),
    _case("bench-f16", "bench", [32, 1024, 1024], "float16"),
]


def _draw(dist: str, shape: list, dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    n = 1
    for s in shape:
        n *= s
    if dist == "edge":
        vals = torch.tensor(EDGE, dtype=torch.float32)
        idx = torch.randperm(max(n, 1), generator=gen)[:n] % len(EDGE)
        return vals[idx].reshape(shape).to(dtype)
    if dist == "int":  # -1, 0, 1 or 2
        if dtype == torch.bool:
            return torch.randint(0, 2, shape, generator=gen).to(torch.bool)
        return torch.randint(-1, 3, shape, generator=gen).to(dtype)
    # probabilities in (0, 1), with a few percent of exact 0s and 1s and values outside [0, 1]
    x = torch.rand(shape, generator=gen).double() * 1.04 - 0.02
    u = torch.rand(shape, generator=gen)
    x = torch.where(u < 0.02, 0.0, torch.where(u > 0.98, 1.0, x))
    return x.to(dtype)


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    shape, layout = list(p["shape"]), p["layout"]
    base = list(shape)
    if layout == "transposed":
        base[-2], base[-1] = shape[-1], shape[-2]
    elif layout == "strided":
        base[-1] = 2 * shape[-1]
    elif layout == "expanded":
        base[-2] = 1
    # draw on the CPU, move, then take the view, so that the layout survives the move
    x = _draw(p["dist"], base, getattr(torch, p["dtype"]), gen).to(device)
    if layout == "transposed":
        x = x.transpose(-2, -1)
    elif layout == "strided":
        x = x[..., ::2]
    elif layout == "expanded":
        x = x.expand(shape)
    return dict(self=x, eps=p["eps"])




def reference(self, eps=None):
    # The ATen op, run in float32 for float16/bfloat16 inputs and rounded once. That is
    # exactly what PyTorch's CUDA kernel does; its CPU kernel instead rounds every step to
    # half precision (logit(0.498) in bfloat16 comes out -0.0039 instead of -0.0078), which
    # would make the CPU reference disagree with the task text.
    if self.dtype in (torch.float16, torch.bfloat16):
        return torch.ops.aten.logit.default(self.float(), eps).to(self.dtype)
    return torch.ops.aten.logit.default(self, eps)
