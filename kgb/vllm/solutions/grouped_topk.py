"""The own part of vllm::grouped_topk's solution (see kgb/vllm/generate.py).
"""

import torch
import triton
import triton.language as tl

from kgb.vllm.kernels.row_argmax import _row_argmax


@triton.jit
def _grouped_topk_kernel(
    scores_ptr, bias_ptr, values_ptr, ids_ptr, n_tokens, n_experts, group_size, factor,
    N_GROUP: tl.constexpr, TOPK_GROUP: tl.constexpr, TOPK: tl.constexpr, RENORM: tl.constexpr,
    SIGMOID: tl.constexpr, ROWS: tl.constexpr, BLOCK_E: tl.constexpr, BLOCK_G: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    row_ok = rows < n_tokens
    cols = tl.arange(0, BLOCK_E)
    col_ok = cols < n_experts
    mask = row_ok[:, None] & col_ok[None, :]
    dtype = scores_ptr.dtype.element_ty
    x = tl.load(scores_ptr + rows.to(tl.int64)[:, None] * n_experts + cols[None, :], mask=mask, other=0.0)
    x = x.to(tl.float32)
    if SIGMOID:
        s = (1.0 / (1.0 + tl.exp(-x))).to(dtype).to(tl.float32)
    else:
        s = x
    bias = tl.load(bias_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
    b = (s + bias[None, :]).to(dtype).to(tl.float32)  # the selection score, rounded like vLLM
    b = tl.where(col_ok[None, :], b, -float("inf"))
    group_of = cols // group_size
    gg = tl.arange(0, BLOCK_G)

    # group score: the two largest selection scores of the group, summed in the dtype
    group_score = tl.full([ROWS, BLOCK_G], -float("inf"), tl.float32)
    for g in tl.static_range(N_GROUP):
        in_g = (group_of == g) & col_ok
        vals = tl.where(in_g[None, :], b, -float("inf"))
        top1, at1 = _row_argmax(vals, cols, BLOCK_E)
        top2 = tl.max(tl.where(cols[None, :] == at1[:, None], -float("inf"), vals), axis=1)
        pair = (top1 + top2).to(dtype).to(tl.float32)
        group_score = tl.where(gg[None, :] == g, pair[:, None], group_score)

    # keep the best topk_group groups (lower index on ties), marking their experts
    kept = tl.zeros([ROWS, BLOCK_E], tl.int1)
    for _ in tl.static_range(TOPK_GROUP):
        _, gidx = _row_argmax(group_score, gg, BLOCK_G)
        kept = kept | (group_of[None, :] == gidx[:, None])
        group_score = tl.where(gg[None, :] == gidx[:, None], -float("inf"), group_score)

    cand = tl.where(kept & col_ok[None, :], b, -float("inf"))
    kk = tl.arange(0, BLOCK_K)
    sel_s = tl.zeros([ROWS, BLOCK_K], tl.float32)
    sel_i = tl.zeros([ROWS, BLOCK_K], tl.int32)
    for j in tl.static_range(TOPK):
        _, idx = _row_argmax(cand, cols, BLOCK_E)
        s_at = tl.sum(tl.where(cols[None, :] == idx[:, None], s, 0.0), axis=1)
        sel_s = tl.where(kk[None, :] == j, s_at[:, None], sel_s)
        sel_i = tl.where(kk[None, :] == j, idx[:, None], sel_i)
        cand = tl.where(cols[None, :] == idx[:, None], -float("inf"), cand)
    if RENORM:
        total = tl.sum(tl.where(kk[None, :] < TOPK, sel_s, 0.0), axis=1) + 1e-20
        w = sel_s / total[:, None] * factor
    else:
        w = sel_s * factor
    out_mask = row_ok[:, None] & (kk < TOPK)[None, :]
    offs = rows.to(tl.int64)[:, None] * TOPK + kk[None, :]
    tl.store(values_ptr + offs, w, mask=out_mask)
    tl.store(ids_ptr + offs, sel_i, mask=out_mask)


def grouped_topk(scores, n_group, topk_group, topk, renormalize, routed_scaling_factor, bias, scoring_func=0):
    n_tokens, n_experts = scores.shape
    values = torch.empty(n_tokens, topk, dtype=torch.float32, device=scores.device)
    ids = torch.empty(n_tokens, topk, dtype=torch.int32, device=scores.device)
    if n_tokens == 0:
        return values, ids
    block_e = triton.next_power_of_2(n_experts)
    rows = max(1, min(16, 2048 // block_e, triton.next_power_of_2(n_tokens)))
    grid = (triton.cdiv(n_tokens, rows),)
    _grouped_topk_kernel[grid](
        scores, bias, values, ids, n_tokens, n_experts, n_experts // n_group, float(routed_scaling_factor),
        N_GROUP=n_group, TOPK_GROUP=topk_group, TOPK=topk, RENORM=bool(renormalize),
        SIGMOID=scoring_func == 1, ROWS=rows, BLOCK_E=block_e, BLOCK_G=triton.next_power_of_2(n_group),
        BLOCK_K=triton.next_power_of_2(topk),
    )
    return values, ids
