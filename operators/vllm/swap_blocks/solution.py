import triton
import triton.language as tl


@triton.jit
def _swap_blocks_kernel(src_ptr, dst_ptr, mapping_ptr, block_numel, BLOCK: tl.constexpr):
    # grid: (pairs, chunks of a block); each program copies BLOCK elements of one block
    pair = tl.program_id(0).to(tl.int64)
    s = tl.load(mapping_ptr + 2 * pair)
    d = tl.load(mapping_ptr + 2 * pair + 1)
    offs = tl.program_id(1).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < block_numel
    v = tl.load(src_ptr + s * block_numel + offs, mask=mask)
    tl.store(dst_ptr + d * block_numel + offs, v, mask=mask)


def swap_blocks(src, dst, block_mapping) -> None:
    pairs = block_mapping.shape[0]
    if pairs == 0:
        return
    mapping = block_mapping.to(src.device)  # vLLM keeps the mapping in host memory
    block_numel = src.stride(0)
    block = min(triton.next_power_of_2(block_numel), 4096)
    _swap_blocks_kernel[(pairs, triton.cdiv(block_numel, block))](
        src, dst, mapping, block_numel, BLOCK=block,
    )
