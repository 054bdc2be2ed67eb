import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _bitwise_not_kernel(x_ptr, y_ptr, n, IS_BOOL: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    if IS_BOOL:
        y = x ^ 1  # bool bytes are 0 or 1: flip only the lowest bit
    else:
        y = ~x
    tl.store(y_ptr + offs, y, mask=mask)


def bitwise_not(self: torch.Tensor) -> torch.Tensor:
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    n = out.numel()
    if n == 0:
        return out
    x, y = self.contiguous(), out
    is_bool = self.dtype == torch.bool
    if is_bool:
        x, y = x.view(torch.uint8), out.view(torch.uint8)
    _bitwise_not_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, IS_BOOL=is_bool, BLOCK=BLOCK)
    return out
