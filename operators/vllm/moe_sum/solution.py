import torch
import triton
import triton.language as tl


@triton.jit
def _round(x, dtype: tl.constexpr, IS_BF16: tl.constexpr):
    """x (float32) rounded to dtype and back. bfloat16 rounds to nearest even by hand:
    Triton's CPU interpreter truncates float32 -> bfloat16 casts."""
    if IS_BF16:
        bits = x.to(tl.int32, bitcast=True)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & -65536
        return bits.to(tl.float32, bitcast=True)
    else:
        return x.to(dtype).to(tl.float32)


@triton.jit
def _moe_sum_kernel(
    in_ptr, out_ptr, n_tokens, topk, hidden, ROUND_EACH: tl.constexpr, IS_BF16: tl.constexpr, ROWS: tl.constexpr,
    BLOCK: tl.constexpr,
):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = (rows < n_tokens)[:, None] & (cols < hidden)[None, :]
    dtype = out_ptr.dtype.element_ty
    base = in_ptr + rows[:, None] * topk * hidden + cols[None, :]
    acc = tl.zeros([ROWS, BLOCK], tl.float32)
    for k in range(topk):
        x = tl.load(base + k * hidden, mask=mask, other=0.0).to(tl.float32)
        if ROUND_EACH:
            acc = _round(acc + x, dtype, IS_BF16)  # vLLM adds in the tensor's dtype for topk <= 4
        else:
            acc += x
    tl.store(out_ptr + rows[:, None] * hidden + cols[None, :], acc.to(dtype), mask=mask)


def moe_sum(input: torch.Tensor, output: torch.Tensor) -> None:
    n_tokens, topk, hidden = input.shape
    if n_tokens == 0 or hidden == 0:
        return
    block = min(triton.next_power_of_2(hidden), 1024)
    rows = max(1, min(4096 // block, triton.next_power_of_2(n_tokens)))
    grid = (triton.cdiv(n_tokens, rows), triton.cdiv(hidden, block))
    _moe_sum_kernel[grid](
        input, output, n_tokens, topk, hidden, ROUND_EACH=topk in (2, 3, 4), IS_BF16=input.dtype == torch.bfloat16,
        ROWS=rows, BLOCK=block,
    )
