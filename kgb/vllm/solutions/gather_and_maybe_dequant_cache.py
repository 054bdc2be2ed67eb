"""The own part of vllm::gather_and_maybe_dequant_cache's solution (see kgb/vllm/generate.py).
"""

import torch
import triton
import triton.language as tl

from kgb.vllm.kernels.round_to import _round_to


@triton.jit
def _gather_dequant_kernel(
    src_ptr, dst_ptr, table_ptr, cu_ptr, seq_ptr, starts_ptr, scale_ptr, num_tokens, entry,
    block_size, table_stride, block_stride, slot_stride, dst_stride,
    FP8: tl.constexpr, KIND: tl.constexpr, HAS_STARTS: tl.constexpr, TOK: tl.constexpr,
    BLOCK_E: tl.constexpr,
):
    # TOK output tokens per program, each a whole entry
    tok = tl.program_id(0).to(tl.int64) * TOK + tl.arange(0, TOK)
    ok = tok < num_tokens
    seq = tl.load(seq_ptr + tok, mask=ok, other=0).to(tl.int64)
    pos = tok - tl.load(cu_ptr + seq, mask=ok, other=0).to(tl.int64)
    if HAS_STARTS:
        pos += tl.load(starts_ptr + seq, mask=ok, other=0).to(tl.int64)
    block = tl.load(table_ptr + seq * table_stride + pos // block_size, mask=ok, other=0).to(tl.int64)
    src_row = block * block_stride + (pos % block_size) * slot_stride
    if FP8:
        scale = tl.load(scale_ptr)
    for start in range(0, entry, BLOCK_E):
        e = start + tl.arange(0, BLOCK_E)
        mask = ok[:, None] & (e < entry)[None, :]
        v = tl.load(src_ptr + src_row[:, None] + e[None, :], mask=mask)
        if FP8:
            x = v.to(tl.float8e4nv, bitcast=True).to(tl.float32) * scale
            v = _round_to(x, KIND).to(dst_ptr.dtype.element_ty)
        tl.store(dst_ptr + tok[:, None] * dst_stride + e[None, :], v, mask=mask)


_KIND = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2}


def gather_and_maybe_dequant_cache(src_cache, dst, block_table, cu_seq_lens, token_to_seq, num_tokens,
                                   kv_cache_dtype, scale, seq_starts=None) -> None:
    if num_tokens == 0:
        return
    entry = dst.shape[-1]
    tok = 4
    _gather_dequant_kernel[(triton.cdiv(num_tokens, tok),)](
        src_cache, dst, block_table, cu_seq_lens, token_to_seq,
        seq_starts if seq_starts is not None else cu_seq_lens, scale, num_tokens, entry,
        src_cache.shape[1], block_table.stride(0), src_cache.stride(0), src_cache.stride(1),
        dst.stride(0), FP8=kv_cache_dtype != "auto", KIND=_KIND[dst.dtype],
        HAS_STARTS=seq_starts is not None, TOK=tok, BLOCK_E=triton.next_power_of_2(entry),
    )
