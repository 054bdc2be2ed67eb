import torch
import triton
import triton.language as tl

MAX_BLOCK = 16384  # longest row held in registers at once; longer rows take two passes


@triton.jit
def _rms_norm_kernel(
    x_ptr, w_ptr, out_ptr, n_rows, hidden, eps, size2, size3, stride2, stride3, stride4,
    stride_col, ROWS: tl.constexpr, BLOCK: tl.constexpr, SINGLE: tl.constexpr,
):
    # ROWS rows per program; row r of the flattened [rows, hidden] view sits at
    # (r // (size2 * size3)) * stride4 + (r // size2 % size3) * stride3 + (r % size2) * stride2.
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    row_ok = rows < n_rows
    i2 = rows % size2
    rest = rows // size2
    x_row = (rest // size3) * stride4 + (rest % size3) * stride3 + i2 * stride2
    out_row = rows * hidden
    cols = tl.arange(0, BLOCK)
    if SINGLE:
        mask = row_ok[:, None] & (cols < hidden)[None, :]
        x = tl.load(x_ptr + x_row[:, None] + cols[None, :] * stride_col, mask=mask, other=0.0).to(
            tl.float32
        )
        inv = tl.rsqrt(tl.sum(x * x, axis=1) / hidden + eps)
        w = tl.load(w_ptr + cols, mask=cols < hidden, other=0.0).to(tl.float32)
        # round the normalised value to the input dtype before the weight, as vLLM does
        y = (x * inv[:, None]).to(out_ptr.dtype.element_ty).to(tl.float32) * w[None, :]
        tl.store(
            out_ptr + out_row[:, None] + cols[None, :], y.to(out_ptr.dtype.element_ty), mask=mask
        )
    else:
        acc = tl.zeros([ROWS, BLOCK], tl.float32)
        for start in range(0, hidden, BLOCK):
            c = start + cols
            mask = row_ok[:, None] & (c < hidden)[None, :]
            x = tl.load(x_ptr + x_row[:, None] + c[None, :] * stride_col, mask=mask, other=0.0).to(
                tl.float32
            )
            acc += x * x
        inv = tl.rsqrt(tl.sum(acc, axis=1) / hidden + eps)
        for start in range(0, hidden, BLOCK):
            c = start + cols
            mask = row_ok[:, None] & (c < hidden)[None, :]
            x = tl.load(x_ptr + x_row[:, None] + c[None, :] * stride_col, mask=mask, other=0.0).to(
                tl.float32
            )
            w = tl.load(w_ptr + c, mask=c < hidden, other=0.0).to(tl.float32)
            y = (x * inv[:, None]).to(out_ptr.dtype.element_ty).to(tl.float32) * w[None, :]
            tl.store(
                out_ptr + out_row[:, None] + c[None, :], y.to(out_ptr.dtype.element_ty), mask=mask
            )


def rms_norm(out: torch.Tensor, input: torch.Tensor, weight: torch.Tensor, epsilon: float) -> None:
    hidden = input.shape[-1]
    n_rows = input.numel() // hidden if hidden else 0
    if n_rows == 0:
        return
    # pad the leading dims to three: [d4, d3, d2, hidden]
    lead = [1] * (4 - input.dim()) + list(input.shape[:-1])
    strides = [0] * (4 - input.dim()) + list(input.stride()[:-1])
    block = min(triton.next_power_of_2(hidden), MAX_BLOCK)
    rows_per_prog = max(1, min(4096 // block, triton.next_power_of_2(n_rows)))
    grid = (triton.cdiv(n_rows, rows_per_prog),)
    _rms_norm_kernel[grid](
        input, weight, out, n_rows, hidden, epsilon, lead[2], lead[1], strides[2], strides[1],
        strides[0], input.stride(-1), ROWS=rows_per_prog, BLOCK=block, SINGLE=hidden <= block,
        num_warps=min(16, max(4, rows_per_prog * block // 512)),
    )
