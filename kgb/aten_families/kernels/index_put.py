"""index_put_'s write: each indexed element of `self` takes (or, accumulating, adds) its
value; half-precision accumulation goes through a float32 scratch so each element is
rounded once. Shared by index_put_ and _index_put_impl_."""

import torch
import triton
import triton.language as tl

from kgb.aten_families.kernels.indexing import BLOCK, _base_offsets, _collapse, _nd_offsets, _plan


@triton.jit
def _put_kernel(dst, vals, scratch, base, n, rn, D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5,
                T0, T1, T2, T3, T4, T5, NDIM: tl.constexpr, PHASE: tl.constexpr, BLOCK: tl.constexpr):
    # PHASE 0: dst[o] = vals. PHASE 1: dst[o] += vals atomically. Half-precision accumulation
    # goes through a float32 scratch addressed like dst, so each element is rounded once:
    # PHASE 2 loads dst into scratch, PHASE 3 adds, PHASE 4 writes scratch back.
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    so, vo = _nd_offsets(i, D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5, T0, T1, T2, T3, T4, T5, NDIM)
    o = tl.load(base + i // rn, mask=m, other=0) + so
    if PHASE == 0:
        tl.store(dst + o, tl.load(vals + vo, mask=m), mask=m)
    elif PHASE == 1:
        tl.atomic_add(dst + o, tl.load(vals + vo, mask=m), mask=m, sem="relaxed")
    elif PHASE == 2:
        tl.store(scratch + o, tl.load(dst + o, mask=m).to(tl.float32), mask=m)
    elif PHASE == 3:
        tl.atomic_add(scratch + o, tl.load(vals + vo, mask=m).to(tl.float32), mask=m, sem="relaxed")
    else:
        tl.store(dst + o, tl.load(scratch + o, mask=m).to(dst.dtype.element_ty), mask=m)


def _index_put(self, indices, values, accumulate):
    if values.dtype != self.dtype:
        raise RuntimeError("index_put_: values must have the dtype of self")
    dims, idx, bshape, rest, out_shape, perm = _plan(self, indices)
    n = 1
    for s in out_shape:
        n *= s
    if n == 0:
        return self
    base, p = _base_offsets(self, dims, idx, bshape)
    vals = values.expand(out_shape).permute(perm)
    shape = list(vals.shape)
    dst_strides = [0] * len(bshape) + [self.stride(k) for k in rest]
    ndim, d, (s, t) = _collapse(shape, dst_strides, vals.stride())
    args = (n, n // p, *d[1:], *s, *t)
    grid = (triton.cdiv(n, BLOCK),)
    half = self.dtype in (torch.float16, torch.bfloat16)
    if not accumulate:
        _put_kernel[grid](self, vals, self, base, *args, NDIM=ndim, PHASE=0, BLOCK=BLOCK)
    elif not half:
        _put_kernel[grid](self, vals, self, base, *args, NDIM=ndim, PHASE=1, BLOCK=BLOCK)
    else:
        # float32 twin of self's memory span; only the indexed elements are ever touched
        span = 1 + sum((sz - 1) * st for sz, st in zip(self.shape, self.stride(), strict=True))
        scratch = torch.empty(span, dtype=torch.float32, device=self.device)
        for phase in (2, 3, 4):
            _put_kernel[grid](self, vals, scratch, base, *args, NDIM=ndim, PHASE=phase, BLOCK=BLOCK)
    return self
