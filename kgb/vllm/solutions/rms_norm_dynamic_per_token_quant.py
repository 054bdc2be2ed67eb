"""The own part of vllm::rms_norm_dynamic_per_token_quant's solution (see kgb/vllm/generate.py).
"""

from kgb.vllm.kernels.rms_quant import _rms_quant


def rms_norm_dynamic_per_token_quant(result, input, weight, scale, epsilon, scale_ub, residual) -> None:
    # the whole row is one group: one scale per token
    _rms_quant(result, input, weight, scale, epsilon, scale_ub, residual, input.shape[-1], (1, 1))
