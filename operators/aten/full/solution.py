import math
import struct

import torch
import triton
import triton.language as tl

BLOCK = 2048


@triton.jit
def _fill(out_ptr, hi, lo, n, ACC: tl.constexpr, BLOCK: tl.constexpr):
    # value = hi + lo, rebuilt in ACC (int64 for ints, float64 for floats) and cast once
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    v = (tl.zeros([BLOCK], ACC) + hi) + lo
    if out_ptr.dtype.element_ty == tl.int1:
        v = v != 0
    elif (
        ACC == tl.float64
        and out_ptr.dtype.element_ty.is_floating()
        and out_ptr.dtype.element_ty != tl.float64
    ):
        v = v.to(tl.float32)  # float64 -> bfloat16 casts are not supported everywhere
    tl.store(out_ptr + offs, v.to(out_ptr.dtype.element_ty), mask=offs < n)


def _split(x: float) -> tuple[float, float]:
    """A float as hi + lo, both float32 values: kernels receive Python floats as float32."""
    if not math.isfinite(x) or abs(x) > 3.4e38:
        return x, 0.0
    hi = struct.unpack("f", struct.pack("f", x))[0]
    return hi, struct.unpack("f", struct.pack("f", x - hi))[0]


def fill_buffer(out: torch.Tensor, value) -> None:
    """Fill a contiguous tensor with a Python scalar."""
    n = out.numel()
    if n == 0:
        return
    if isinstance(value, float):
        hi, lo = _split(value)
        acc = tl.float64
    else:
        hi, lo, acc = int(value), 0, tl.int64
    _fill[(triton.cdiv(n, BLOCK),)](out, hi, lo, n, ACC=acc, BLOCK=BLOCK)


def full(size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    if dtype is None:
        if isinstance(fill_value, bool):
            dtype = torch.bool
        elif isinstance(fill_value, int):
            dtype = torch.int64
        else:
            dtype = torch.get_default_dtype()
    out = torch.empty(size, dtype=dtype, device=device)
    fill_buffer(out, fill_value)
    return out
