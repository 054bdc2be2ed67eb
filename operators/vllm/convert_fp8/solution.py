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
def _convert_fp8_kernel(src_ptr, dst_ptr, n, scale, QUANTISE: tl.constexpr, KIND: tl.constexpr,
                        BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if QUANTISE:
        x = tl.load(src_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        tl.store(dst_ptr + offs, _fp8_bits(tl.math.div_rn(x, scale)), mask=mask)
    else:
        b = tl.load(src_ptr + offs, mask=mask, other=0)
        x = b.to(tl.float8e4nv, bitcast=True).to(tl.float32) * scale
        tl.store(dst_ptr + offs, _round_to(x, KIND).to(dst_ptr.dtype.element_ty), mask=mask)


_KIND = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2, torch.uint8: 0}


def convert_fp8(dst_cache, src_cache, scale, kv_cache_dtype) -> None:
    n = src_cache.numel()
    if n == 0:
        return
    block = 1024
    _convert_fp8_kernel[(triton.cdiv(n, block),)](
        src_cache, dst_cache, n, scale, QUANTISE=dst_cache.dtype == torch.uint8,
        KIND=_KIND[dst_cache.dtype], BLOCK=block,
    )
