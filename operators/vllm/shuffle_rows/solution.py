import torch
import triton
import triton.language as tl

# Rows are copied as raw bits, so every dtype of one width shares one kernel.
_BITS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


@triton.jit
def _shuffle_rows_kernel(src_ptr, map_ptr, dst_ptr, n_dst, n_cols, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    row_ok = rows < n_dst
    src_rows = tl.load(map_ptr + rows, mask=row_ok, other=0).to(tl.int64)
    mask = row_ok[:, None] & (cols < n_cols)[None, :]
    vals = tl.load(src_ptr + src_rows[:, None] * n_cols + cols[None, :], mask=mask)
    tl.store(dst_ptr + rows[:, None] * n_cols + cols[None, :], vals, mask=mask)


def shuffle_rows(input_tensor: torch.Tensor, dst2src_map: torch.Tensor, output_tensor: torch.Tensor) -> None:
    n_dst, n_cols = output_tensor.shape
    if n_dst == 0 or n_cols == 0:
        return
    bits = _BITS[input_tensor.element_size()]
    src, dst = input_tensor.view(bits), output_tensor.view(bits)
    block = min(triton.next_power_of_2(n_cols), 2048)
    rows = max(1, min(4096 // block, triton.next_power_of_2(n_dst)))
    grid = (triton.cdiv(n_dst, rows), triton.cdiv(n_cols, block))
    _shuffle_rows_kernel[grid](src, dst2src_map, dst, n_dst, n_cols, ROWS=rows, BLOCK=block)
