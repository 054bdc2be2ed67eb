import torch
import triton
import triton.language as tl


@triton.jit
def _rn(v):
    """Round float32 to the nearest integer, ties to even (|v| < 2**22): adding and
    removing 1.5 * 2**23 leaves no fraction bits."""
    return (v + 12582912.0) - 12582912.0


@triton.jit
def _int8_quant_kernel(
    x_ptr, out_ptr, scale_ptr, azp_ptr, hidden,
    STATIC: tl.constexpr, SYMMETRIC: tl.constexpr, BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x_row = x_ptr + row * hidden
    o_row = out_ptr + row * hidden
    zp = 0.0
    if STATIC:
        s = tl.load(scale_ptr)
        if SYMMETRIC:
            mult = 0.0
        else:
            mult = tl.math.div_rn(1.0, s)
            zp = tl.load(azp_ptr).to(tl.float32)
    else:
        lo = tl.full([BLOCK], float("inf"), tl.float32)
        hi = tl.full([BLOCK], float("-inf"), tl.float32)
        for start in range(0, hidden, BLOCK):
            c = start + cols
            x = tl.load(x_row + c, mask=c < hidden, other=0.0).to(tl.float32)
            lo = tl.where(c < hidden, tl.minimum(lo, x), lo)
            hi = tl.where(c < hidden, tl.maximum(hi, x), hi)
        mn = tl.min(lo, axis=0)
        mx = tl.max(hi, axis=0)
        if SYMMETRIC:
            absmax = tl.maximum(mx, -mn)
            s = tl.math.div_rn(absmax, 127.0)
            mult = tl.where(absmax == 0.0, 0.0, tl.math.div_rn(127.0, absmax))
        else:
            s = tl.math.div_rn(mx - mn, 255.0)
            zp = _rn(-128.0 - tl.math.div_rn(mn, s))
            mult = tl.math.div_rn(1.0, s)
            tl.store(azp_ptr + row, zp.to(tl.int32))
        tl.store(scale_ptr + row, s)
    for start in range(0, hidden, BLOCK):
        c = start + cols
        x = tl.load(x_row + c, mask=c < hidden, other=0.0).to(tl.float32)
        if STATIC and SYMMETRIC:
            v = tl.math.div_rn(x, s)
        else:
            v = x * mult
        q = _rn(tl.minimum(tl.maximum(v, -1.0e6), 1.0e6)) + zp
        q = tl.minimum(tl.maximum(q, -128.0), 127.0)
        tl.store(o_row + c, q.to(tl.int8), mask=c < hidden)


def scaled_int8_quant(input, scale=None, azp=None, symmetric=True):
    hidden = input.shape[-1]
    tokens = input.numel() // hidden
    output = torch.empty(input.shape, dtype=torch.int8, device=input.device)
    static = scale is not None
    if static:
        scales, azps = scale, azp
    else:
        scales = torch.empty(tokens, 1, dtype=torch.float32, device=input.device)
        azps = None if symmetric else torch.empty(tokens, 1, dtype=torch.int32, device=input.device)
    if tokens:
        _int8_quant_kernel[(tokens,)](
            input, output, scales, azps if azps is not None else scales, hidden,
            STATIC=static, SYMMETRIC=azp is None if static else symmetric,
            BLOCK=min(triton.next_power_of_2(hidden), 4096), num_warps=4,
        )
    return output, scales, azps
