import torch
import triton
import triton.language as tl

BLOCK = 2048


@triton.jit
def _zero(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros([BLOCK], out_ptr.dtype.element_ty), mask=offs < n)


def zeros(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    out = torch.empty(
        size, dtype=dtype if dtype is not None else torch.get_default_dtype(), device=device
    )
    n = out.numel()
    if n:
        _zero[(triton.cdiv(n, BLOCK),)](out, n, BLOCK=BLOCK)
    return out
