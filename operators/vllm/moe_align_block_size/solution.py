import torch
import triton
import triton.language as tl

CHUNK = 128  # slots per program in the counting and scattering passes


@triton.jit
def _slot_experts(ids_ptr, map_ptr, slots, numel, HAS_MAP: tl.constexpr):
    ok = slots < numel
    e = tl.load(ids_ptr + slots, mask=ok, other=0).to(tl.int32)
    if HAS_MAP:
        e = tl.load(map_ptr + e, mask=ok, other=-1)
    return tl.where(ok, e, -1)


@triton.jit
def _count_kernel(ids_ptr, map_ptr, chunk_counts_ptr, numel, n_experts, HAS_MAP: tl.constexpr,
                  CHUNK: tl.constexpr, BLOCK_E: tl.constexpr):
    # per-chunk histogram of experts, one row per program (no atomics: the order of the
    # slots inside a segment then follows the slot index)
    chunk = tl.program_id(0)
    slots = chunk * CHUNK + tl.arange(0, CHUNK)
    e = _slot_experts(ids_ptr, map_ptr, slots, numel, HAS_MAP)
    experts = tl.arange(0, BLOCK_E)
    hist = tl.sum((e[:, None] == experts[None, :]).to(tl.int32), axis=0)
    tl.store(chunk_counts_ptr + chunk.to(tl.int64) * n_experts + experts, hist, mask=experts < n_experts)


@triton.jit
def _scan_kernel(chunk_counts_ptr, starts_ptr, ends_ptr, total_ptr, n_chunks, n_experts, block_size,
                 BLOCK_E: tl.constexpr):
    # one program: turns the per-chunk counts into per-chunk offsets inside each segment,
    # and the totals into padded segment starts
    experts = tl.arange(0, BLOCK_E)
    e_ok = experts < n_experts
    running = tl.zeros([BLOCK_E], tl.int32)
    for c in range(n_chunks):
        row = chunk_counts_ptr + c * n_experts + experts
        counts = tl.load(row, mask=e_ok, other=0)
        tl.store(row, running, mask=e_ok)
        running += counts
    padded = (running + block_size - 1) // block_size * block_size
    ends = tl.cumsum(padded, axis=0)
    tl.store(starts_ptr + experts, ends - padded, mask=e_ok)
    tl.store(ends_ptr + experts, ends, mask=e_ok)
    tl.store(total_ptr, tl.sum(padded, axis=0))


@triton.jit
def _expert_ids_kernel(ends_ptr, total_ptr, expert_ids_ptr, n_blocks, n_experts, block_size,
                       BLOCK_B: tl.constexpr, BLOCK_E: tl.constexpr):
    blocks = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
    experts = tl.arange(0, BLOCK_E)
    ends = tl.load(ends_ptr + experts, mask=experts < n_experts, other=2147483647)
    total = tl.load(total_ptr)
    first = blocks * block_size
    owner = tl.sum((ends[None, :] <= first[:, None]).to(tl.int32), axis=1)
    tl.store(expert_ids_ptr + blocks, tl.where(first < total, owner, 0), mask=blocks < n_blocks)


@triton.jit
def _fill_kernel(sorted_ptr, n, value, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(sorted_ptr + offs, tl.full([BLOCK], 0, tl.int32) + value, mask=offs < n)


@triton.jit
def _scatter_kernel(ids_ptr, map_ptr, chunk_counts_ptr, starts_ptr, sorted_ptr, numel, n_experts,
                    HAS_MAP: tl.constexpr, CHUNK: tl.constexpr):
    chunk = tl.program_id(0)
    local = tl.arange(0, CHUNK)
    slots = chunk * CHUNK + local
    e = _slot_experts(ids_ptr, map_ptr, slots, numel, HAS_MAP)
    keep = e >= 0
    # rank among the earlier slots of this chunk with the same expert
    same = (e[:, None] == e[None, :]) & (local[None, :] < local[:, None])
    rank = tl.sum(same.to(tl.int32), axis=1)
    e_safe = tl.where(keep, e, 0)
    base = tl.load(starts_ptr + e_safe, mask=keep, other=0)
    before = tl.load(chunk_counts_ptr + chunk.to(tl.int64) * n_experts + e_safe, mask=keep, other=0)
    tl.store(sorted_ptr + base + before + rank, slots, mask=keep)


def moe_align_block_size(topk_ids, num_experts, block_size, sorted_token_ids, experts_ids, num_tokens_post_pad,
                         expert_map=None):
    numel = topk_ids.numel()
    dev = topk_ids.device
    n_chunks = max(1, triton.cdiv(numel, CHUNK))
    block_e = triton.next_power_of_2(num_experts)
    chunk_counts = torch.empty(n_chunks * num_experts, dtype=torch.int32, device=dev)
    starts = torch.empty(num_experts, dtype=torch.int32, device=dev)
    ends = torch.empty(num_experts, dtype=torch.int32, device=dev)
    has_map = expert_map is not None
    emap = expert_map if has_map else starts  # never read without a map
    _count_kernel[(n_chunks,)](topk_ids, emap, chunk_counts, numel, num_experts, HAS_MAP=has_map, CHUNK=CHUNK,
                               BLOCK_E=block_e)
    _scan_kernel[(1,)](chunk_counts, starts, ends, num_tokens_post_pad, n_chunks, num_experts, block_size,
                       BLOCK_E=block_e)
    n_blocks = triton.cdiv(sorted_token_ids.numel(), block_size)
    block_b = max(1, min(64, 8192 // block_e))
    _expert_ids_kernel[(triton.cdiv(n_blocks, block_b),)](ends, num_tokens_post_pad, experts_ids, n_blocks,
                                                          num_experts, block_size, BLOCK_B=block_b, BLOCK_E=block_e)
    n = sorted_token_ids.numel()
    _fill_kernel[(triton.cdiv(n, 1024),)](sorted_token_ids, n, numel, BLOCK=1024)
    _scatter_kernel[(n_chunks,)](topk_ids, emap, chunk_counts, starts, sorted_token_ids, numel, num_experts,
                                 HAS_MAP=has_map, CHUNK=CHUNK)
