"""Softmax along one dimension, the internal ATen form: `aten::_softmax`.

out = exp(x - max(x, dim)) / sum(exp(x - max(x, dim)), dim), taken along `dim` (negative
values count from the end). Every other dimension is a batch dimension.

- `self` is a floating tensor (float16, bfloat16 or float32) of any rank, possibly
  non-contiguous (a transposed view, for example). A 0-d tensor is one row of length 1
  (its softmax is 1); `dim` is then 0 or -1. Tensors with zero elements give an empty
  result of the same shape.
- `half_to_float`: when False, the result has the dtype of `self`. When True, `self` is
  float16 and the result is float32: the softmax is computed in float32 and never
  rounded to float16 (this is the CUDA behaviour; PyTorch's CPU kernel lacks this path,
  so the reference computes it as the float32 softmax of the upcast input, and CUDA's
  refuses bfloat16 here, so no case passes bfloat16 with `half_to_float`).
  Half-precision inputs should be accumulated in float32 and rounded once at the end.
- A row containing -inf is valid; a row that is entirely -inf gives NaN, as in PyTorch.
- The result is a new tensor of the same shape (any strides); `self` must not be modified.
- Required: the default overload only. Left out: `_softmax.out`.
"""

import torch

from kgb.operators import Case

VERSION = 2

SIGNATURES = '''
def _softmax(self: torch.Tensor, dim: int, half_to_float: bool) -> torch.Tensor:
    """aten::_softmax(Tensor self, int dim, bool half_to_float) -> Tensor"""
'''


def _case(name, tag, shape, dim, dtype, half_to_float=False, transpose=False, seed=0):
    params = dict(shape=shape, dim=dim, dtype=dtype, half_to_float=half_to_float, transpose=transpose)
    n = shape[dim] if shape else 1
    # reduction = row length, capped so that atol (1e-4 x reduction x RMS) stays below the
    # output's RMS and an all-zero answer cannot pass.
    return Case(name, tag, params, seed=seed, reduction=min(n, 1024))


CASES = [
    _case("smoke-f32", "smoke", (5, 37), -1, "float32"),
    _case("smoke-f16-dim0-h2f", "smoke", (19, 6), 0, "float16", half_to_float=True, seed=1),
    _case("rows-f32", "check", (1823, 781), -1, "float32"),
    _case("rows-f16", "check", (64, 4099), 1, "float16"),
    _case("rows-bf16", "check", (3, 17, 1000), -1, "bfloat16"),
    _case("h2f-f16", "check", (128, 513), -1, "float16", half_to_float=True),
    _case("h2f-f16-middle", "check", (4, 300, 7), 1, "float16", half_to_float=True),
    _case("transposed", "check", (300, 257), -1, "float32", transpose=True),
    _case("middle-dim", "check", (8, 129, 33), 1, "float32"),
    _case("first-dim", "check", (65, 3, 40), 0, "float16"),
    _case("attn-4d", "check", (2, 12, 77, 77), -1, "float32"),
    _case("vector", "check", (70001,), 0, "float32"),
    _case("with-inf", "check", (33, 100), -1, "float32", seed=5),
    _case("scalar", "check", (), 0, "float32"),
    _case("empty", "check", (0, 16), -1, "float32"),
    _case("attn-f16", "bench", (32 * 16, 2048), -1, "float16"),
    _case("vocab-f16-h2f", "bench", (256, 32000), -1, "float16", half_to_float=True),
    _case("wide-f32", "bench", (4096, 4096), -1, "float32"),
    _case("channels-f32", "bench", (64, 1024, 512), 1, "float32"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    shape = tuple(reversed(p["shape"])) if p["transpose"] else tuple(p["shape"])
    x = torch.randn(shape, generator=gen) * 3
    if case.name == "with-inf":
        # scattered -inf plus one row that is entirely -inf (its softmax is NaN)
        x[torch.rand(shape, generator=gen) < 0.2] = float("-inf")
        x[7] = float("-inf")
    x = x.to(dtype).to(device)
    if p["transpose"]:
        x = x.t()
    return dict(self=x, dim=p["dim"], half_to_float=p["half_to_float"])


def reference(self, dim, half_to_float):
    if half_to_float and self.device.type == "cpu":
        # The CPU kernel refuses half_to_float; CUDA computes the float32 softmax of the
        # upcast input, which is exactly this.
        return torch.ops.aten._softmax.default(self.float(), dim, False)
    return torch.ops.aten._softmax.default(self, dim, half_to_float)
