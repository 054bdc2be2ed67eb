import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _square_kernel(x_ptr, y_ptr, n, IS_FLOAT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    if IS_FLOAT:
        x = x.to(tl.float32)  # half precision: one rounding, at the store
    else:
        x = x.to(y_ptr.dtype.element_ty)  # integers multiply (and wrap) in the result dtype
    y = x * x
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def square(self: torch.Tensor) -> torch.Tensor:
    # bool squares to int64 (PyTorch promotes pow(bool, 2) to the default integer dtype)
    out_dtype = torch.int64 if self.dtype == torch.bool else self.dtype
    out = torch.empty(self.shape, dtype=out_dtype, device=self.device)
    n = out.numel()
    if n == 0:
        return out
    x = self.contiguous()
    if x.dtype == torch.bool:
        x = x.view(torch.uint8)  # read bool as bytes 0/1
    _square_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, IS_FLOAT=x.is_floating_point(), BLOCK=BLOCK)
    return out
