import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _pow2(k):
    # exact 2**k for int32 k in [-126, 127]: the float32 whose exponent field is k + 127
    return ((k + 127) << 23).to(tl.float32, bitcast=True)


@triton.jit
def _cosh_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    # constants as locals: a kernel may not read plain module globals on the GPU, and
    # tl.constexpr globals misbehave in the CPU interpreter when they come first in an expression
    log2e = 1.4426950408889634
    ln2_hi = 0.693359375  # ln 2 rounded to 10 significant bits
    ln2_lo = -0.00021219444005471377  # ln 2 - ln2_hi
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0).to(tl.float32)
    a = tl.abs(x)
    a = tl.where(a > 90.0, 90.0, a)  # beyond 89.42 the result is +inf anyway; keeps NaN
    # e^a = 2^k e^r, |r| <= ln2 / 2 (Cody-Waite: k * ln2_hi is exact, so r is accurate)
    kf = tl.floor(a * log2e + 0.5)
    kf = tl.where(kf == kf, kf, 0.0)  # NaN lanes: any k, the NaN stays in r
    r = (a - kf * ln2_hi) - kf * ln2_lo
    k = kf.to(tl.int32) - 1  # e^a / 2 = 2^k e^r, k in [-1, 129]
    k1 = k >> 1
    half = tl.exp(r) * _pow2(k1) * _pow2(k - k1)  # two factors: 2^129 is not a float32
    y = half + 0.25 / half
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def cosh(self: torch.Tensor) -> torch.Tensor:
    # integer and bool inputs give float32, as in PyTorch
    out_dtype = self.dtype if self.is_floating_point() else torch.float32
    out = torch.empty(self.shape, dtype=out_dtype, device=self.device)
    n = out.numel()
    if n == 0:
        return out
    x = self.contiguous()
    if x.dtype == torch.bool:
        x = x.view(torch.uint8)  # read bool as bytes 0/1
    _cosh_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, BLOCK=BLOCK)
    return out
