import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _pow2(k):
    # exact 2**k for int32 k in [-126, 127]: the float32 whose exponent field is k + 127
    return ((k + 127) << 23).to(tl.float32, bitcast=True)


@triton.jit
def _i0_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    # constants as locals: a kernel may not read plain module globals on the GPU, and
    # tl.constexpr globals misbehave in the CPU interpreter when they come first in an expression
    log2e = 1.4426950408889634
    ln2_hi = 0.693359375  # ln 2 rounded to 10 significant bits
    ln2_lo = -0.00021219444005471377  # ln 2 - ln2_hi
    inv_sqrt_2pi = 0.3989422804014327
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0).to(tl.float32)
    a = tl.abs(x)
    # |x| < 10: the power series in u = x^2 / 4, coefficients 1 / (k!)^2, k <= 17
    u = a * a * 0.25
    p = 7.904291839561953e-30
    p = p * u + 2.2843403070268506e-27
    p = p * u + 5.8479111859887375e-25
    p = p * u + 1.3157801051012797e-22
    p = p * u + 2.5789289454139907e-20
    p = p * u + 4.358389832123526e-18
    p = p * u + 6.276081093560082e-16
    p = p * u + 7.5940583032022e-14
    p = p * u + 7.594058194781983e-12
    p = p * u + 6.151187337266606e-10
    p = p * u + 3.936759895850628e-08
    p = p * u + 1.9290123418613803e-06
    p = p * u + 6.944444612599909e-05
    p = p * u + 0.0017361111240461469
    p = p * u + 0.02777777798473835
    p = p * u + 0.25
    p = p * u + 1.0
    p = p * u + 1.0
    # |x| >= 10: exp(a) / sqrt(2 pi a) * S(1/a), S the asymptotic series with coefficients
    # ((2k-1)!!)^2 / (k! 8^k), k <= 12 (the first omitted term is below 1e-8 at a = 10)
    ac = tl.where(a < 10.0, 10.0, tl.where(a > 100.0, 100.0, a))  # past 92 it is +inf anyway
    w = 1.0 / ac
    s = 3038.090576171875
    s = s * w + 551.3358764648438
    s = s * w + 110.01714324951172
    s = s * w + 24.380529403686523
    s = s * w + 6.074041843414307
    s = s * w + 1.7277275323867798
    s = s * w + 0.5725014209747314
    s = s * w + 0.22710800170898438
    s = s * w + 0.112152099609375
    s = s * w + 0.0732421875
    s = s * w + 0.0703125
    s = s * w + 0.125
    s = s * w + 1.0
    # exp(ac) = 2^k e^r with |r| <= ln2 / 2 (Cody-Waite: k * ln2_hi is exact), the power of
    # two applied last in two halves so that overflow happens only where I0 overflows
    kf = tl.floor(ac * log2e + 0.5)
    kf = tl.where(kf == kf, kf, 0.0)  # NaN lanes: any k, the NaN stays in r
    r = (ac - kf * ln2_hi) - kf * ln2_lo
    k = kf.to(tl.int32)
    k1 = k >> 1
    big = tl.exp(r) * s * (inv_sqrt_2pi * tl.rsqrt(ac)) * _pow2(k1) * _pow2(k - k1)
    y = tl.where(a < 10.0, p, big)
    y = tl.where(a == float("inf"), float("nan"), y)  # PyTorch: inf / inf
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def i0(self: torch.Tensor) -> torch.Tensor:
    # integer and bool inputs give float32, as in PyTorch
    out_dtype = self.dtype if self.is_floating_point() else torch.float32
    out = torch.empty(self.shape, dtype=out_dtype, device=self.device)
    n = out.numel()
    if n == 0:
        return out
    x = self.contiguous()
    if x.dtype == torch.bool:
        x = x.view(torch.uint8)  # read bool as bytes 0/1
    _i0_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, BLOCK=BLOCK)
    return out
