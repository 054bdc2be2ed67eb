"""Fully connected layer: `aten::linear`.

`linear(input, weight, bias=None)` = input @ weight.T + bias.
- `input` has shape (*, in_features) with any number of leading dimensions, or is 1-D
  (in_features,); `weight` is 2-D (out_features, in_features); `bias` is None or 1-D
  (out_features,). The result has shape (*, out_features) ((out_features,) for a 1-D input).
- dtypes: float16, bfloat16 or float32, the same for all operands; the result has that
  dtype. Accumulate in float32, add the bias in float32 and round once. float32 products
  must be computed at full float32 precision (no TF32): the tolerance is float32's.
- Operands may have any strides (a transposed input or a weight that is a transposed
  view). in_features = 0 gives the bias broadcast (or zeros); other empty sizes give empty
  results.
- The result is a new tensor; the inputs must not be modified.
- Required: the default overload. Left out: `linear.out`.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def linear(input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor"""
'''


def _case(name, tag, x, out_features, dtype, bias=True, tx=False, tw=False, seed=0):
    # tx: input stored with its last two dims swapped; tw: weight stored as (in, out)
    params = dict(x=x, out_features=out_features, dtype=dtype, bias=bias, tx=tx, tw=tw)
    return Case(name, tag, params, seed=seed, reduction=max(x[-1], 1))


CASES = [
    _case("smoke-f32", "smoke", (5, 7), 3, "float32"),
    _case("smoke-f16-nobias", "smoke", (2, 3, 16), 9, "float16", bias=False, seed=1),
    _case("bert-ffn-f32", "check", (2, 77, 768), 3072, "float32"),
    _case("bert-ffn-f16", "check", (2, 77, 3072), 768, "float16"),
    _case("classifier-bf16", "check", (64, 1024), 1000, "bfloat16"),
    _case("vector-f32", "check", (768,), 100, "float32"),
    _case("transposed-input", "check", (300, 129), 65, "float32", tx=True),
    _case("transposed-weight-bf16", "check", (4, 33, 256), 96, "bfloat16", tw=True, bias=False),
    _case("odd-f16", "check", (3, 5, 17), 31, "float16"),
    _case("rows-zero", "check", (0, 16), 8, "float32"),
    _case("in-zero", "check", (4, 0), 8, "float32"),
    _case("out-zero", "check", (4, 16), 0, "float16"),
    _case("bench-proj-bf16", "bench", (8192, 4096), 4096, "bfloat16"),
    _case("bench-ffn-f16", "bench", (8, 2048, 1024), 4096, "float16"),
    _case("bench-f32", "bench", (4096, 4096), 4096, "float32"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    shape, n_out = tuple(p["x"]), p["out_features"]
    n_in = shape[-1]
    if p["tx"]:
        x = torch.randn((*shape[:-2], shape[-1], shape[-2]), generator=gen).transpose(-1, -2)
    else:
        x = torch.randn(shape, generator=gen)
    scale = 1.0 / max(n_in, 1) ** 0.5  # keep outputs O(1), like an initialised layer
    w = torch.randn((n_in, n_out) if p["tw"] else (n_out, n_in), generator=gen) * scale
    if p["tw"]:
        w = w.t()
    b = torch.randn(n_out, generator=gen) if p["bias"] else None
    return dict(
        input=x.to(dtype).to(device),
        weight=w.to(dtype).to(device),
        bias=None if b is None else b.to(dtype).to(device),
    )


def reference(input, weight, bias=None):
    return torch.ops.aten.linear.default(input, weight, bias)
