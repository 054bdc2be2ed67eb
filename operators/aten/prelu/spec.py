"""Parametric ReLU: `aten::prelu`.

    out = self            where self > 0
    out = weight[c] * self elsewhere        (c = the index along dim 1, the channel dim)

Required entry point: `prelu` (the default overload).

- `weight` is a 1-D tensor with either one element (shared by all channels) or
  `self.shape[1]` elements, one per channel; a 0-d weight also counts as one element. When
  `self` has fewer than 2 dims (a 1-D or 0-d tensor) there is no channel dim and `weight`
  must have one element.
- `self` may have any rank and be non-contiguous (e.g. a channels-last image tensor viewed as
  NCHW); neither input may be modified. The result is a new tensor with `self`'s shape and
  dtype.
- Dtypes: float16, bfloat16, float32; `weight` has the same dtype as `self` (PyTorch refuses
  mixed dtypes). The product weight * self is rounded once to the dtype (half types may be
  computed in float32). NaN in `self` gives NaN (weight * NaN). Empty tensors are valid.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def prelu(self: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """aten::prelu(Tensor self, Tensor weight) -> Tensor"""
'''


def _case(name, tag, shape, weight, dtype, layout=None, seed=0):
    """`weight`: `channel` (one per channel), `shared` (shape (1,)) or `0d`. Layout `cl`:
    `self` is a channels-last tensor viewed as NCHW (via permute); `t`: a transposed 2-D view."""
    return Case(name, tag, dict(shape=shape, weight=weight, dtype=dtype, layout=layout), seed=seed)


CASES = [
    _case("smoke-f32", "smoke", (2, 3, 5, 7), "channel", "float32"),
    _case("smoke-f16-shared", "smoke", (4, 37), "shared", "float16", seed=1),
    _case("smoke-bf16-cl", "smoke", (2, 6, 3, 5), "channel", "bfloat16", layout="cl", seed=2),
    _case("conv-f32", "check", (8, 64, 56, 56), "channel", "float32"),
    _case("conv-bf16-cl", "check", (4, 96, 28, 28), "channel", "bfloat16", layout="cl"),
    _case("conv-f16-shared", "check", (2, 32, 128, 128), "shared", "float16"),
    _case("seq-f32", "check", (4, 512, 768), "channel", "float32"),
    _case("linear-bf16", "check", (1000, 300), "channel", "bfloat16"),
    _case("linear-f32-t", "check", (300, 1000), "channel", "float32", layout="t"),
    _case("odd-f16", "check", (3, 17, 1001), "channel", "float16"),
    _case("weight-0d-f32", "check", (64, 1000), "0d", "float32"),
    _case("vector-f32", "check", (70001,), "shared", "float32"),
    _case("vector-0d-weight-bf16", "check", (4099,), "0d", "bfloat16"),
    _case("zero-dim", "check", (), "shared", "float32"),
    _case("empty", "check", (0, 16, 4), "channel", "float32"),
    _case("nan-f32", "check", (16, 33, 10), "channel", "float32", seed=3),
    _case("conv-f32-bench", "bench", (64, 64, 112, 112), "channel", "float32"),
    _case("conv-bf16-bench", "bench", (32, 256, 56, 56), "channel", "bfloat16"),
    _case("conv-f16-bench", "bench", (16, 128, 128, 128), "shared", "float16"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype, shape = getattr(torch, p["dtype"]), p["shape"]
    if p["layout"] == "cl":
        n, c, h, w = shape
        self = (torch.randn(n, h, w, c, generator=gen) * 2).to(dtype).to(device).permute(0, 3, 1, 2)
    elif p["layout"] == "t":
        self = (torch.randn(shape[::-1], generator=gen) * 2).to(dtype).to(device).t()
    else:
        self = (torch.randn(shape, generator=gen) * 2).to(dtype)
        if case.name.startswith("nan"):
            self[torch.rand(shape, generator=gen) < 0.05] = float("nan")
        self = self.to(device)
    channels = shape[1] if len(shape) >= 2 and p["weight"] == "channel" else 1
    weight = (torch.rand(channels, generator=gen) * 0.5).to(dtype)
    if p["weight"] == "0d":
        weight = weight.reshape(())
    return dict(self=self, weight=weight.to(device))


def reference(self, weight):
    return torch.ops.aten.prelu.default(self, weight)
