"""RMS norm, then dynamic int8 or fp8 quantisation per group of a row (a row is one group
for the per-token op): the kernel of rms_norm_dynamic_per_token_quant and
rms_norm_per_block_quant.
"""

import torch
import triton
import triton.language as tl

from kgb.vllm.kernels.fp8 import _fp8_bits
from kgb.vllm.kernels.round_to import _round_to


@triton.jit
def _rms_quant_kernel(
    x_ptr, r_ptr, w_ptr, out_ptr, scale_ptr, ub_ptr, hidden, group, n_groups, s_tok, s_grp, eps,
    KIND: tl.constexpr, HAS_RES: tl.constexpr, HAS_UB: tl.constexpr, IS_INT8: tl.constexpr,
    BLOCK_G: tl.constexpr, BLOCK_C: tl.constexpr,
):
    # One program per token; the row is held as [groups, columns of a group].
    row = tl.program_id(0).to(tl.int64)
    gi = tl.arange(0, BLOCK_G)
    g = gi[:, None]
    c = tl.arange(0, BLOCK_C)[None, :]
    col = g * group + c
    mask = (g < n_groups) & (c < group)
    off = row * hidden + col
    x = tl.load(x_ptr + off, mask=mask, other=0.0).to(tl.float32)
    if HAS_RES:
        x += tl.load(r_ptr + off, mask=mask, other=0.0).to(tl.float32)
        tl.store(r_ptr + off, _round_to(x, KIND).to(r_ptr.dtype.element_ty), mask=mask)
    ss = tl.sum(tl.sum(x * x, axis=1), axis=0)
    inv = tl.rsqrt(ss / hidden + eps)
    w = tl.load(w_ptr + col, mask=mask, other=0.0).to(tl.float32)
    y = _round_to(_round_to(x * inv, KIND) * w, KIND)
    absmax = tl.max(tl.abs(y), axis=1)
    if HAS_UB:
        absmax = tl.minimum(absmax, tl.load(ub_ptr))
    if IS_INT8:
        s = tl.maximum(tl.math.div_rn(absmax, 127.0), 1.1920928955078125e-07)
        v = y * tl.math.div_rn(tl.full(s.shape, 1.0, tl.float32), s)[:, None]
        v = tl.minimum(tl.maximum(v, -128.0), 127.0)
        v = (v + 12582912.0) - 12582912.0  # round half to even: 1.5 * 2**23 drops the fraction
        tl.store(out_ptr + off, v.to(tl.int8), mask=mask)
    else:
        s = tl.maximum(tl.math.div_rn(absmax, 448.0), 4.359654017857143e-06)
        tl.store(out_ptr + off, _fp8_bits(tl.math.div_rn(y, s[:, None])), mask=mask)
    tl.store(scale_ptr + row * s_tok + gi * s_grp, s, mask=gi < n_groups)


_KIND = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2}


def _rms_quant(result, input, weight, scale, epsilon, scale_ub, residual, group_size, scale_strides):
    """Launch over the tokens; `scale_strides`: the scale of (token, group) lies at
    token * scale_strides[0] + group * scale_strides[1]."""
    hidden = input.shape[-1]
    tokens = input.numel() // hidden
    if tokens == 0:
        return
    is_int8 = result.dtype == torch.int8
    out = result if is_int8 else result.view(torch.uint8)
    n_groups = hidden // group_size
    _rms_quant_kernel[(tokens,)](
        input, residual if residual is not None else input, weight, out, scale,
        scale_ub if scale_ub is not None else scale, hidden, group_size, n_groups, *scale_strides,
        epsilon, KIND=_KIND[input.dtype], HAS_RES=residual is not None,
        HAS_UB=scale_ub is not None, IS_INT8=is_int8, BLOCK_G=triton.next_power_of_2(n_groups),
        BLOCK_C=triton.next_power_of_2(group_size),
        num_warps=min(16, max(4, triton.next_power_of_2(hidden) // 512)),
    )
