"""The own part of vllm::awq_marlin_moe_repack's solution (see kgb/vllm/generate.py).
"""

import torch

from kgb.vllm.kernels.marlin_moe_repack import _repack


def awq_marlin_moe_repack(
    b_q_weight: torch.Tensor, perm: torch.Tensor, size_k: int, size_n: int, num_bits: int,
    is_a_8bit: bool = False,
) -> torch.Tensor:
    # AWQ has no act-order permutation: `perm` is unused
    return _repack(b_q_weight, None, size_k, size_n, num_bits, is_a_8bit, awq=True)
