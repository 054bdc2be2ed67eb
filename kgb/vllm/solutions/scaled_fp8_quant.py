"""The own part of vllm::scaled_fp8_quant's solution (see kgb/vllm/generate.py).
"""

import torch
import triton
import triton.language as tl

from kgb.vllm.kernels.fp8 import _fp8_bits


@triton.jit
def _row_absmax_kernel(x_ptr, scale_ptr, hidden, row_stride, BLOCK: tl.constexpr):
    # every row's max |x| / 448 folded into one float32 by an atomic max (scale starts at 0;
    # non-negative floats order like their bit patterns)
    row = tl.program_id(0).to(tl.int64)
    m = tl.zeros([BLOCK], tl.float32)
    for start in range(0, hidden, BLOCK):
        c = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * row_stride + c, mask=c < hidden, other=0.0).to(tl.float32)
        m = tl.maximum(m, tl.abs(x))
    tl.atomic_max(scale_ptr, tl.math.div_rn(tl.max(m, axis=0), 448.0))


@triton.jit
def _quant_kernel(
    x_ptr, out_ptr, scale_ptr, ub_ptr, tokens, hidden, row_stride, out_stride,
    PER_TOKEN: tl.constexpr, HAS_UB: tl.constexpr, BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x_row = x_ptr + row * row_stride
    o_row = out_ptr + row * out_stride
    if row >= tokens:  # padding rows: zero codes (and a zero per-token scale)
        for start in range(0, hidden, BLOCK):
            c = start + cols
            tl.store(o_row + c, tl.zeros([BLOCK], tl.uint8), mask=c < hidden)
        if PER_TOKEN:
            tl.store(scale_ptr + row, 0.0)
    elif PER_TOKEN:
        m = tl.zeros([BLOCK], tl.float32)
        for start in range(0, hidden, BLOCK):
            c = start + cols
            m = tl.maximum(m, tl.abs(tl.load(x_row + c, mask=c < hidden, other=0.0).to(tl.float32)))
        absmax = tl.max(m, axis=0)
        if HAS_UB:
            absmax = tl.minimum(absmax, tl.load(ub_ptr))
        s = tl.maximum(tl.math.div_rn(absmax, 448.0), 4.359654017857143e-06)
        tl.store(scale_ptr + row, s)
        for start in range(0, hidden, BLOCK):
            c = start + cols
            x = tl.load(x_row + c, mask=c < hidden, other=0.0).to(tl.float32)
            tl.store(o_row + c, _fp8_bits(tl.math.div_rn(x, s)), mask=c < hidden)
    else:
        s = tl.load(scale_ptr)
        inv = tl.math.div_rn(1.0, s)
        for start in range(0, hidden, BLOCK):
            c = start + cols
            x = tl.load(x_row + c, mask=c < hidden, other=0.0).to(tl.float32)
            tl.store(o_row + c, _fp8_bits(x * inv), mask=c < hidden)


def scaled_fp8_quant(input, scale=None, num_token_padding=None, scale_ub=None,
                     use_per_token_if_dynamic=False, output=None):
    tokens, hidden = input.shape
    rows = max(num_token_padding, tokens) if num_token_padding else tokens
    if output is None:
        output = torch.empty(rows, hidden, dtype=torch.float8_e4m3fn, device=input.device)
    block = min(triton.next_power_of_2(hidden), 4096)
    per_token = scale is None and use_per_token_if_dynamic
    if per_token:
        scale = torch.empty(rows, 1, dtype=torch.float32, device=input.device)
    elif scale is None:
        scale = torch.zeros(1, dtype=torch.float32, device=input.device)
        _row_absmax_kernel[(tokens,)](input, scale, hidden, input.stride(0), BLOCK=block)
    _quant_kernel[(output.shape[0],)](
        input, output.view(torch.uint8), scale, scale_ub if scale_ub is not None else scale,
        tokens, hidden, input.stride(0), output.stride(0), PER_TOKEN=per_token,
        HAS_UB=scale_ub is not None, BLOCK=block, num_warps=4,
    )
    return output, scale
