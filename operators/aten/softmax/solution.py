import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_rows(x_ptr, y_ptr, n_cols, x_row_stride, x_col_stride, BLOCK: tl.constexpr):
    # One program per row; rows longer than BLOCK take an online max/sum pass first.
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    y_row = y_ptr + row * n_cols
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols * x_col_stride, mask=cols < n_cols, other=float("-inf"))
        x = x.to(tl.float32)
        m_new = tl.maximum(m, x)
        # guard exp(-inf - -inf) = nan for lanes that have only seen -inf so far
        scale = tl.where(m_new == float("-inf"), 0.0, tl.exp(m - m_new))
        s = s * scale + tl.where(m_new == float("-inf"), 0.0, tl.exp(x - m_new))
        m = m_new
    row_max = tl.max(m, 0)
    lane_scale = tl.where(m == float("-inf"), 0.0, tl.exp(m - row_max))
    row_sum = tl.sum(s * lane_scale, 0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols * x_col_stride, mask=mask, other=float("-inf")).to(tl.float32)
        y = tl.exp(x - row_max) / row_sum
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax_int(self: torch.Tensor, dim: int, dtype: torch.dtype | None = None) -> torch.Tensor:
    out_dtype = self.dtype if dtype is None else dtype
    dim = dim % self.ndim
    # move the softmax dim last as a view; rows are then the flattened other dims
    xt = self.movedim(dim, -1)
    n_cols = xt.shape[-1]
    rows = xt.reshape(-1, n_cols)
    out = torch.empty(rows.shape, dtype=out_dtype, device=self.device)
    if rows.numel():
        block = min(triton.next_power_of_2(n_cols), 4096)
        _softmax_rows[(rows.shape[0],)](
            rows, out, n_cols, rows.stride(0), rows.stride(1), BLOCK=block
        )
    return out.reshape(xt.shape).movedim(-1, dim)
