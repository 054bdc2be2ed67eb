import torch
import triton
import triton.language as tl


@triton.jit
def _round_to(x, KIND: tl.constexpr):
    """Round float32 to the input dtype (KIND 0: float32, 1: float16, 2: bfloat16) and
    back. bfloat16 rounds to nearest even by hand: the CPU interpreter's cast truncates."""
    if KIND == 1:
        return x.to(tl.float16).to(tl.float32)
    elif KIND == 2:
        bits = x.to(tl.int32, bitcast=True)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & -65536
        return bits.to(tl.float32, bitcast=True)
    else:
        return x


@triton.jit
def _fp8_bits(x):
    """float32 -> float8_e4m3fn bit pattern: saturate to +-448, round to nearest even.
    Done in integers because the CPU interpreter's fp8 cast rounds wrongly."""
    x = tl.minimum(tl.maximum(x, -448.0), 448.0)
    bits = x.to(tl.int32, bitcast=True)
    sign = ((bits >> 31) & 1) << 7
    a = bits & 0x7FFFFFFF
    exp = a >> 23
    # normal fp8 (|x| >= 2**-6): keep 3 mantissa bits, rebias the exponent from 127 to 7
    normal = ((a + 0x7FFFF + ((a >> 20) & 1)) >> 20) - 960
    # subnormal fp8: the integer nearest to |x| * 2**9
    m = (a & 0x7FFFFF) | 0x800000
    s = tl.minimum(tl.maximum(141 - exp, 21), 30)
    q = m >> s
    rem = m & ((1 << s) - 1)
    half = 1 << (s - 1)
    q = q + ((rem > half) | ((rem == half) & ((q & 1) == 1))).to(tl.int32)
    code = tl.where(exp >= 121, normal, tl.where(exp == 0, 0, q))
    return (code | sign).to(tl.uint8)


@triton.jit
def _rms_quant_kernel(
    x_ptr, r_ptr, w_ptr, out_ptr, scale_ptr, ub_ptr, hidden, group, n_groups, eps,
    KIND: tl.constexpr, HAS_RES: tl.constexpr, HAS_UB: tl.constexpr, IS_INT8: tl.constexpr,
    BLOCK_G: tl.constexpr, BLOCK_C: tl.constexpr,
):
    # One program per token; the row is held as [groups, columns of a group].
    row = tl.program_id(0).to(tl.int64)
    gi = tl.arange(0, BLOCK_G)
    g = gi[:, None]
    c = tl.arange(0, BLOCK_C)[None, :]
    col = g * group + c
    mask = (g < n_groups) & (c < group)
    off = row * hidden + col
    x = tl.load(x_ptr + off, mask=mask, other=0.0).to(tl.float32)
    if HAS_RES:
        x += tl.load(r_ptr + off, mask=mask, other=0.0).to(tl.float32)
        tl.store(r_ptr + off, _round_to(x, KIND).to(r_ptr.dtype.element_ty), mask=mask)
    ss = tl.sum(tl.sum(x * x, axis=1), axis=0)
    inv = tl.rsqrt(ss / hidden + eps)
    w = tl.load(w_ptr + col, mask=mask, other=0.0).to(tl.float32)
    y = _round_to(_round_to(x * inv, KIND) * w, KIND)
    absmax = tl.max(tl.abs(y), axis=1)
    if HAS_UB:
        absmax = tl.minimum(absmax, tl.load(ub_ptr))
    if IS_INT8:
        s = tl.maximum(tl.math.div_rn(absmax, 127.0), 1.1920928955078125e-07)
        v = y * tl.math.div_rn(tl.full(s.shape, 1.0, tl.float32), s)[:, None]
        v = tl.minimum(tl.maximum(v, -128.0), 127.0)
        v = (v + 12582912.0) - 12582912.0  # round half to even: 1.5 * 2**23 drops the fraction
        tl.store(out_ptr + off, v.to(tl.int8), mask=mask)
    else:
        s = tl.maximum(tl.math.div_rn(absmax, 448.0), 4.359654017857143e-06)
        tl.store(out_ptr + off, _fp8_bits(tl.math.div_rn(y, s[:, None])), mask=mask)
    tl.store(scale_ptr + row * n_groups + gi, s, mask=gi < n_groups)


_KIND = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2}


def rms_norm_dynamic_per_token_quant(result, input, weight, scale, epsilon, scale_ub, residual) -> None:
    hidden = input.shape[-1]
    tokens = input.numel() // hidden
    if tokens == 0:
        return
    is_int8 = result.dtype == torch.int8
    out = result if is_int8 else result.view(torch.uint8)
    block = triton.next_power_of_2(hidden)
    _rms_quant_kernel[(tokens,)](
        input, residual if residual is not None else input, weight, out, scale,
        scale_ub if scale_ub is not None else scale, hidden, hidden, 1, epsilon,
        KIND=_KIND[input.dtype], HAS_RES=residual is not None, HAS_UB=scale_ub is not None,
        IS_INT8=is_int8, BLOCK_G=1, BLOCK_C=block, num_warps=min(16, max(4, block // 512)),
    )
