import torch
import triton
import triton.language as tl


@triton.jit
def _half_at(ptr, offs, mask):
    lo = tl.load(ptr + offs, mask=mask, other=0).to(tl.uint16)
    hi = tl.load(ptr + offs + 1, mask=mask, other=0).to(tl.uint16)
    return (lo | (hi << 8)).to(tl.float16, bitcast=True).to(tl.float32)


@triton.jit
def _mul_mat_vec_kernel(
    x_ptr, w_ptr, y_ptr, rows, col, row_bytes, TYPE: tl.constexpr, BLOCK_N: tl.constexpr,
):
    # program (z, n-block): activation row z against BLOCK_N weight rows
    z = tl.program_id(0)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    n_ok = rn < rows
    token = z
    j = tl.arange(0, 32)
    w_row = rn.to(tl.int64) * row_bytes
    acc = tl.zeros([BLOCK_N], tl.float32)
    for b in range(0, col // 32):
        # Q8_1 of the activation block: codes from the exact float32 scale, d8 and s8 in half
        x = tl.load(x_ptr + token.to(tl.int64) * col + b * 32 + j).to(tl.float32)
        amax = tl.max(tl.abs(x), axis=0)
        d = tl.math.div_rn(amax, 127.0)
        ratio = tl.math.div_rn(x, tl.where(amax == 0, 1.0, d))
        q = tl.where(ratio >= 0, tl.floor(ratio + 0.5), -tl.floor(0.5 - ratio))
        q = tl.where(amax == 0, 0.0, q)
        d8 = d.to(tl.float16).to(tl.float32)
        s8 = tl.sum(x, axis=0).to(tl.float16).to(tl.float32)
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
        sumi = tl.sum(q[:, None] * codes.to(tl.float32), axis=0)  # exact: small integers
        if TYPE == 2:
            acc += d4 * (sumi * d8 - 8.0 * s8)
        elif TYPE == 3:
            m4 = _half_at(w_ptr, base + 2, n_ok)
            acc += sumi * (d4 * d8).to(tl.float16).to(tl.float32) + (m4 * s8).to(tl.float16).to(tl.float32)
        else:
            acc += d4 * d8 * sumi
    tl.store(y_ptr + z.to(tl.int64) * rows + rn, acc.to(y_ptr.dtype.element_ty), mask=n_ok)


def ggml_mul_mat_vec_a8(W: torch.Tensor, X: torch.Tensor, type: int, row: int) -> torch.Tensor:
    if type not in (2, 3, 8):
        raise NotImplementedError(f"GGML type {type}")
    vecs, col = X.shape
    y = torch.empty((vecs, row), dtype=X.dtype, device=X.device)
    if y.numel() == 0:
        return y
    row_bytes = col // 32 * {2: 18, 3: 20, 8: 34}[type]
    block_n = 64
    grid = (vecs, triton.cdiv(row, block_n))
    _mul_mat_vec_kernel[grid](X, W, y, row, col, row_bytes, TYPE=type, BLOCK_N=block_n)
    return y
