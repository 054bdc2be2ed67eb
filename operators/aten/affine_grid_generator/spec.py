"""Sampling grid of an affine transform: `aten::affine_grid_generator` (what
torch.nn.functional.affine_grid computes).

`affine_grid_generator(theta, size, align_corners)`:
- 2-D: `theta` is (N, 2, 3) and `size` is [N, C, H, W]; the result is (N, H, W, 2) with
  out[n, h, w, :] = theta[n] @ [x_w, y_h, 1], where x_w runs over W points and y_h over H
  points of [-1, 1] (see below).
- 3-D: `theta` is (N, 3, 4) and `size` is [N, C, D, H, W]; the result is (N, D, H, W, 3)
  with out[n, d, h, w, :] = theta[n] @ [x_w, y_h, z_d, 1].
- The points along an axis of n steps: 0 when n == 1; otherwise torch.linspace(-1, 1, n)
  computed in theta's dtype, and when `align_corners` is False each point is then
  multiplied by (n - 1) and divided by n (every step rounded to theta's dtype, as
  PyTorch does; float32 linspace computes -1 + step * i with one rounding, i.e. an FMA,
  for the first half of the points and 1 - step * (n - 1 - i) for the rest).
- dtypes: float16, bfloat16 or float32 (the result has theta's dtype). The three (four)
  products are accumulated in float32 and rounded once. `C` is ignored.
- `theta` may have any strides; N = 0 (with an empty theta) gives an empty result.
- The result is a new tensor; `theta` must not be modified.
- Required: the default overload. Left out: `affine_grid_generator.out`.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def affine_grid_generator(theta: torch.Tensor, size: list[int], align_corners: bool) -> torch.Tensor:
    """aten::affine_grid_generator(Tensor theta, SymInt[] size, bool align_corners) -> Tensor"""
'''


def _case(name, tag, size, dtype, align_corners, transpose=False, seed=0):
    params = dict(size=size, dtype=dtype, align_corners=align_corners, transpose=transpose)
    # each output adds 3 (2-D) or 4 (3-D) products
    return Case(name, tag, params, seed=seed, reduction=len(size) - 1)


CASES = [
    _case("smoke-2d-f32", "smoke", (2, 3, 5, 7), "float32", False),
    _case("smoke-3d-f32", "smoke", (1, 1, 3, 4, 5), "float32", True, seed=1),
    _case("smoke-2d-f16", "smoke", (2, 1, 6, 9), "float16", True, seed=2),
    _case("stn-f32", "check", (16, 3, 28, 28), "float32", False),
    _case("stn-aligned-f32", "check", (16, 3, 28, 28), "float32", True),
    _case("image-f16-aligned", "check", (8, 3, 64, 64), "float16", True),
    _case("image-f16", "check", (4, 1, 32, 64), "float16", False),
    _case("odd-bf16-aligned", "check", (4, 3, 33, 17), "bfloat16", True),
    _case("pow2-bf16", "check", (4, 3, 16, 32), "bfloat16", False),
    _case("volume-f32", "check", (2, 1, 8, 16, 16), "float32", False),
    _case("volume-f16-aligned", "check", (2, 1, 5, 7, 9), "float16", True),
    _case("single-row", "check", (3, 1, 1, 10), "float32", False),
    _case("single-point", "check", (3, 1, 1, 1), "float32", True),
    _case("theta-transposed", "check", (5, 3, 20, 30), "float32", False, transpose=True),
    _case("large-f32", "check", (2, 3, 256, 320), "float32", False),
    _case("empty-batch", "check", (0, 3, 4, 4), "float32", False),
    _case("bench-f32", "bench", (64, 3, 224, 224), "float32", False),
    _case("bench-f16", "bench", (32, 3, 512, 512), "float16", True),
    _case("bench-3d-f32", "bench", (8, 1, 64, 128, 128), "float32", False),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    size = list(p["size"])
    k = len(size) - 2  # 2 or 3 spatial dims
    n = size[0]
    # near-identity transforms with a random perturbation and translation
    eye = torch.cat([torch.eye(k), torch.zeros(k, 1)], dim=1)
    theta = eye + 0.3 * torch.randn((n, k, k + 1), generator=gen)
    if p["transpose"]:  # stored as (N, k + 1, k), seen transposed
        theta = theta.transpose(1, 2).contiguous().transpose(1, 2)
    return dict(theta=theta.to(dtype).to(device), size=size, align_corners=p["align_corners"])


def reference(theta, size, align_corners):
    return torch.ops.aten.affine_grid_generator.default(theta, size, align_corners)
