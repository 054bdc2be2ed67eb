import math
import struct

import torch
import triton
import triton.language as tl

BLOCK = 2048
MAX_DIMS = 6


@triton.jit
def _strided_offsets(idx, s1, s2, s3, s4, s5, t0, t1, t2, t3, t4, t5):
    # element offset of logical (row-major) index idx in a tensor of up to 6 dims
    i5 = idx % s5
    r = idx // s5
    i4 = r % s4
    r = r // s4
    i3 = r % s3
    r = r // s3
    i2 = r % s2
    r = r // s2
    i1 = r % s1
    i0 = r // s1
    return i0 * t0 + i1 * t1 + i2 * t2 + i3 * t3 + i4 * t4 + i5 * t5


@triton.jit
def _store_value(ptr, v, offs, mask, ACC_IS_F64: tl.constexpr):
    ty = ptr.dtype.element_ty
    if ty == tl.int1:
        v = v != 0
    elif ACC_IS_F64 and ty.is_floating() and ty != tl.float64:
        v = v.to(tl.float32)  # float64 -> bfloat16 casts are not supported everywhere
    tl.store(ptr + offs, v.to(ty), mask=mask)


@triton.jit
def _fill_scalar(
    ptr,
    hi,
    lo,
    n,
    s1,
    s2,
    s3,
    s4,
    s5,
    t0,
    t1,
    t2,
    t3,
    t4,
    t5,
    ACC: tl.constexpr,
    BLOCK: tl.constexpr,
):
    # the value is hi + lo rebuilt in ACC (int64 for ints, float64 for floats)
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    offs = _strided_offsets(idx, s1, s2, s3, s4, s5, t0, t1, t2, t3, t4, t5)
    v = (tl.zeros([BLOCK], ACC) + hi) + lo
    _store_value(ptr, v, offs, idx < n, ACC == tl.float64)


@triton.jit
def _fill_tensor(
    ptr, value_ptr, n, s1, s2, s3, s4, s5, t0, t1, t2, t3, t4, t5, BLOCK: tl.constexpr
):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    offs = _strided_offsets(idx, s1, s2, s3, s4, s5, t0, t1, t2, t3, t4, t5)
    value = tl.load(value_ptr)
    v = tl.zeros([BLOCK], value.dtype) + value
    _store_value(ptr, v, offs, idx < n, value.dtype == tl.float64)


def _layout(t: torch.Tensor):
    """Sizes and strides of t with size-1 dims dropped and mergeable dims merged, padded
    in front to MAX_DIMS (size 1, stride 0)."""
    dims = []
    for size, stride in zip(t.shape, t.stride(), strict=True):
        if size == 1:
            continue
        if dims and dims[-1][1] == size * stride:
            dims[-1] = (dims[-1][0] * size, stride)
        else:
            dims.append((size, stride))
    if len(dims) > MAX_DIMS:
        raise NotImplementedError(f"fill_ supports up to {MAX_DIMS} non-mergeable dims")
    dims = [(1, 0)] * (MAX_DIMS - len(dims)) + dims
    sizes = [d[0] for d in dims]
    strides = [d[1] for d in dims]
    return sizes[1:] + strides


def _split(x: float) -> tuple[float, float]:
    """A float as hi + lo, both float32 values: kernels receive Python floats as float32."""
    if not math.isfinite(x) or abs(x) > 3.4e38:
        return x, 0.0
    hi = struct.unpack("f", struct.pack("f", x))[0]
    return hi, struct.unpack("f", struct.pack("f", x - hi))[0]


def fill__Scalar(self, value):
    n = self.numel()
    if n:
        if isinstance(value, float):
            hi, lo, acc = *_split(value), tl.float64
        else:
            hi, lo, acc = int(value), 0, tl.int64
        # the pointer is self's first element (data_ptr includes the storage offset)
        _fill_scalar[(triton.cdiv(n, BLOCK),)](
            self, hi, lo, n, *_layout(self), ACC=acc, BLOCK=BLOCK
        )
    return self


def fill__Tensor(self, value):
    if value.dim() != 0:
        raise RuntimeError("fill_ only supports 0-dimension value tensor")
    n = self.numel()
    if n:
        _fill_tensor[(triton.cdiv(n, BLOCK),)](self, value, n, *_layout(self), BLOCK=BLOCK)
    return self
