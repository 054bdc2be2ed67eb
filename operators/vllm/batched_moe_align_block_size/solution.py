import triton
import triton.language as tl


@triton.jit
def _segment_kernel(counts_ptr, sorted_ptr, expert_ids_ptr, total_ptr, n_batches, max_tokens, block_size,
                    BLOCK_B: tl.constexpr, BLOCK: tl.constexpr):
    # program b writes batch b's padded segment and its blocks' expert ids
    b = tl.program_id(0)
    idx = tl.arange(0, BLOCK_B)
    counts = tl.load(counts_ptr + idx, mask=idx < n_batches, other=0)
    padded = (counts + block_size - 1) // block_size * block_size
    start = tl.sum(tl.where(idx < b, padded, 0), axis=0)
    n = tl.load(counts_ptr + b)
    seg = (n + block_size - 1) // block_size * block_size
    sentinel = n_batches * max_tokens
    for off in range(0, seg, BLOCK):
        i = off + tl.arange(0, BLOCK)
        vals = tl.where(i < n, b * max_tokens + i, sentinel)
        tl.store(sorted_ptr + start + i, vals, mask=i < seg)
    first_block = start // block_size
    for off in range(0, seg // block_size, BLOCK):
        j = off + tl.arange(0, BLOCK)
        tl.store(expert_ids_ptr + first_block + j, tl.full([BLOCK], 0, tl.int32) + b, mask=j < seg // block_size)
    if b == n_batches - 1:
        tl.store(total_ptr, tl.sum(padded, axis=0))


@triton.jit
def _tail_kernel(counts_ptr, sorted_ptr, expert_ids_ptr, n_batches, max_tokens, block_size, n_sorted,
                 BLOCK_B: tl.constexpr, BLOCK: tl.constexpr):
    # everything past the last segment: sentinel rows and -1 blocks
    idx = tl.arange(0, BLOCK_B)
    counts = tl.load(counts_ptr + idx, mask=idx < n_batches, other=0)
    total = tl.sum((counts + block_size - 1) // block_size * block_size, axis=0)
    pos = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tail = (pos >= total) & (pos < n_sorted)
    tl.store(sorted_ptr + pos, tl.full([BLOCK], 0, tl.int32) + n_batches * max_tokens, mask=tail)
    blk = pos
    tl.store(expert_ids_ptr + blk, tl.full([BLOCK], -1, tl.int32),
             mask=(blk * block_size >= total) & (blk < n_sorted // block_size))


def batched_moe_align_block_size(max_tokens_per_batch, block_size, expert_num_tokens, sorted_token_ids,
                                 experts_ids, num_tokens_post_pad):
    n_batches = expert_num_tokens.numel()
    n_sorted = sorted_token_ids.numel()
    block_b = triton.next_power_of_2(n_batches)
    _segment_kernel[(n_batches,)](expert_num_tokens, sorted_token_ids, experts_ids, num_tokens_post_pad, n_batches,
                                  max_tokens_per_batch, block_size, BLOCK_B=block_b, BLOCK=256)
    _tail_kernel[(triton.cdiv(n_sorted, 1024),)](expert_num_tokens, sorted_token_ids, experts_ids, n_batches,
                                                 max_tokens_per_batch, block_size, n_sorted, BLOCK_B=block_b,
                                                 BLOCK=1024)
