import torch
import triton
import triton.language as tl

BLOCK = 2048


@triton.jit
def _zero(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros([BLOCK], out_ptr.dtype.element_ty), mask=offs < n)


def zeros_like(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    out = torch.empty_like(
        self,
        dtype=dtype if dtype is not None else self.dtype,
        device=device if device is not None else self.device,
        memory_format=memory_format if memory_format is not None else torch.preserve_format,
    )
    # empty_like always returns a dense tensor: its numel elements fill its storage from
    # data_ptr on, in whatever order its strides say, so one flat pass covers them.
    n = out.numel()
    if n:
        _zero[(triton.cdiv(n, BLOCK),)](out, n, BLOCK=BLOCK)
    return out
