# Right answer, but computed in place in its input, which the op must leave untouched.
import triton
import triton.language as tl


@triton.jit
def _rows(x_ptr, n_cols, stride_r, stride_c, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    ptrs = x_ptr + row * stride_r + cols * stride_c
    x = tl.load(ptrs, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, 0))
    tl.store(ptrs, (e / tl.sum(e, 0)).to(x_ptr.dtype.element_ty), mask=mask)


def softmax_int(self, dim, dtype=None):
    rows = self.movedim(dim, -1)
    flat = rows.reshape(-1, rows.shape[-1])
    _rows[(flat.shape[0],)](flat, flat.shape[1], flat.stride(0), flat.stride(1), BLOCK=triton.next_power_of_2(flat.shape[1]))
    return self.clone()
