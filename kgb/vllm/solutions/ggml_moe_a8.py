"""The own part of vllm::ggml_moe_a8's solution (see kgb/vllm/generate.py).
"""

import torch
import triton
import triton.language as tl

from kgb.vllm.kernels.ggml_q8_1 import _dot_rows, _ggml_output

BLOCK_SLOTS = 4  # moe_align_block_size's block for these GGML types


@triton.jit
def _moe_kernel(
    x_ptr, w_ptr, sorted_ptr, expert_ptr, post_pad_ptr, y_ptr, rows, col, row_bytes, top_k, pairs,
    TYPE: tl.constexpr, SLOTS: tl.constexpr, BLOCK_N: tl.constexpr,
):
    # program (b, n-block): the SLOTS sorted pairs of block b, all for expert expert_ids[b]
    blk = tl.program_id(0)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    n_ok = rn < rows
    slots = blk * SLOTS + tl.arange(0, SLOTS)
    used = tl.load(post_pad_ptr)
    z = tl.load(sorted_ptr + slots, mask=slots < used, other=pairs)
    expert = tl.load(expert_ptr + blk)
    z = tl.where(expert >= 0, z, pairs)  # blocks past the end may carry expert -1
    live = z < pairs
    token = tl.where(live, z // top_k, 0).to(tl.int64)
    w_row = tl.maximum(expert, 0).to(tl.int64) * rows * row_bytes + rn.to(tl.int64) * row_bytes
    acc = _dot_rows(x_ptr, w_ptr, token, live, w_row, col, n_ok, TYPE, False, SLOTS, BLOCK_N)
    y = y_ptr + tl.where(live, z, 0).to(tl.int64)[:, None] * rows + rn[None, :]
    tl.store(y, acc.to(y_ptr.dtype.element_ty), mask=live[:, None] & n_ok[None, :])


def ggml_moe_a8(
    X: torch.Tensor, W: torch.Tensor, sorted_token_ids: torch.Tensor, expert_ids: torch.Tensor,
    num_tokens_post_padded: torch.Tensor, type: int, row: int, top_k: int, tokens: int,
) -> torch.Tensor:
    y, row_bytes = _ggml_output(X, type, tokens * top_k, row)
    if y.numel() == 0:
        return y
    col = X.shape[1]
    block_n = 64
    blocks = min(expert_ids.numel(), triton.cdiv(sorted_token_ids.numel(), BLOCK_SLOTS))
    grid = (blocks, triton.cdiv(row, block_n))
    _moe_kernel[grid](
        X, W, sorted_token_ids, expert_ids, num_tokens_post_padded, y, row, col, row_bytes, top_k,
        tokens * top_k, TYPE=type, SLOTS=BLOCK_SLOTS, BLOCK_N=block_n,
    )
    return y
