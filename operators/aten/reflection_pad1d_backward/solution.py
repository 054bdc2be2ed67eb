import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _reflect_bw_kernel(g, out, n, C, W, sn, sc, sw, pl, pr, BLOCK: tl.constexpr):
    # One lane per grad_input element (contiguous rows of W). Input position i receives the
    # output at i + pl, its left mirror pl - i (1 <= i <= pl) and its right mirror
    # pl + 2W - 2 - i (W - 1 - pr <= i <= W - 2).
    k = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = k < n
    i = k % W
    row = k // W
    base = g + (row // C) * sn + (row % C) * sc
    acc = tl.load(base + (i + pl) * sw, mask=m, other=0).to(tl.float32)
    left = m & (i >= 1) & (i <= pl)
    acc += tl.load(base + (pl - i) * sw, mask=left, other=0).to(tl.float32)
    right = m & (i >= W - 1 - pr) & (i <= W - 2)
    acc += tl.load(base + (pl + 2 * W - 2 - i) * sw, mask=right, other=0).to(tl.float32)
    tl.store(out + k, acc.to(out.dtype.element_ty), mask=m)


def reflection_pad1d_backward(grad_output: torch.Tensor, self: torch.Tensor, padding: list) -> torch.Tensor:
    pl, pr = padding
    out = torch.empty(self.shape, dtype=grad_output.dtype, device=grad_output.device)
    n = out.numel()
    if n == 0:
        return out
    g = grad_output if grad_output.ndim == 3 else grad_output.unsqueeze(0)
    _, C, _ = g.shape
    W = self.shape[-1]
    _reflect_bw_kernel[(triton.cdiv(n, BLOCK),)](g, out, n, C, W, *g.stride(), pl, pr, BLOCK=BLOCK)
    return out
