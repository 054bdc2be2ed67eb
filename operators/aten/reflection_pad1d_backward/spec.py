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

from kgb.operators import Case, published_tolerance

VERSION = 2

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


# unit roundoff of each dtype
_UNIT = {torch.float32: 2.0**-24, torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8}


def compare(actual, expected, case, inputs):
    """The published tolerance, with an atol of at least one unit of roundoff times the sum of
    the |terms| of each element. PyTorch adds the (up to three) terms in the dtype, rounding
    each partial sum; a float32 accumulation rounds once. Where the terms cancel, the two
    differ by more than the result's own size allows: a float16 case off by 0.00049 on
    -0.2012 was turned away on a fresh draw."""
    got, want = actual.get("return"), expected["return"]
    if not isinstance(got, torch.Tensor) or got.shape != want.shape or got.dtype != want.dtype:
        return (f"return value: {type(got).__name__} {getattr(got, 'dtype', '')} {tuple(getattr(got, 'shape', ()))}, "
                f"expected a tensor {want.dtype} {tuple(want.shape)}")
    if want.numel() == 0:
        return None
    rms = float(want.double().pow(2).mean().sqrt())
    tol = published_tolerance(str(want.dtype).removeprefix("torch."), case.reduction, rms)
    terms = reference(inputs["grad_output"].abs(), inputs["self"], inputs["padding"]).double()
    atol = (_UNIT[want.dtype] * terms).clamp(min=tol.atol)
    a, e = got.double(), want.double()
    bad = ~((a - e).abs() <= atol + tol.rtol * e.abs())  # NaN is bad
    if bool(bad.any()):
        i = tuple(int(x) for x in bad.nonzero()[0])
        return (f"return value: {int(bad.sum())} of {want.numel()} elements outside tolerance (rtol {tol.rtol:g}, "
                f"atol {float(atol[i]):.3g} there); first at {i}: got {a[i].item():.6g}, expected {e[i].item():.6g}")
    return None
