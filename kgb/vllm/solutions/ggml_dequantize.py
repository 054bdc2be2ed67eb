"""The own part of vllm::ggml_dequantize's solution (see kgb/vllm/generate.py).
"""

import torch
import triton
import triton.language as tl

from kgb.vllm.kernels.ggml_half import _half_at


@triton.jit
def _dequantize_kernel(w_ptr, out_ptr, numel, TYPE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < numel
    j = offs % 32
    if TYPE == 2:  # Q4_0: d, 16 bytes of nibbles
        base = (offs // 32) * 18
        d = _half_at(w_ptr, base, ok)
        byte = tl.load(w_ptr + base + 2 + j % 16, mask=ok, other=0).to(tl.int32)
        nib = tl.where(j < 16, byte & 15, byte >> 4)
        v = ((nib - 8).to(tl.float32) * d).to(tl.float16)
    elif TYPE == 3:  # Q4_1: d, m, 16 bytes of nibbles
        base = (offs // 32) * 20
        d = _half_at(w_ptr, base, ok)
        mn = _half_at(w_ptr, base + 2, ok)
        byte = tl.load(w_ptr + base + 4 + j % 16, mask=ok, other=0).to(tl.int32)
        nib = tl.where(j < 16, byte & 15, byte >> 4)
        v = ((nib.to(tl.float32) * d).to(tl.float16).to(tl.float32) + mn).to(tl.float16)
    else:  # Q8_0: d, 32 int8
        base = (offs // 32) * 34
        d = _half_at(w_ptr, base, ok)
        q = tl.load(w_ptr + base + 2 + j, mask=ok, other=0).to(tl.int8, bitcast=True)
        v = (q.to(tl.float32) * d).to(tl.float16)
    tl.store(out_ptr + offs, v.to(tl.float32).to(out_ptr.dtype.element_ty), mask=ok)


def ggml_dequantize(W: torch.Tensor, type: int, m: int, n: int, dtype: torch.dtype | None = None) -> torch.Tensor:
    if type not in (2, 3, 8):
        raise NotImplementedError(f"GGML type {type}")
    out = torch.empty((m, n), dtype=dtype or torch.float16, device=W.device)
    numel = m * n
    if numel == 0:
        return out
    block = 1024
    _dequantize_kernel[(triton.cdiv(numel, block),)](W, out, numel, TYPE=type, BLOCK=block)
    return out
