"""rrelu_with_noise's kernel (the sampling family): in training a uniform slope per
non-positive element, recorded in noise; in evaluation the mean slope. self and noise are
read and written through their own strides over one index space."""

import torch
import triton
import triton.language as tl

from kgb.aten_families.kernels.philox import _seed
from kgb.aten_families.kernels.strided_index import _layout, _strided_offsets

BLOCK = 2048


@triton.jit
def _rrelu(
    x_ptr, noise_ptr, out_ptr, n, lower, upper, slope, seed,
    s1, s2, s3, s4, s5, a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5,
    TRAINING: tl.constexpr, BLOCK: tl.constexpr,
):
    # self is read through strides a*, noise through strides b*, out is contiguous
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    x_off = _strided_offsets(idx, s1, s2, s3, s4, s5, a0, a1, a2, a3, a4, a5)
    x = tl.load(x_ptr + x_off, mask=mask, other=0).to(tl.float32)
    if TRAINING:
        u = tl.rand(seed, idx)
        neg = x <= 0.0
        slopes = lower + (upper - lower) * u
        out = tl.where(neg, x * slopes, x)
        noise = tl.where(neg, slopes, 1.0)
        n_off = _strided_offsets(idx, s1, s2, s3, s4, s5, b0, b1, b2, b3, b4, b5)
        tl.store(noise_ptr + n_off, noise.to(noise_ptr.dtype.element_ty), mask=mask)
    else:
        out = tl.where(x >= 0.0, x, x * slope)
    tl.store(out_ptr + idx, out.to(out_ptr.dtype.element_ty), mask=mask)


def rrelu_with_noise(self, noise, lower=0.125, upper=1 / 3, training=False, generator=None):
    if noise.shape != self.shape:
        raise RuntimeError("rrelu_with_noise: noise must have the shape of self")
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    n = out.numel()
    if n:
        seed = _seed(generator) if training else 0
        lower, upper = float(lower), float(upper)
        _rrelu[(triton.cdiv(n, BLOCK),)](
            self, noise, out, n, lower, upper, (lower + upper) / 2, seed,
            *_layout(self, noise), TRAINING=bool(training), BLOCK=BLOCK,
        )
    return out
