# An autotuned kernel, as models often write them: on a host without a GPU the autotuner has
# no benchmarker, so the interpreter must run it on one of its configs.
import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({}, num_warps=4), triton.Config({}, num_warps=8)], key=["n_cols"])
@triton.jit
def _rows(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, 0))
    tl.store(y_ptr + row * n_cols + cols, (e / tl.sum(e, 0)).to(y_ptr.dtype.element_ty), mask=mask)


def softmax_int(self, dim, dtype=None):
    x = self.movedim(dim % self.ndim, -1).contiguous()
    rows = x.reshape(-1, x.shape[-1])
    out = torch.empty(rows.shape, dtype=dtype or self.dtype, device=self.device)
    if rows.numel():
        _rows[(rows.shape[0],)](rows, out, rows.shape[1], rows.stride(0), BLOCK=triton.next_power_of_2(rows.shape[1]))
    return out.reshape(x.shape).movedim(-1, dim % self.ndim)
