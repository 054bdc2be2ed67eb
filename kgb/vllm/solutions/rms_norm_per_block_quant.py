"""The own part of vllm::rms_norm_per_block_quant's solution (see kgb/vllm/generate.py).
"""

from kgb.vllm.kernels.rms_quant import _rms_quant


def rms_norm_per_block_quant(
    result, input, weight, scale, epsilon, scale_ub, residual, group_size, is_scale_transposed
) -> None:
    _rms_quant(result, input, weight, scale, epsilon, scale_ub, residual, group_size,
               (scale.stride(0), scale.stride(1)))
