"""The launch every solution of the unary family shares: a flat kernel over the contiguous
data of `self`, writing a new tensor, and the block of indices each program handles.
Pasted into every solution of the family (a candidate cannot import it)."""

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _block(n, BLOCK: tl.constexpr):
    # this program's flat indices (int64: a tensor may have more than 2**31 elements) and mask
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    return offs, offs < n


def _float_result(self):
    # integer and bool inputs give float32, as in PyTorch
    return self.dtype if self.is_floating_point() else torch.float32


def _launch(kernel, self, out_dtype, *args, view=None, **meta):
    """A new tensor of self's shape and `out_dtype`, written by
    `kernel(x, y, n, *args, BLOCK=BLOCK, **meta)` with x and y the flat data of `self`
    (made contiguous) and of the result. `view` reads both as another dtype of the same
    size (a float's bits as integers, complex64 as float32 pairs)."""
    out = torch.empty(self.shape, dtype=out_dtype, device=self.device)
    n = out.numel()
    if n == 0:
        return out
    x, y = self.contiguous().reshape(-1), out.reshape(-1)
    if view is not None:
        x, y = x.view(view), y.view(view)
    # bool is stored as bytes 0/1: read and write it as uint8
    x = x.view(torch.uint8) if x.dtype == torch.bool else x
    y = y.view(torch.uint8) if y.dtype == torch.bool else y
    kernel[(triton.cdiv(n, BLOCK),)](x, y, n, *args, BLOCK=BLOCK, **meta)
    return out
