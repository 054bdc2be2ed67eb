import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _sign_kernel(x_ptr, y_ptr, n, IS_FLOAT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    if IS_FLOAT:
        x = x.to(tl.float32)
    # (0 < x) - (x < 0): NaN compares false both ways and gives 0, as in PyTorch
    y = (x > 0).to(tl.int32) - (x < 0).to(tl.int32)
    if IS_FLOAT:
        y = y.to(tl.float32)  # int -> bfloat16 through float32 (the CPU interpreter miscasts it directly)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _complex_sgn_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    # x_ptr, y_ptr: complex64 data seen as interleaved float32 (re, im) pairs
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    re = tl.load(x_ptr + 2 * offs, mask=mask, other=0)
    im = tl.load(x_ptr + 2 * offs + 1, mask=mask, other=0)
    # scale by the larger component so that |z| neither overflows nor underflows
    m = tl.maximum(tl.abs(re), tl.abs(im))
    zero = m == 0
    m = tl.where(zero, 1.0, m)
    re = re / m
    im = im / m
    h = tl.sqrt_rn(re * re + im * im)
    tl.store(y_ptr + 2 * offs, tl.where(zero, 0.0, re / h), mask=mask)
    tl.store(y_ptr + 2 * offs + 1, tl.where(zero, 0.0, im / h), mask=mask)


def sgn(self: torch.Tensor) -> torch.Tensor:
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    n = out.numel()
    if n == 0:
        return out
    x = self.contiguous()
    grid = (triton.cdiv(n, BLOCK),)
    if self.dtype == torch.complex64:
        # Triton has no complex dtype: view the storage as float32 pairs
        xf = x.reshape(-1).view(torch.float32)
        yf = out.reshape(-1).view(torch.float32)
        _complex_sgn_kernel[grid](xf, yf, n, BLOCK=BLOCK)
    elif self.dtype == torch.bool:
        y = out.view(torch.uint8)
        _sign_kernel[grid](x.view(torch.uint8), y, n, IS_FLOAT=False, BLOCK=BLOCK)
    else:
        _sign_kernel[grid](x, out, n, IS_FLOAT=x.is_floating_point(), BLOCK=BLOCK)
    return out
