import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _acosh_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    # constants as locals: a kernel may not read plain module globals on the GPU, and
    # tl.constexpr globals misbehave in the CPU interpreter when they come first in an expression
    ln2 = 0.6931471805599453
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1).to(tl.float32)
    # acosh(1 + t) = log1p(t + sqrt(t * (t + 2))): t = x - 1 is exact near 1, and
    # t * (t + 2) avoids the cancellation of x * x - 1.
    t = x - 1.0
    u = t + tl.sqrt(t * (t + 2.0))
    # log1p(u) = log(w) * u / (w - 1) with w = 1 + u corrects the rounding of w.
    w = 1.0 + u
    small = tl.where(w == 1.0, u, tl.log(w) * (u / (w - 1.0)))
    # beyond 1e4 the -1 under the root is below float32 resolution: acosh(x) = log(2x)
    big = tl.log(x) + ln2
    y = tl.where(x > 1.0e4, big, small)
    y = tl.where(x < 1.0, float("nan"), y)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def acosh(self: torch.Tensor) -> torch.Tensor:
    # integer and bool inputs give float32, as in PyTorch
    out_dtype = self.dtype if self.is_floating_point() else torch.float32
    out = torch.empty(self.shape, dtype=out_dtype, device=self.device)
    n = out.numel()
    if n == 0:
        return out
    x = self.contiguous()
    if x.dtype == torch.bool:
        x = x.view(torch.uint8)  # read bool as bytes 0/1
    _acosh_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, BLOCK=BLOCK)
    return out
