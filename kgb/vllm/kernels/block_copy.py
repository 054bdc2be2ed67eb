"""Copying whole cache blocks by a block mapping (rows of (source block, destination
block)): copy_blocks and copy_blocks_mla within a cache, swap_blocks from one to another."""

import triton
import triton.language as tl


@triton.jit
def _copy_blocks_kernel(src_ptr, dst_ptr, mapping_ptr, block_numel, BLOCK: tl.constexpr):
    # grid: (pairs, chunks of a block); each program copies BLOCK elements of one block
    pair = tl.program_id(0).to(tl.int64)
    s = tl.load(mapping_ptr + 2 * pair)
    d = tl.load(mapping_ptr + 2 * pair + 1)
    offs = tl.program_id(1).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < block_numel
    v = tl.load(src_ptr + s * block_numel + offs, mask=mask)
    tl.store(dst_ptr + d * block_numel + offs, v, mask=mask)


def _copy_mapped_blocks(src, dst, mapping, block_numel) -> None:
    """Block mapping[i, 0] of src to block mapping[i, 1] of dst, blocks block_numel apart."""
    pairs = mapping.shape[0]
    if pairs == 0:
        return
    block = min(triton.next_power_of_2(block_numel), 4096)
    _copy_blocks_kernel[(pairs, triton.cdiv(block_numel, block))](
        src, dst, mapping, block_numel, BLOCK=block,
    )
