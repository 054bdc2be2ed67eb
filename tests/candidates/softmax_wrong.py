# Correct structure, but forgets to subtract the row maximum and divides by n instead of the sum.
import torch
import triton
import triton.language as tl


@triton.jit
def _rows(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    y = tl.exp(x) / n_cols
    tl.store(y_ptr + row * n_cols + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax_int(self, dim, dtype=None):
    x = self.movedim(dim, -1).contiguous()
    rows = x.reshape(-1, x.shape[-1])
    out = torch.empty_like(rows)
    _rows[(rows.shape[0],)](rows, out, rows.shape[1], rows.stride(0), BLOCK=triton.next_power_of_2(rows.shape[1]))
    return out.reshape(x.shape).movedim(-1, dim)
