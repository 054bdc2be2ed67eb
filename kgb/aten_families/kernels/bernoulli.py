"""bernoulli's sampler (the sampling family): u < p for a uniform u per element, p read
through its strides (broadcast included) or given as one number."""

import torch
import triton
import triton.language as tl

from kgb.aten_families.kernels.philox import _seed
from kgb.aten_families.kernels.strided_index import _layout, _strided_offsets

BLOCK = 2048


@triton.jit
def _bernoulli(
    out_ptr, p_ptr, p_value, n, seed, s1, s2, s3, s4, s5, t0, t1, t2, t3, t4, t5,
    P_FROM_TENSOR: tl.constexpr, BLOCK: tl.constexpr,
):
    # out is contiguous; p (when a tensor) is read through its strides, broadcast included
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    if P_FROM_TENSOR:
        offs = _strided_offsets(idx, s1, s2, s3, s4, s5, t0, t1, t2, t3, t4, t5)
        p = tl.load(p_ptr + offs, mask=mask, other=0).to(tl.float32)
    else:
        p = tl.zeros([BLOCK], tl.float32) + p_value
    u = tl.rand(seed, idx)  # uniform in [0, 1): p == 0 never fires, p == 1 always does
    # via float32: casting a boolean straight to bfloat16 trips the CPU interpreter
    x = tl.where(u < p, 1.0, 0.0)
    tl.store(out_ptr + idx, x.to(out_ptr.dtype.element_ty), mask=mask)


def _sample(self, probs, p_value, generator):
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    n = out.numel()
    if n:
        layout = _layout(probs) if probs is not None else [1] * 5 + [0] * 6
        _bernoulli[(triton.cdiv(n, BLOCK),)](
            out, probs if probs is not None else out, float(p_value), n, _seed(generator),
            *layout, P_FROM_TENSOR=probs is not None, BLOCK=BLOCK,
        )
    return out


def bernoulli(self, *, generator=None):
    return _sample(self, self, 0.0, generator)


def bernoulli_p(self, p, *, generator=None):
    return _sample(self, None, p, generator)


def bernoulli_Tensor(self, p, *, generator=None):
    return _sample(self, p.expand(self.shape), 0.0, generator)
