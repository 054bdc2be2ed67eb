"""Softmax along one dimension: `aten::softmax.int`.

out = exp(x - max(x, dim)) / sum(exp(x - max(x, dim)), dim), computed along `dim`
(negative values count from the end). Every other dimension is a batch dimension.

- `self` is a floating tensor of any rank >= 1 (float16, bfloat16 or float32), possibly
  non-contiguous (a transposed view, for example).
- `dtype`: when given, `self` is first cast to that dtype and the result has it; when
  None the result has the dtype of `self`. Half-precision inputs should be accumulated in
  float32 and rounded once at the end.
- Rows containing -inf are valid; a row that is entirely -inf yields NaN, as in PyTorch.
- The result is a new tensor of the same shape (any strides); `self` must not be modified.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def softmax_int(self: torch.Tensor, dim: int, dtype: torch.dtype | None = None) -> torch.Tensor:
    """aten::softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor"""
'''


def _case(name, tag, shape, dim, dtype, transpose=False, out_dtype=None, seed=0):
    params = dict(shape=shape, dim=dim, dtype=dtype, transpose=transpose, out_dtype=out_dtype)
    return Case(name, tag, params, seed=seed, reduction=shape[dim])


CASES = [
    _case("smoke-f32", "smoke", (5, 37), -1, "float32"),
    _case("smoke-f16-dim0", "smoke", (19, 6), 0, "float16", seed=1),
    _case("rows-f32", "check", (1823, 781), -1, "float32"),
    _case("rows-f16", "check", (64, 4099), 1, "float16"),
    _case("rows-bf16", "check", (3, 17, 1000), -1, "bfloat16"),
    _case("to-f32", "check", (128, 513), -1, "float16", out_dtype="float32"),
    _case("transposed", "check", (300, 257), -1, "float32", transpose=True),
    _case("middle-dim", "check", (8, 129, 33), 1, "float32"),
    _case("vector", "check", (70001,), 0, "float32"),
    _case("attn-f16", "bench", (32 * 16, 2048), -1, "float16"),
    _case("vocab-bf16", "bench", (256, 32000), -1, "bfloat16"),
    _case("wide-f32", "bench", (4096, 4096), -1, "float32"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    shape = tuple(reversed(p["shape"])) if p["transpose"] else p["shape"]
    x = (torch.randn(shape, generator=gen) * 3).to(dtype).to(device)
    if p["transpose"]:
        x = x.t()
    out_dtype = getattr(torch, p["out_dtype"]) if p["out_dtype"] else None
    return dict(self=x, dim=p["dim"], dtype=out_dtype)


def reference(self, dim, dtype=None):
    return torch.ops.aten.softmax.int(self, dim, dtype)
