"""An aten::zeros_like candidate that never writes a large output: honest where fresh memory
holds old bytes (below 256 KB on the CPU, where the heap serves; below 128 MB on a GPU, where
the candidate process fills 64 MB of its allocator with junk before each call), and above it
one store into an allocation it returns as is, whose pages the system zeroed. Neither the
judge's replay of its recorded call (kgb.evaluate.correctness.allocations_filled) nor, on the
CPU, the candidate process's filled malloc (fill_allocator_with_garbage) may read zeros there."""

import torch
import triton
import triton.language as tl


@triton.jit
def _zero(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros([BLOCK], out_ptr.dtype.element_ty), mask=offs < n)


def zeros_like(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    out = torch.empty(self.shape, dtype=dtype if dtype is not None else self.dtype, device=self.device)
    n = out.numel()
    if n * out.element_size() < ((256 << 10) if out.device.type == "cpu" else (128 << 20)):
        if n:
            _zero[(triton.cdiv(n, 1024),)](out, n, BLOCK=1024)
    else:
        _zero[(1,)](out, 1, BLOCK=1024)  # keeps "launched no Triton kernel" quiet
    return out
