import torch
import triton
import triton.language as tl


@triton.jit
def _half_at(ptr, offs, mask):
    lo = tl.load(ptr + offs, mask=mask, other=0).to(tl.uint16)
    hi = tl.load(ptr + offs + 1, mask=mask, other=0).to(tl.uint16)
    return (lo | (hi << 8)).to(tl.float16, bitcast=True).to(tl.float32)


@triton.jit
def _mul_mat_a8_kernel(
    w_ptr, x_ptr, y_ptr, batch, rows, col, row_bytes,
    TYPE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    m_ok = rm < batch
    n_ok = rn < rows
    j = tl.arange(0, 32)
    w_row = rn.to(tl.int64) * row_bytes
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for b in range(0, col // 32):
        # Q8_1 of the activations' block b: codes from the exact float32 scale, d8 and s8 in half
        x = tl.load(x_ptr + rm.to(tl.int64)[:, None] * col + b * 32 + j[None, :], mask=m_ok[:, None], other=0.0).to(tl.float32)
        amax = tl.max(tl.abs(x), axis=1)
        d = tl.math.div_rn(amax, tl.full([BLOCK_M], 127.0, tl.float32))
        ratio = tl.math.div_rn(x, tl.where(amax == 0, 1.0, d)[:, None])
        q = tl.where(ratio >= 0, tl.floor(ratio + 0.5), -tl.floor(0.5 - ratio))
        q = tl.where(amax[:, None] == 0, 0.0, q)
        d8 = d.to(tl.float16).to(tl.float32)
        s8 = tl.sum(x, axis=1).to(tl.float16).to(tl.float32)
        if TYPE == 8:
            base = w_row + b * 34
            d4 = _half_at(w_ptr, base, n_ok)
            codes = tl.load(w_ptr + base[None, :] + 2 + j[:, None], mask=n_ok[None, :], other=0).to(tl.int8, bitcast=True)
        else:
            base = w_row + b * (18 if TYPE == 2 else 20)
            d4 = _half_at(w_ptr, base, n_ok)
            qs = base + (2 if TYPE == 2 else 4)
            byte = tl.load(w_ptr + qs[None, :] + (j % 16)[:, None], mask=n_ok[None, :], other=0).to(tl.int32)
            codes = tl.where(j[:, None] < 16, byte & 15, byte >> 4)
        # small integers are exact in float16, and their dot in float32
        sumi = tl.dot(q.to(tl.float16), codes.to(tl.float16))
        if TYPE == 2:
            acc += d4[None, :] * (sumi * d8[:, None] - 8.0 * s8[:, None])
        elif TYPE == 3:
            m4 = _half_at(w_ptr, base + 2, n_ok)
            dd = (d4[None, :] * d8[:, None]).to(tl.float16).to(tl.float32)
            ms = (m4[None, :] * s8[:, None]).to(tl.float16).to(tl.float32)
            acc += sumi * dd + ms
        else:
            acc += d4[None, :] * d8[:, None] * sumi
    y = y_ptr + rm.to(tl.int64)[:, None] * rows + rn[None, :]
    tl.store(y, acc.to(y_ptr.dtype.element_ty), mask=m_ok[:, None] & n_ok[None, :])


def ggml_mul_mat_a8(W: torch.Tensor, X: torch.Tensor, type: int, row: int) -> torch.Tensor:
    if type not in (2, 3, 8):
        raise NotImplementedError(f"GGML type {type}")
    batch, col = X.shape
    y = torch.empty((batch, row), dtype=X.dtype, device=X.device)
    if y.numel() == 0:
        return y
    row_bytes = col // 32 * {2: 18, 3: 20, 8: 34}[type]
    block_m = 16 if batch <= 16 else 64
    block_n = 64
    grid = (triton.cdiv(batch, block_m), triton.cdiv(row, block_n))
    _mul_mat_a8_kernel[grid](W, X, y, batch, row, col, row_bytes, TYPE=type, BLOCK_M=block_m, BLOCK_N=block_n)
    return y
