"""Gradient of 1-D reflection padding: `aten::reflection_pad1d_backward`.

The forward pass pads the last dimension of `self` (width W) with pl values on the left
and pr on the right, mirrored without repeating the edge: padded position j (0 <= j <
pl + W + pr) reads input position |j - pl| reflected at both ends, i.e. j < pl reads
pl - j, pl <= j < pl + W reads j - pl, and j >= pl + W reads 2*(W - 1) - (j - pl).
This op returns grad_input with self's shape:
  grad_input[..., i] = sum of grad_output[..., j] over every padded position j reading i
(at most three terms: the direct one and one mirror from each side).
- `self` is (N, C, W) or (C, W) and is only used for its shape; `padding` = [pl, pr] with
  0 <= pl, pr < W. grad_output has self's shape with width pl + W + pr, dtype float32,
  float16 or bfloat16 (accumulate in float32), and may be non-contiguous.
- The result has grad_output's dtype and is a new tensor; neither input may be modified.
  Empty batches give an empty result.

Required overload: `reflection_pad1d_backward` (default). Left out: the `.grad_input`
out= variant.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def reflection_pad1d_backward(grad_output: torch.Tensor, self: torch.Tensor, padding: list[int]) -> torch.Tensor:
    """aten::reflection_pad1d_backward(Tensor grad_output, Tensor self, SymInt[2] padding) -> Tensor"""
'''


def _case(name, tag, shape, padding, dtype="float32", transpose=False, seed=0):
    # the direct term plus one mirror from each side
    return Case(name, tag, dict(shape=shape, padding=padding, dtype=dtype, transpose=transpose), seed=seed, reduction=3)


CASES = [
    _case("smoke-f32", "smoke", (2, 3, 8), (3, 2)),
    _case("smoke-unbatched-f16", "smoke", (4, 5), (4, 4), "float16", seed=1),
    _case("wavenet-f32", "check", (4, 64, 1000), (3, 3)),
    _case("audio-bf16", "check", (2, 80, 333), (128, 127), "bfloat16"),
    _case("asymmetric-f16", "check", (3, 7, 20), (0, 19), "float16"),
    _case("left-only", "check", (5, 9), (8, 0)),
    _case("no-padding", "check", (2, 2, 7), (0, 0)),
    _case("transposed-grad", "check", (1, 33, 50), (5, 6), transpose=True),
    _case("empty-batch", "check", (0, 4, 10), (2, 2)),
    _case("bench-audio-f32", "bench", (32, 512, 16000), (256, 256)),
    _case("bench-conv-bf16", "bench", (64, 1024, 4096), (3, 3), "bfloat16"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    shape, (pl, pr) = tuple(p["shape"]), p["padding"]
    dtype = getattr(torch, p["dtype"])
    x = torch.randn(shape, generator=gen).to(dtype).to(device)
    gshape = (*shape[:-1], shape[-1] + pl + pr)
    if p["transpose"]:  # channels and width swapped in memory
        g = torch.randn((gshape[0], gshape[2], gshape[1]), generator=gen).to(dtype).to(device).transpose(1, 2)
    else:
        g = torch.randn(gshape, generator=gen).to(dtype).to(device)
    return dict(grad_output=g, self=x, padding=[pl, pr])


def reference(grad_output, self, padding):
    return torch.ops.aten.reflection_pad1d_backward(grad_output, self, padding)
