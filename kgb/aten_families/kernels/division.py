"""The division kernel of the division family (div, div_, floor_divide): true division and
PyTorch's "trunc" and "floor" rounding modes, written through the strided launch."""

import torch
import triton
import triton.language as tl

from kgb.aten_families.kernels.strided import _TL, _index, _launch, _read, _write


@triton.jit
def _fdiv(a, b):
    # correctly rounded division (Triton's plain float32 `/` may be approximate on GPUs)
    if a.dtype == tl.float32:
        q = tl.math.div_rn(a, b)
    else:
        q = a / b
    return q


@triton.jit
def _round_to(x, DT: tl.constexpr):
    # x rounded to the nearest DT value (ties to even), kept in x's dtype. bfloat16 is rounded
    # on the bits because Triton's CPU interpreter truncates float32 -> bfloat16 casts.
    if DT == tl.bfloat16:
        b = x.to(tl.int32, bitcast=True)
        b = (b + 0x7FFF + ((b >> 16) & 1)) & -65536
        r = tl.where(x != x, x, b.to(tl.float32, bitcast=True))
    else:
        r = x.to(DT).to(x.dtype)
    return r


@triton.jit
def _floor_div(a, b):
    # PyTorch's floor division: the quotient of a - fmod(a, b), corrected to the floor;
    # done in float64 for float32 inputs (float32 for half types), where fmod is exact.
    q = _fdiv(a, b)
    t = tl.where(q < 0, tl.math.ceil(q), tl.math.floor(q))
    mod = tl.where(tl.abs(b) == float("inf"), a, a - t * b)
    d = _fdiv(a - mod, b)
    d = tl.where((mod != 0) & ((b < 0) != (mod < 0)), d - 1, d)
    f = tl.math.floor(d)
    f = tl.where(d - f > 0.5, f + 1, f)
    f = tl.where(d == 0, 0.0, f)
    return tl.where(b == 0, q, f)


@triton.jit
def _div_kernel(out_ptr, a_ptr, a_val, b_ptr, b_val, n, sizes, o_st, a_st, b_st,
                A_SCALAR: tl.constexpr, B_SCALAR: tl.constexpr, COMMON: tl.constexpr,
                CT: tl.constexpr, MODE: tl.constexpr, NDIM: tl.constexpr,
                IDX64: tl.constexpr, BLOCK: tl.constexpr):
    # MODE 0: true division, 1: rounded toward zero, 2: rounded toward -inf
    i, mask = _index(n, IDX64, BLOCK)
    a = _read(a_ptr, a_val, i, mask, sizes, a_st, NDIM, A_SCALAR, COMMON, CT)
    b = _read(b_ptr, b_val, i, mask, sizes, b_st, NDIM, B_SCALAR, COMMON, CT)
    if MODE == 0:
        r = _fdiv(a, b)
    elif CT.is_floating():
        if MODE == 1:
            # PyTorch truncates the quotient after rounding it to the common dtype
            q = _round_to(_fdiv(a, b), COMMON)
            r = tl.where(q < 0, tl.math.ceil(q), tl.math.floor(q))
        else:
            r = _floor_div(a, b)
    else:
        r = a // b  # integer division truncates in Triton, as in C
        if MODE == 2:
            rem = a % b
            r = tl.where((rem != 0) & ((rem < 0) != (b < 0)), r - 1, r)
    _write(out_ptr, r, i, mask, sizes, o_st, NDIM)


_MODES = {None: 0, "trunc": 1, "floor": 2}


def _div_into(out, a, b, rounding_mode):
    """out <- a / b with PyTorch's rounding modes; `out` has the result's shape and dtype."""
    if rounding_mode not in _MODES:
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")
    common = torch.result_type(a, b)
    if common == torch.float64:
        ct = tl.float64
    elif rounding_mode is None or common in (torch.float16, torch.bfloat16):
        ct = tl.float32
    elif common == torch.float32:
        ct = tl.float64 if rounding_mode == "floor" else tl.float32
    else:
        ct = _TL[common]
    return _launch(_div_kernel, out, [a, b], COMMON=_TL[common], CT=ct, MODE=_MODES[rounding_mode])
