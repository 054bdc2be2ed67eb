import math
import struct

import torch
import triton
import triton.language as tl

BLOCK = 2048


@triton.jit
def _arange_float(out_ptr, n, start_hi, start_lo, step_hi, step_lo, BLOCK: tl.constexpr):
    # Python floats reach a kernel as float32, so start and step come split into a float32
    # pair (hi + lo) and are rebuilt in float64: out[i] = start + i * step in double.
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    zero = tl.zeros([BLOCK], tl.float64)
    start = (zero + start_hi) + start_lo
    step = (zero + step_hi) + step_lo
    vals = start + offs.to(tl.float64) * step
    if out_ptr.dtype.element_ty != tl.float64:
        # through float32: a direct float64 -> bfloat16 cast is not supported everywhere
        vals = vals.to(tl.float32)
    tl.store(out_ptr + offs, vals.to(out_ptr.dtype.element_ty), mask=offs < n)


@triton.jit
def _arange_int(out_ptr, n, start, step, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    # offs is int64, so the products stay exact past 2**31 (start/step may arrive as int32)
    vals = offs * step + start
    tl.store(out_ptr + offs, vals.to(out_ptr.dtype.element_ty), mask=offs < n)


def _to_f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def _split(x: float) -> tuple[float, float]:
    """x as hi + lo, both exactly representable in float32 (about 48 bits together)."""
    hi = _to_f32(float(x))
    return hi, _to_f32(float(x) - hi)


def _arange(start, end, step, dtype, device):
    all_int = all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end, step))
    if dtype is None:
        dtype = torch.int64 if all_int else torch.get_default_dtype()
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if all_int:
        n = max(0, -((start - end) // step))  # exact ceil((end - start) / step)
    else:
        n = max(0, math.ceil((float(end) - float(start)) / float(step)))
    out = torch.empty(n, dtype=dtype, device=device)
    if n == 0:
        return out
    grid = (triton.cdiv(n, BLOCK),)
    if dtype.is_floating_point:
        s_hi, s_lo = _split(start)
        d_hi, d_lo = _split(step)
        _arange_float[grid](out, n, s_hi, s_lo, d_hi, d_lo, BLOCK=BLOCK)
    else:
        _arange_int[grid](out, n, int(start), int(step), BLOCK=BLOCK)
    return out


def arange(end, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _arange(0, end, 1, dtype, device)


def arange_start(start, end, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _arange(start, end, 1, dtype, device)


def arange_start_step(start, end, step=1, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _arange(start, end, step, dtype, device)
