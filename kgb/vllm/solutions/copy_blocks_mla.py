"""The own part of vllm::copy_blocks_mla's solution (see kgb/vllm/generate.py).
"""

from kgb.vllm.kernels.block_copy import _copy_mapped_blocks


def copy_blocks_mla(kv_caches, block_mapping) -> None:
    for cache in kv_caches:
        _copy_mapped_blocks(cache, cache, block_mapping, cache.stride(0))
