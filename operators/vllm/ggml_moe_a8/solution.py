import torch
import triton
import triton.language as tl

BLOCK_SLOTS = 4  # moe_align_block_size's block for these GGML types


@triton.jit
def _half_at(ptr, offs, mask):
    lo = tl.load(ptr + offs, mask=mask, other=0).to(tl.uint16)
    hi = tl.load(ptr + offs + 1, mask=mask, other=0).to(tl.uint16)
    return (lo | (hi << 8)).to(tl.float16, bitcast=True).to(tl.float32)


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
    j = tl.arange(0, 32)
    w_row = tl.maximum(expert, 0).to(tl.int64) * rows * row_bytes + rn.to(tl.int64) * row_bytes
    acc = tl.zeros([SLOTS, BLOCK_N], tl.float32)
    for b in range(0, col // 32):
        # Q8_1 of each slot's activation block: codes from the exact float32 scale, d8 and s8 in half
        x = tl.load(x_ptr + token[:, None] * col + b * 32 + j[None, :], mask=live[:, None], other=0.0).to(tl.float32)
        amax = tl.max(tl.abs(x), axis=1)
        d = tl.math.div_rn(amax, tl.full([SLOTS], 127.0, tl.float32))
        ratio = tl.math.div_rn(x, tl.where(amax == 0, 1.0, d)[:, None])
        q = tl.where(ratio >= 0, tl.floor(ratio + 0.5), -tl.floor(0.5 - ratio))
        q = tl.where(amax[:, None] == 0, 0.0, q)
        d8 = d.to(tl.float16).to(tl.float32)[:, None]
        s8 = tl.sum(x, axis=1).to(tl.float16).to(tl.float32)[:, None]
        if TYPE == 8:
            base = w_row + b * 34
            d4 = _half_at(w_ptr, base, n_ok)
            codes = tl.load(w_ptr + base[None, :] + 2 + j[:, None], mask=n_ok[None, :], other=0).to(tl.int8, bitcast=True)
        else:
            base = w_row + b * (18 if TYPE == 2 else 20)
            d4 = _half_at(w_ptr, base, n_ok)
            qs = base + (2 if TYPE == 2 else 4)
            byte = tl.load(w_ptr + qs[None, :] + (j % 16)[:, None], mask=n_ok[None, :], other=0).to(tl.int32)
            codes = tl.where(j[:, None] < 16, byte & 15, byte >> 4)
        # [SLOTS, 32, 1] x [1, 32, BLOCK_N]: exact sums of small integers
        sumi = tl.sum(q[:, :, None] * codes.to(tl.float32)[None, :, :], axis=1)
        if TYPE == 2:
            acc += d4[None, :] * (sumi * d8 - 8.0 * s8)
        elif TYPE == 3:
            m4 = _half_at(w_ptr, base + 2, n_ok)
            acc += sumi * (d4[None, :] * d8).to(tl.float16).to(tl.float32) + (m4[None, :] * s8).to(tl.float16).to(tl.float32)
        else:
            acc += d4[None, :] * d8 * sumi
    y = y_ptr + tl.where(live, z, 0).to(tl.int64)[:, None] * rows + rn[None, :]
    tl.store(y, acc.to(y_ptr.dtype.element_ty), mask=live[:, None] & n_ok[None, :])


def ggml_moe_a8(
    X: torch.Tensor, W: torch.Tensor, sorted_token_ids: torch.Tensor, expert_ids: torch.Tensor,
    num_tokens_post_padded: torch.Tensor, type: int, row: int, top_k: int, tokens: int,
) -> torch.Tensor:
    if type not in (2, 3, 8):
        raise NotImplementedError(f"GGML type {type}")
    col = X.shape[1]
    y = torch.empty((tokens * top_k, row), dtype=X.dtype, device=X.device)
    if y.numel() == 0:
        return y
    row_bytes = col // 32 * {2: 18, 3: 20, 8: 34}[type]
    block_n = 64
    blocks = min(expert_ids.numel(), triton.cdiv(sorted_token_ids.numel(), BLOCK_SLOTS))
    grid = (blocks, triton.cdiv(row, block_n))
    _moe_kernel[grid](
        X, W, sorted_token_ids, expert_ids, num_tokens_post_padded, y, row, col, row_bytes, top_k,
        tokens * top_k, TYPE=type, SLOTS=BLOCK_SLOTS, BLOCK_N=block_n,
    )
    return y
