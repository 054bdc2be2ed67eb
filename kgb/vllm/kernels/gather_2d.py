"""Copying a 2-D tensor through an index over its rows (shuffle_rows) or its columns
(permute_cols), in tiles of ROWS rows by BLOCK columns."""

import triton
import triton.language as tl


@triton.jit
def _gather_kernel(src_ptr, idx_ptr, dst_ptr, n_rows, n_cols, BY_ROW: tl.constexpr, ROWS: tl.constexpr,
                   BLOCK: tl.constexpr):
    # dst[r, c] = src[idx[r], c] (BY_ROW) or src[r, idx[c]]; the tile's slice of the index is
    # read once and reused across the tile
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    row_ok = rows < n_rows
    col_ok = cols < n_cols
    if BY_ROW:
        src = tl.load(idx_ptr + rows, mask=row_ok, other=0).to(tl.int64)[:, None] * n_cols + cols[None, :]
    else:
        src = rows[:, None] * n_cols + tl.load(idx_ptr + cols, mask=col_ok, other=0).to(tl.int64)[None, :]
    mask = row_ok[:, None] & col_ok[None, :]
    vals = tl.load(src_ptr + src, mask=mask)
    tl.store(dst_ptr + rows[:, None] * n_cols + cols[None, :], vals, mask=mask)
