"""The own part of vllm::fused_qk_norm_rope's solution (see kgb/vllm/generate.py).
"""

import torch
import triton
import triton.language as tl

from kgb.vllm.kernels.round_to import _round_to


@triton.jit
def _qk_norm_rope_kernel(
    qkv_ptr, qw_ptr, kw_ptr, cache_ptr, pos_ptr, heads_q, heads_qk, heads_all, eps,
    HEAD_DIM: tl.constexpr, IS_NEOX: tl.constexpr, KIND: tl.constexpr, BLOCK_H: tl.constexpr,
):
    # one program per (token, block of query/key heads); element j of a head rotates with
    # its partner element, read a second time from memory
    token = tl.program_id(0).to(tl.int64)
    h = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    h_ok = h < heads_qk
    half: tl.constexpr = HEAD_DIM // 2
    j = tl.arange(0, HEAD_DIM)
    if IS_NEOX:
        partner = (j + half) % HEAD_DIM
        sign = tl.where(j < half, -1.0, 1.0)
        angle = j % half
    else:
        partner = j ^ 1
        sign = tl.where((j % 2) == 0, -1.0, 1.0)
        angle = j // 2
    row = qkv_ptr + token * heads_all * HEAD_DIM + h.to(tl.int64)[:, None] * HEAD_DIM
    mask = h_ok[:, None] & (j < HEAD_DIM)[None, :]
    x = tl.load(row + j[None, :], mask=mask, other=0.0).to(tl.float32)
    xp = tl.load(row + partner[None, :], mask=mask, other=0.0).to(tl.float32)
    inv = tl.rsqrt(tl.sum(x * x, axis=1) / HEAD_DIM + eps)
    is_q = (h < heads_q)[:, None]
    w = tl.where(is_q, tl.load(qw_ptr + j).to(tl.float32)[None, :], tl.load(kw_ptr + j).to(tl.float32)[None, :])
    wp = tl.where(is_q, tl.load(qw_ptr + partner).to(tl.float32)[None, :],
                  tl.load(kw_ptr + partner).to(tl.float32)[None, :])
    y = x * (inv[:, None] * w)
    yp = xp * (inv[:, None] * wp)
    pos = tl.load(pos_ptr + token)
    cos = tl.load(cache_ptr + pos * HEAD_DIM + angle).to(tl.float32)
    sin = tl.load(cache_ptr + pos * HEAD_DIM + half + angle).to(tl.float32)
    out = y * cos[None, :] + sign[None, :] * yp * sin[None, :]
    tl.store(row + j[None, :], _round_to(out, KIND).to(qkv_ptr.dtype.element_ty), mask=mask)


_KIND = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2}


def fused_qk_norm_rope(qkv, num_heads_q, num_heads_k, num_heads_v, head_dim, eps, q_weight, k_weight,
                       cos_sin_cache, is_neox, position_ids) -> None:
    tokens = qkv.shape[0]
    heads_qk = num_heads_q + num_heads_k
    if tokens == 0 or heads_qk == 0:
        return
    block_h = min(triton.next_power_of_2(heads_qk), max(1, 2048 // head_dim))
    _qk_norm_rope_kernel[(tokens, triton.cdiv(heads_qk, block_h))](
        qkv, q_weight, k_weight, cos_sin_cache, position_ids, num_heads_q, heads_qk,
        heads_qk + num_heads_v, eps, HEAD_DIM=head_dim, IS_NEOX=bool(is_neox), KIND=_KIND[qkv.dtype],
        BLOCK_H=block_h,
    )
