"""Gradient of `select`: `aten::select_backward`.

The forward pass `x.select(dim, index)` drops dimension `dim` of a tensor of shape
`input_sizes` by taking position `index` along it. This op returns a tensor of shape
`input_sizes`, zero everywhere except the selected slice, which holds `grad_output`:
  out.select(dim, index) == grad_output, and every other element is 0.
- `grad_output` has shape input_sizes with entry `dim` removed (0-d when input_sizes has
  one entry), any dtype (floating, integer or bool: 0 is False), possibly non-contiguous.
- `dim` and `index` may be negative (counted from the end); index is in range.
- The result has grad_output's dtype and is a new tensor (its strides are free);
  grad_output must not be modified. Empty shapes give an empty result.
This is data movement: PyTorch's copy ops (`copy_`, `clone`, `contiguous`) are not
allowed; the slice must be written by a Triton kernel.

Required overload: `select_backward` (default). Left out: `select_backward.out`.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def select_backward(grad_output: torch.Tensor, input_sizes: list[int], dim: int, index: int) -> torch.Tensor:
    """aten::select_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt index) -> Tensor"""
'''

DENIED_TORCH_OPS = ("aten::copy_", "aten::clone", "aten::contiguous", "aten::select_backward")


def _case(name, tag, sizes, dim, index, dtype="float32", transpose=False, seed=0):
    return Case(name, tag, dict(sizes=sizes, dim=dim, index=index, dtype=dtype, transpose=transpose), seed=seed)


CASES = [
    _case("smoke-f32", "smoke", (4, 5, 6), 1, 2),
    _case("smoke-last-f16", "smoke", (3, 7), -1, -1, "float16", seed=1),
    _case("cls-token-bf16", "check", (8, 197, 768), 1, 0, "bfloat16"),
    _case("last-token-f32", "check", (4, 77, 512), 1, -1),
    _case("first-dim", "check", (5, 33, 17), 0, 3, "float16"),
    _case("inner-dim", "check", (2, 3, 4, 129), 3, 100),
    _case("vector", "check", (1000,), 0, 999),
    _case("transposed-grad", "check", (6, 40, 30), 0, 5, transpose=True),
    _case("int64", "check", (10, 11), 1, 4, "int64"),
    _case("bool", "check", (10, 11), 0, 9, "bool"),
    _case("empty", "check", (0, 4, 3), 2, 1),
    _case("bench-cls-f16", "bench", (256, 197, 1024), 1, 0, "float16"),
    _case("bench-last-f32", "bench", (64, 2048, 1024), 1, -1),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    sizes = list(p["sizes"])
    gshape = sizes[: p["dim"] % len(sizes)] + sizes[p["dim"] % len(sizes) + 1:]
    make = gshape[::-1] if p["transpose"] else gshape
    if p["dtype"] == "bool":
        g = torch.rand(make, generator=gen) < 0.5
    elif p["dtype"] == "int64":
        g = torch.randint(-1000, 1000, make, generator=gen)
    else:
        g = torch.randn(make, generator=gen).to(getattr(torch, p["dtype"]))
    g = g.to(device)
    if p["transpose"]:
        g = g.permute(*reversed(range(g.ndim)))
    return dict(grad_output=g, input_sizes=sizes, dim=p["dim"], index=p["index"])


def reference(grad_output, input_sizes, dim, index):
    return torch.ops.aten.select_backward(grad_output, input_sizes, dim, index)
