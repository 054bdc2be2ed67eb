import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _floor_kernel(x_ptr, y_ptr, n, IS_FLOAT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    if IS_FLOAT:
        # float16/bfloat16 values are exact in float32, and so is their floor
        y = tl.floor(x.to(tl.float32)).to(y_ptr.dtype.element_ty)
    else:
        y = x  # integers are already whole: an exact copy
    tl.store(y_ptr + offs, y, mask=mask)


def floor(self: torch.Tensor) -> torch.Tensor:
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    n = out.numel()
    if n == 0:
        return out
    x = self.contiguous()
    _floor_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, IS_FLOAT=x.is_floating_point(), BLOCK=BLOCK)
    return out
