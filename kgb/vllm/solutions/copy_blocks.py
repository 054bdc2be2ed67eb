"""The own part of vllm::copy_blocks's solution (see kgb/vllm/generate.py).
"""

from kgb.vllm.kernels.block_copy import _copy_mapped_blocks


def copy_blocks(key_caches, value_caches, block_mapping) -> None:
    for cache in (*key_caches, *value_caches):
        _copy_mapped_blocks(cache, cache, block_mapping, cache[0].numel())
