"""exponential_'s sampler (the sampling family): -log(1 - u) / lambd written in place
through self's strides."""

import triton
import triton.language as tl

from kgb.aten_families.kernels.philox import _seed
from kgb.aten_families.kernels.strided_index import _layout, _strided_offsets

BLOCK = 2048


@triton.jit
def _exponential(
    ptr, n, inv_lambd, seed, s1, s2, s3, s4, s5, t0, t1, t2, t3, t4, t5, BLOCK: tl.constexpr
):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    offs = _strided_offsets(idx, s1, s2, s3, s4, s5, t0, t1, t2, t3, t4, t5)
    u = tl.rand(seed, idx)  # [0, 1): 1 - u is in (0, 1], so the log is finite
    x = -tl.log(1.0 - u) * inv_lambd
    tl.store(ptr + offs, x.to(ptr.dtype.element_ty), mask=idx < n)


def exponential_(self, lambd=1.0, *, generator=None):
    n = self.numel()
    if n:
        _exponential[(triton.cdiv(n, BLOCK),)](
            self, n, 1.0 / lambd, _seed(generator), *_layout(self), BLOCK=BLOCK
        )
    return self
