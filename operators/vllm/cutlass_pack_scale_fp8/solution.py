import torch
import triton
import triton.language as tl


@triton.jit
def _e4m3_to_f32(bits):
    """Decode float8_e4m3fn bytes (as int32) to float32 (finite values)."""
    sign = tl.where((bits & 0x80) != 0, -1.0, 1.0)
    exp = (bits >> 3) & 0xF
    man = (bits & 0x7).to(tl.float32)
    normal = (8.0 + man) * tl.exp2((exp - 10).to(tl.float32))  # (1 + man / 8) * 2^(exp - 7)
    sub = man * 0.001953125  # man * 2^-9
    return sign * tl.where(exp == 0, sub, normal)


@triton.jit
def _f32_to_e4m3(x):
    """float32 -> float8_e4m3fn byte (int32), round to nearest even, saturating at 448."""
    bits = x.to(tl.int32, bitcast=True)
    sign = (bits >> 24) & 0x80
    mag = bits & 0x7FFFFFFF
    exp = (mag >> 23) - 127
    # normal range: keep 3 of the 23 mantissa bits, rounding the 20 dropped ones to even
    man = mag & 0x7FFFFF
    keep = man >> 20
    rest = man & 0xFFFFF
    up = (rest > 0x80000) | ((rest == 0x80000) & ((keep & 1) == 1))
    code = ((exp + 7) << 3) + keep + up.to(tl.int32)  # a carry moves into the exponent
    # subnormal range (|x| < 2^-6): multiples of 2^-9, rounded to even via the magic number
    ax = tl.abs(x)
    q = (ax * 512.0 + 8388608.0) - 8388608.0
    sub_code = q.to(tl.int32)
    code = tl.where(exp < -6, sub_code, code)
    code = tl.minimum(code, 0x7E)  # 448, the largest finite value
    return sign | code


@triton.jit
def _pack_scale_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = i < n
    s = _e4m3_to_f32(tl.load(src_ptr + i, mask=ok, other=0).to(tl.int32))
    j = tl.arange(0, 8)
    prod = s[:, None] * (j - 8).to(tl.float32)[None, :]  # -8 .. -1, exact in float32
    out = _f32_to_e4m3(prod)
    tl.store(dst_ptr + i.to(tl.int64)[:, None] * 8 + j[None, :], out.to(tl.uint8), mask=ok[:, None])


def cutlass_pack_scale_fp8(scales: torch.Tensor) -> torch.Tensor:
    n = scales.numel()
    out = torch.empty(8 * n, dtype=torch.float8_e4m3fn, device=scales.device)
    if n:
        _pack_scale_kernel[(triton.cdiv(n, 256),)](scales.view(torch.uint8), out.view(torch.uint8), n, BLOCK=256)
    return out
