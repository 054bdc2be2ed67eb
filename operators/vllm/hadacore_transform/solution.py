import math

import torch
import triton
import triton.language as tl


@triton.jit
def _sylvester(rows, cols):
    """H[i, j] = (-1) ** popcount(i & j) for index vectors rows, cols, as float32."""
    v = rows[:, None] & cols[None, :]
    v = v ^ (v >> 8)
    v = v ^ (v >> 4)
    v = v ^ (v >> 2)
    v = v ^ (v >> 1)
    return 1.0 - 2.0 * (v & 1).to(tl.float32)


@triton.jit
def _small_kernel(x_ptr, out_ptr, n_rows, scale, N: tl.constexpr, ROWS: tl.constexpr):
    # n < 16: too small for tl.dot; a broadcast product over [ROWS, N, N]
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    k = tl.arange(0, N)
    mask = (rows < n_rows)[:, None]
    x = tl.load(x_ptr + rows[:, None] * N + k[None, :], mask=mask, other=0.0).to(tl.float32)
    h = _sylvester(k, k)
    y = tl.sum(x[:, :, None] * h[None, :, :], axis=1) * scale
    tl.store(out_ptr + rows[:, None] * N + k[None, :], y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _mid_kernel(x_ptr, out_ptr, n_rows, scale, N: tl.constexpr, ROWS: tl.constexpr):
    # 16 <= n <= 256: [ROWS, N] @ H_N on the tensor cores; inputs and +-1 are exact in
    # the input dtype, the accumulation is float32
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    k = tl.arange(0, N)
    mask = (rows < n_rows)[:, None]
    x = tl.load(x_ptr + rows[:, None] * N + k[None, :], mask=mask, other=0.0)
    h = _sylvester(k, k).to(x.dtype)
    y = tl.dot(x, h) * scale
    tl.store(out_ptr + rows[:, None] * N + k[None, :], y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _cols_kernel(z_ptr, out_ptr, scale, A: tl.constexpr, B: tl.constexpr, TB: tl.constexpr, KA: tl.constexpr):
    # second factor of H_n = H_A (x) H_B: the row, seen as an [A, B] matrix Z = X @ H_B
    # (float32, from _mid_kernel), becomes H_A @ Z; one program per (row, TB columns)
    row = tl.program_id(0).to(tl.int64) * (A * B)
    cols = tl.program_id(1) * TB + tl.arange(0, TB)
    a = tl.arange(0, A)
    if A >= 16:
        acc = tl.zeros([A, TB], tl.float32)
        for k0 in tl.static_range(0, A, KA):
            k = k0 + tl.arange(0, KA)
            z = tl.load(z_ptr + row + k[:, None] * B + cols[None, :])
            acc += tl.dot(_sylvester(a, k), z, input_precision="ieee")
    else:
        z = tl.load(z_ptr + row + a[:, None] * B + cols[None, :])
        acc = tl.sum(_sylvester(a, a)[:, :, None] * z[None, :, :], axis=1)
    tl.store(out_ptr + row + a[:, None] * B + cols[None, :], (acc * scale).to(out_ptr.dtype.element_ty))


def hadacore_transform(x: torch.Tensor, inplace: bool) -> torch.Tensor:
    n = x.shape[-1]
    out = x if inplace else torch.empty_like(x)
    n_rows = x.numel() // n
    if n_rows == 0:
        return out
    scale = 1.0 / math.sqrt(n)
    if n < 16:
        rows = min(64, triton.next_power_of_2(n_rows))
        _small_kernel[(triton.cdiv(n_rows, rows),)](x, out, n_rows, scale, N=n, ROWS=rows)
    elif n <= 128:
        rows = 16 if n_rows <= 16 else 64
        _mid_kernel[(triton.cdiv(n_rows, rows),)](x, out, n_rows, scale, N=n, ROWS=rows)
    else:
        # n = A * 128: rows of 128 times H_128 into a float32 scratch, then H_A across them
        b = 128
        a = n // b
        z = torch.empty(x.shape, dtype=torch.float32, device=x.device)
        rows = 16 if n_rows * a <= 16 else 64
        _mid_kernel[(triton.cdiv(n_rows * a, rows),)](x, z, n_rows * a, 1.0, N=b, ROWS=rows)
        tb = 32
        _cols_kernel[(n_rows, b // tb)](z, out, scale, A=a, B=b, TB=tb, KA=min(a, 64))
    return out
