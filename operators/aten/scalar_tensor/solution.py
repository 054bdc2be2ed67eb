import struct

import torch
import triton
import triton.language as tl


@triton.jit
def _round_to(x, OUT: tl.constexpr):
    # float32 -> OUT, rounding to nearest even. Triton's CPU interpreter truncates
    # float32 -> bfloat16 casts, so bfloat16 is rounded by hand first and the cast is then
    # exact (on a GPU this is the same value the cast itself would give).
    if OUT == tl.bfloat16:
        bits = x.to(tl.int32, bitcast=True)
        bits = (bits + (0x7FFF + ((bits >> 16) & 1))) & -65536
        x = bits.to(tl.float32, bitcast=True)
    return x.to(OUT)


@triton.jit
def _write_scalar(out_ptr, f_bits, i_value, FROM_INT: tl.constexpr):
    # out = s converted to out's dtype. A float s arrives as its float64 bits (Triton would
    # pass a Python float as float32); an int or bool s arrives as an int64.
    OUT: tl.constexpr = out_ptr.dtype.element_ty
    one = tl.arange(0, 1)
    if FROM_INT:
        v = tl.zeros([1], tl.int64) + i_value
        if OUT == tl.int1:
            y = v != 0
        elif OUT == tl.bfloat16:
            y = _round_to(v.to(tl.float32), OUT)
        else:
            y = v.to(OUT)
    else:
        f = (tl.zeros([1], tl.int64) + f_bits).to(tl.float64, bitcast=True)
        if OUT == tl.int1:
            y = f != 0
        elif OUT == tl.bfloat16:
            y = _round_to(f.to(tl.float32), OUT)
        elif OUT.is_floating():
            y = f.to(OUT)
        else:
            y = f.to(tl.int64).to(OUT)  # truncates toward zero
    tl.store(out_ptr + one, y)


def scalar_tensor(s: float | int | bool, *, dtype: torch.dtype | None = None,
                  layout: torch.layout | None = None, device: torch.device | None = None,
                  pin_memory: bool | None = None) -> torch.Tensor:
    dtype = dtype or torch.get_default_dtype()
    out = torch.empty((), dtype=dtype, device=device or "cpu")
    from_int = not isinstance(s, float)
    f_bits = 0 if from_int else struct.unpack("<q", struct.pack("<d", s))[0]
    _write_scalar[(1,)](out, f_bits, int(s) if from_int else 0, FROM_INT=from_int)
    return out
