import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _logit_kernel(x_ptr, y_ptr, n, lo, CLAMP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.5).to(tl.float32)
    if CLAMP:
        hi = 1.0 - lo
        # lo first, then hi (matters when eps > 1/2); NaN fails both tests and stays NaN
        x = tl.where(x < lo, lo, tl.where(x > hi, hi, x))
    y = tl.log(x / (1.0 - x))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def logit(self: torch.Tensor, eps: float | None = None) -> torch.Tensor:
    # integer and bool inputs give float32, as in PyTorch
    out_dtype = self.dtype if self.is_floating_point() else torch.float32
    out = torch.empty(self.shape, dtype=out_dtype, device=self.device)
    n = out.numel()
    if n == 0:
        return out
    x = self.contiguous()
    if x.dtype == torch.bool:
        x = x.view(torch.uint8)  # read bool as bytes 0/1
    clamp = eps is not None and eps >= 0  # a negative eps means no clamping, as in PyTorch
    lo = float(eps) if clamp else 0.0
    _logit_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, lo, CLAMP=clamp, BLOCK=BLOCK)
    return out
