"""The own part of vllm::topk_softmax's solution (see kgb/vllm/generate.py).
"""

import triton
import triton.language as tl

from kgb.vllm.kernels.row_argmax import _row_argmax


@triton.jit
def _topk_softmax_kernel(
    logits_ptr, w_ptr, ids_ptr, slot_ptr, n_tokens, n_experts, K: tl.constexpr, RENORM: tl.constexpr,
    ROWS: tl.constexpr, BLOCK_E: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # ROWS tokens per program, a whole row of experts in registers; the top-k is taken by
    # k rounds of (max, lowest index at the max, mask it out).
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    row_ok = rows < n_tokens
    cols = tl.arange(0, BLOCK_E)
    col_ok = cols < n_experts
    mask = row_ok[:, None] & col_ok[None, :]
    x = tl.load(logits_ptr + rows.to(tl.int64)[:, None] * n_experts + cols[None, :], mask=mask, other=-float("inf"))
    x = x.to(tl.float32)
    x = tl.where(col_ok[None, :], x, -float("inf"))
    m = tl.max(x, axis=1)
    e = tl.exp(x - m[:, None])
    e = tl.where(col_ok[None, :], e, 0.0)
    probs = e / tl.sum(e, axis=1)[:, None]
    work = tl.where(col_ok[None, :], probs, -1.0)  # padding never wins
    kk = tl.arange(0, BLOCK_K)
    sel_w = tl.zeros([ROWS, BLOCK_K], tl.float32)
    sel_i = tl.zeros([ROWS, BLOCK_K], tl.int32)
    for j in tl.static_range(K):
        best, idx = _row_argmax(work, cols, BLOCK_E)
        sel_w = tl.where(kk[None, :] == j, best[:, None], sel_w)
        sel_i = tl.where(kk[None, :] == j, idx[:, None], sel_i)
        work = tl.where(cols[None, :] == idx[:, None], -2.0, work)
    if RENORM:
        total = tl.sum(tl.where(kk[None, :] < K, sel_w, 0.0), axis=1)
        total = tl.where(total > 0, total, 1.0)
        sel_w = sel_w / total[:, None]
    out_mask = row_ok[:, None] & (kk < K)[None, :]
    offs = rows.to(tl.int64)[:, None] * K + kk[None, :]
    tl.store(w_ptr + offs, sel_w, mask=out_mask)
    tl.store(ids_ptr + offs, sel_i.to(ids_ptr.dtype.element_ty), mask=out_mask)
    tl.store(slot_ptr + offs, kk[None, :] * n_tokens + rows[:, None], mask=out_mask)


def topk_softmax(topk_weights, topk_indices, token_expert_indices, gating_output, renormalize) -> None:
    n_experts = gating_output.shape[-1]
    n_tokens = gating_output.numel() // n_experts
    k = topk_weights.shape[-1]
    if n_tokens == 0:
        return
    block_e = triton.next_power_of_2(n_experts)
    rows = max(1, min(64, 2048 // block_e, triton.next_power_of_2(n_tokens)))
    grid = (triton.cdiv(n_tokens, rows),)
    _topk_softmax_kernel[grid](
        gating_output, topk_weights, topk_indices, token_expert_indices, n_tokens, n_experts,
        K=k, RENORM=bool(renormalize), ROWS=rows, BLOCK_E=block_e, BLOCK_K=triton.next_power_of_2(k),
    )
