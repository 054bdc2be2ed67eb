import torch
import triton
import triton.language as tl

BLOCK = 1024
# pi/2 split in two floats, so that pi/2 - r keeps its accuracy when r is close to pi/2


@triton.jit
def _asin_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    # constants as locals: a kernel may not read plain module globals on the GPU, and
    # tl.constexpr globals misbehave in the CPU interpreter when they come first in an expression
    pio2_hi = 1.5707963705062866
    pio2_lo = -4.371138828673793e-08
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0).to(tl.float32)
    a = tl.abs(x)
    # |x| <= 1/2: asin(a) = a + a z P(z) with z = a^2.
    # |x| >  1/2: asin(a) = pi/2 - 2 asin(s) with s = sqrt(z), z = (1 - a) / 2 <= 1/4.
    big = a > 0.5
    z = tl.where(big, 0.5 * (1.0 - a), a * a)
    s = tl.where(big, tl.sqrt(z), a)
    # P: least-squares fit (relative error) of (asin(s) - s) / s^3 on z = s^2 in [0, 1/4]
    p = 0.03380575031042099
    p = p * z + 0.017077859491109848
    p = p * z + 0.03111615590751171
    p = p * z + 0.04459803178906441
    p = p * z + 0.07500098645687103
    p = p * z + 0.1666666567325592
    q = s * z * p
    r = tl.where(big, pio2_hi - (2.0 * s - (pio2_lo - 2.0 * q)), s + q)
    r = tl.where(a > 1.0, float("nan"), r)
    y = tl.where(x < 0, -r, r)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def asin(self: torch.Tensor) -> torch.Tensor:
    # integer and bool inputs give float32, as in PyTorch
    out_dtype = self.dtype if self.is_floating_point() else torch.float32
    out = torch.empty(self.shape, dtype=out_dtype, device=self.device)
    n = out.numel()
    if n == 0:
        return out
    x = self.contiguous()
    if x.dtype == torch.bool:
        x = x.view(torch.uint8)  # read bool as bytes 0/1
    _asin_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, BLOCK=BLOCK)
    return out
