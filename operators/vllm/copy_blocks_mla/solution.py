import triton
import triton.language as tl


@triton.jit
def _copy_blocks_mla_kernel(cache_ptr, mapping_ptr, block_numel, BLOCK: tl.constexpr):
    # grid: (pairs, chunks of a block); each program copies BLOCK elements of one block
    pair = tl.program_id(0).to(tl.int64)
    src = tl.load(mapping_ptr + 2 * pair)
    dst = tl.load(mapping_ptr + 2 * pair + 1)
    offs = tl.program_id(1).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < block_numel
    v = tl.load(cache_ptr + src * block_numel + offs, mask=mask)
    tl.store(cache_ptr + dst * block_numel + offs, v, mask=mask)


def copy_blocks_mla(kv_caches, block_mapping) -> None:
    pairs = block_mapping.shape[0]
    if pairs == 0:
        return
    for cache in kv_caches:
        block_numel = cache.stride(0)
        block = min(triton.next_power_of_2(block_numel), 4096)
        _copy_blocks_mla_kernel[(pairs, triton.cdiv(block_numel, block))](
            cache, block_mapping, block_numel, BLOCK=block,
        )
