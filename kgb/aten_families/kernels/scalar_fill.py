"""A Python scalar written by a Triton kernel, converted as PyTorch converts a scalar: the
filling family's shared part (fill_, zero_, full, new_ones, zeros). A float reaches the
kernel as two float32 halves rebuilt in float64, an int as an int64; `_store_value` casts
once to the destination's dtype. `fill_buffer` fills a contiguous tensor."""

import math
import struct

import torch
import triton
import triton.language as tl

BLOCK = 2048


def _split(x: float) -> tuple[float, float]:
    """A float as hi + lo, both float32 values: kernels receive Python floats as float32."""
    if not math.isfinite(x) or abs(x) > 3.4e38:
        return x, 0.0
    hi = struct.unpack("f", struct.pack("f", x))[0]
    return hi, struct.unpack("f", struct.pack("f", x - hi))[0]


def _scalar(value):
    """The kernel's arguments for a Python scalar: hi, lo and the type ACC they add up in."""
    if isinstance(value, float):
        return *_split(value), tl.float64
    return int(value), 0, tl.int64


@triton.jit
def _store_value(ptr, v, offs, mask):
    ty = ptr.dtype.element_ty
    if ty == tl.int1:
        v = v != 0
    elif ty.is_floating() and ty != tl.float64:
        # through float32: float64 -> bfloat16 casts are not supported everywhere, and the
        # CPU interpreter casts int -> bfloat16 bitwise
        v = v.to(tl.float32)
    tl.store(ptr + offs, v.to(ty), mask=mask)


@triton.jit
def _fill(out_ptr, hi, lo, n, ACC: tl.constexpr, BLOCK: tl.constexpr):
    # value = hi + lo, rebuilt in ACC (int64 for ints, float64 for floats) and cast once
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    _store_value(out_ptr, (tl.zeros([BLOCK], ACC) + hi) + lo, offs, offs < n)


def fill_buffer(out: torch.Tensor, value) -> None:
    """Fill a contiguous tensor with a Python scalar."""
    n = out.numel()
    if n:
        hi, lo, acc = _scalar(value)
        _fill[(triton.cdiv(n, BLOCK),)](out, hi, lo, n, ACC=acc, BLOCK=BLOCK)
