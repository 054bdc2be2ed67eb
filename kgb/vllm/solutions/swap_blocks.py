"""The own part of vllm::swap_blocks's solution (see kgb/vllm/generate.py).
"""

from kgb.vllm.kernels.block_copy import _copy_mapped_blocks


def swap_blocks(src, dst, block_mapping) -> None:
    # vLLM keeps the mapping in host memory
    _copy_mapped_blocks(src, dst, block_mapping.to(src.device), src.stride(0))
