import triton
import triton.language as tl


@triton.jit
def _merge_attn_states_kernel(
    out_ptr, out_lse_ptr, p_ptr, p_lse_ptr, s_ptr, s_lse_ptr, num_tokens, num_heads, head_size,
    HAS_LSE: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_D: tl.constexpr,
):
    # one program per (token, block of heads)
    token = tl.program_id(0).to(tl.int64)
    h = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    h_ok = h < num_heads
    lse_off = h.to(tl.int64) * num_tokens + token
    p = tl.load(p_lse_ptr + lse_off, mask=h_ok, other=float("-inf"))
    s = tl.load(s_lse_ptr + lse_off, mask=h_ok, other=float("-inf"))
    inf = float("inf")
    p = tl.where((p == inf) | (p == -inf), -inf, p)  # +inf means "no keys" too
    s = tl.where((s == inf) | (s == -inf), -inf, s)
    m = tl.maximum(p, s)
    empty = m == -inf
    m_safe = tl.where(empty, 0.0, m)
    a = tl.exp(p - m_safe)
    b = tl.exp(s - m_safe)
    total = a + b
    total_safe = tl.where(empty, 1.0, total)
    pa = a / total_safe
    sb = b / total_safe
    d = tl.arange(0, BLOCK_D)
    off = (token * num_heads + h.to(tl.int64))[:, None] * head_size + d[None, :]
    mask = h_ok[:, None] & (d < head_size)[None, :]
    po = tl.load(p_ptr + off, mask=mask, other=0.0)
    so = tl.load(s_ptr + off, mask=mask, other=0.0).to(tl.float32)
    merged = (po.to(tl.float32) * pa[:, None] + so * sb[:, None]).to(out_ptr.dtype.element_ty)
    tl.store(out_ptr + off, tl.where(empty[:, None], po, merged), mask=mask)
    if HAS_LSE:
        lse = tl.where(empty, m, tl.log(total_safe) + m_safe)
        tl.store(out_lse_ptr + lse_off, lse, mask=h_ok)


def merge_attn_states(output, output_lse, prefix_output, prefix_lse, suffix_output, suffix_lse) -> None:
    tokens, heads, head_size = output.shape
    if tokens == 0 or heads == 0:
        return
    block_d = triton.next_power_of_2(head_size)
    block_h = min(triton.next_power_of_2(heads), max(1, 2048 // block_d))
    _merge_attn_states_kernel[(tokens, triton.cdiv(heads, block_h))](
        output, output_lse if output_lse is not None else prefix_lse, prefix_output, prefix_lse,
        suffix_output, suffix_lse, tokens, heads, head_size, HAS_LSE=output_lse is not None,
        BLOCK_H=block_h, BLOCK_D=block_d,
    )
