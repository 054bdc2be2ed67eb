import torch
import triton
import triton.language as tl

CHUNK = 128  # slots per program in the counting and scattering passes


@triton.jit
def _adapter(lora_ids_ptr, enabled_ptr):
    """(adapter id, processed?) of this program's lora slot (axis 1 of the grid)."""
    lora = tl.load(lora_ids_ptr + tl.program_id(1))
    on = lora >= 0
    on = on & (tl.load(enabled_ptr + tl.where(on, lora, 0)) != 0)
    return lora, on


@triton.jit
def _slot_experts(ids_ptr, map_ptr, mapping_ptr, slots, numel, topk, lora, HAS_MAP: tl.constexpr):
    ok = slots < numel
    e = tl.load(ids_ptr + slots, mask=ok, other=0).to(tl.int32)
    if HAS_MAP:
        e = tl.load(map_ptr + e, mask=ok, other=-1)
    mine = tl.load(mapping_ptr + slots // topk, mask=ok, other=-1) == lora
    return tl.where(ok & mine, e, -1)


@triton.jit
def _count_kernel(ids_ptr, map_ptr, mapping_ptr, lora_ids_ptr, enabled_ptr, counts_ptr, numel, topk, n_experts,
                  n_chunks, HAS_MAP: tl.constexpr, CHUNK: tl.constexpr, BLOCK_E: tl.constexpr):
    lora, on = _adapter(lora_ids_ptr, enabled_ptr)
    if on:
        chunk = tl.program_id(0)
        slots = chunk * CHUNK + tl.arange(0, CHUNK)
        e = _slot_experts(ids_ptr, map_ptr, mapping_ptr, slots, numel, topk, lora, HAS_MAP)
        experts = tl.arange(0, BLOCK_E)
        hist = tl.sum((e[:, None] == experts[None, :]).to(tl.int32), axis=0)
        row = (tl.program_id(1) * n_chunks + chunk).to(tl.int64) * n_experts
        tl.store(counts_ptr + row + experts, hist, mask=experts < n_experts)


@triton.jit
def _scan_kernel(lora_ids_ptr, enabled_ptr, counts_ptr, starts_ptr, ends_ptr, total_ptr, n_chunks, n_experts,
                 block_size, BLOCK_E: tl.constexpr):
    lora, on = _adapter(lora_ids_ptr, enabled_ptr)
    if on:
        slot = tl.program_id(1)
        experts = tl.arange(0, BLOCK_E)
        e_ok = experts < n_experts
        running = tl.zeros([BLOCK_E], tl.int32)
        for c in range(n_chunks):
            row = counts_ptr + (slot * n_chunks + c).to(tl.int64) * n_experts + experts
            counts = tl.load(row, mask=e_ok, other=0)
            tl.store(row, running, mask=e_ok)
            running += counts
        padded = (running + block_size - 1) // block_size * block_size
        ends = tl.cumsum(padded, axis=0)
        tl.store(starts_ptr + slot * n_experts + experts, ends - padded, mask=e_ok)
        tl.store(ends_ptr + slot * n_experts + experts, ends, mask=e_ok)
        tl.store(total_ptr + lora, tl.sum(padded, axis=0))


@triton.jit
def _expert_ids_kernel(lora_ids_ptr, enabled_ptr, ends_ptr, total_ptr, expert_ids_ptr, n_blocks, n_experts,
                       block_size, BLOCK_B: tl.constexpr, BLOCK_E: tl.constexpr):
    lora, on = _adapter(lora_ids_ptr, enabled_ptr)
    if on:
        blocks = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
        experts = tl.arange(0, BLOCK_E)
        ends = tl.load(ends_ptr + tl.program_id(1) * n_experts + experts, mask=experts < n_experts,
                       other=2147483647)
        total = tl.load(total_ptr + lora)
        first = blocks * block_size
        owner = tl.sum((ends[None, :] <= first[:, None]).to(tl.int32), axis=1)
        tl.store(expert_ids_ptr + lora.to(tl.int64) * n_blocks + blocks, tl.where(first < total, owner, -1),
                 mask=blocks < n_blocks)


@triton.jit
def _fill_kernel(lora_ids_ptr, enabled_ptr, sorted_ptr, width, value, BLOCK: tl.constexpr):
    lora, on = _adapter(lora_ids_ptr, enabled_ptr)
    if on:
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(sorted_ptr + lora.to(tl.int64) * width + offs, tl.full([BLOCK], 0, tl.int32) + value,
                 mask=offs < width)


@triton.jit
def _scatter_kernel(ids_ptr, map_ptr, mapping_ptr, lora_ids_ptr, enabled_ptr, counts_ptr, starts_ptr, sorted_ptr,
                    numel, topk, n_experts, n_chunks, width, HAS_MAP: tl.constexpr, CHUNK: tl.constexpr):
    lora, on = _adapter(lora_ids_ptr, enabled_ptr)
    if on:
        slot = tl.program_id(1)
        chunk = tl.program_id(0)
        local = tl.arange(0, CHUNK)
        slots = chunk * CHUNK + local
        e = _slot_experts(ids_ptr, map_ptr, mapping_ptr, slots, numel, topk, lora, HAS_MAP)
        keep = e >= 0
        same = (e[:, None] == e[None, :]) & (local[None, :] < local[:, None])
        rank = tl.sum(same.to(tl.int32), axis=1)
        e_safe = tl.where(keep, e, 0)
        base = tl.load(starts_ptr + slot * n_experts + e_safe, mask=keep, other=0)
        before = tl.load(counts_ptr + (slot * n_chunks + chunk).to(tl.int64) * n_experts + e_safe, mask=keep,
                         other=0)
        tl.store(sorted_ptr + lora.to(tl.int64) * width + base + before + rank, slots, mask=keep)


def moe_lora_align_block_size(topk_ids, token_lora_mapping, num_experts, block_size, max_loras,
                              max_num_tokens_padded, max_num_m_blocks, sorted_token_ids, experts_ids,
                              num_tokens_post_pad, adapter_enabled, lora_ids, expert_map=None):
    numel, topk = topk_ids.numel(), topk_ids.shape[-1]
    dev = topk_ids.device
    n_chunks = max(1, triton.cdiv(numel, CHUNK))
    block_e = triton.next_power_of_2(num_experts)
    counts = torch.empty(max_loras * n_chunks * num_experts, dtype=torch.int32, device=dev)
    starts = torch.empty(max_loras * num_experts, dtype=torch.int32, device=dev)
    ends = torch.empty(max_loras * num_experts, dtype=torch.int32, device=dev)
    has_map = expert_map is not None
    emap = expert_map if has_map else starts  # never read without a map
    common = (lora_ids, adapter_enabled)
    _count_kernel[(n_chunks, max_loras)](topk_ids, emap, token_lora_mapping, *common, counts, numel, topk,
                                         num_experts, n_chunks, HAS_MAP=has_map, CHUNK=CHUNK, BLOCK_E=block_e)
    _scan_kernel[(1, max_loras)](*common, counts, starts, ends, num_tokens_post_pad, n_chunks, num_experts,
                                 block_size, BLOCK_E=block_e)
    block_b = max(1, min(64, 8192 // block_e))
    _expert_ids_kernel[(triton.cdiv(max_num_m_blocks, block_b), max_loras)](
        *common, ends, num_tokens_post_pad, experts_ids, max_num_m_blocks, num_experts, block_size,
        BLOCK_B=block_b, BLOCK_E=block_e)
    _fill_kernel[(triton.cdiv(max_num_tokens_padded, 1024), max_loras)](
        *common, sorted_token_ids, max_num_tokens_padded, numel, BLOCK=1024)
    _scatter_kernel[(n_chunks, max_loras)](topk_ids, emap, token_lora_mapping, *common, counts, starts,
                                           sorted_token_ids, numel, topk, num_experts, n_chunks,
                                           max_num_tokens_padded, HAS_MAP=has_map, CHUNK=CHUNK)
