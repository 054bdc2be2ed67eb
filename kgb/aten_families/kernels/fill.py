"""fill_'s entry points (the filling family): a Python scalar through `fill_strided`, a 0-d
tensor read on the device."""

import triton
import triton.language as tl

from kgb.aten_families.kernels.scalar_fill import BLOCK, _store_value
from kgb.aten_families.kernels.strided_fill import fill_strided
from kgb.aten_families.kernels.strided_index import _layout, _strided_offsets


@triton.jit
def _fill_tensor(ptr, value_ptr, n, s1, s2, s3, s4, s5, t0, t1, t2, t3, t4, t5, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    offs = _strided_offsets(idx, s1, s2, s3, s4, s5, t0, t1, t2, t3, t4, t5)
    value = tl.load(value_ptr)
    _store_value(ptr, tl.zeros([BLOCK], value.dtype) + value, offs, idx < n)


def fill__Scalar(self, value):
    return fill_strided(self, value)


def fill__Tensor(self, value):
    if value.dim() != 0:
        raise RuntimeError("fill_ only supports 0-dimension value tensor")
    n = self.numel()
    if n:
        _fill_tensor[(triton.cdiv(n, BLOCK),)](self, value, n, *_layout(self), BLOCK=BLOCK)
    return self
