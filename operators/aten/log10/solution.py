import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _log10_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    # constants as locals: a kernel may not read plain module globals on the GPU, and
    # tl.constexpr globals misbehave in the CPU interpreter when they come first in an expression
    inv_ln10 = 0.43429448190325176  # 1 / ln(10)
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1).to(tl.float32)
    y = tl.log(x) * inv_ln10  # log(0) = -inf, log(x < 0) = NaN carry over
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def log10(self: torch.Tensor) -> torch.Tensor:
    # integer and bool inputs give float32, as in PyTorch
    out_dtype = self.dtype if self.is_floating_point() else torch.float32
    out = torch.empty(self.shape, dtype=out_dtype, device=self.device)
    n = out.numel()
    if n == 0:
        return out
    x = self.contiguous()
    if x.dtype == torch.bool:
        x = x.view(torch.uint8)  # read bool as bytes 0/1
    _log10_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, BLOCK=BLOCK)
    return out
