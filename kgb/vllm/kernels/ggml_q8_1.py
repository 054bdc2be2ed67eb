"""The quantised dot products of the GGML mul_mat and MoE solutions, block by block of 32
columns: the activations quantised to Q8_1 (int8 codes, scale d8 and sum s8 in float16),
a Q4_0/Q4_1/Q8_0 weight block's codes and scales, and the block's contribution to the
sums, rounded where ggml's CUDA kernels round."""

import torch
import triton
import triton.language as tl

from kgb.vllm.kernels.ggml_half import _half_at


@triton.jit
def _q8_1_codes(x, amax, d):
    # round half away from zero from the exact float32 scale; an all-zero block codes as 0
    ratio = tl.math.div_rn(x, tl.where(amax == 0, 1.0, d))
    q = tl.where(ratio >= 0, tl.floor(ratio + 0.5), -tl.floor(0.5 - ratio))
    return tl.where(amax == 0, 0.0, q)


@triton.jit
def _q8_1_vec(x):
    """One activation block x [32]: codes, d8 and s8 (scalars)."""
    amax = tl.max(tl.abs(x), axis=0)
    d = tl.math.div_rn(amax, 127.0)
    q = _q8_1_codes(x, amax, d)
    return q, d.to(tl.float16).to(tl.float32), tl.sum(x, axis=0).to(tl.float16).to(tl.float32)


@triton.jit
def _q8_1_rows(x):
    """A block of each activation row, x [rows, 32]: codes, d8 and s8 ([rows])."""
    amax = tl.max(tl.abs(x), axis=1)
    d = tl.math.div_rn(amax, tl.full(amax.shape, 127.0, tl.float32))
    q = _q8_1_codes(x, amax[:, None], d[:, None])
    return q, d.to(tl.float16).to(tl.float32), tl.sum(x, axis=1).to(tl.float16).to(tl.float32)


@triton.jit
def _weight_block(w_ptr, w_row, b, j, n_ok, TYPE: tl.constexpr):
    """Block b of the weight rows starting at byte w_row [BLOCK_N]: scale d4 and min m4
    ([BLOCK_N]; m4 only for Q4_1) and codes [32, BLOCK_N]."""
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
    if TYPE == 3:
        m4 = _half_at(w_ptr, base + 2, n_ok)
    else:
        m4 = d4
    return d4, m4, codes


@triton.jit
def _block_dot(sumi, d4, m4, d8, s8, TYPE: tl.constexpr):
    """A block's share of the dot products from the code sums `sumi` (the scales broadcast
    to its shape)."""
    if TYPE == 2:
        return d4 * (sumi * d8 - 8.0 * s8)
    elif TYPE == 3:
        return sumi * (d4 * d8).to(tl.float16).to(tl.float32) + (m4 * s8).to(tl.float16).to(tl.float32)
    else:
        return d4 * d8 * sumi


@triton.jit
def _dot_vec(x_ptr, w_ptr, token, w_row, col, n_ok, TYPE: tl.constexpr, BLOCK_N: tl.constexpr):
    """Activation row `token` (float, col wide) against BLOCK_N weight rows: [BLOCK_N]."""
    j = tl.arange(0, 32)
    acc = tl.zeros([BLOCK_N], tl.float32)
    for b in range(0, col // 32):
        x = tl.load(x_ptr + token.to(tl.int64) * col + b * 32 + j).to(tl.float32)
        q, d8, s8 = _q8_1_vec(x)
        d4, m4, codes = _weight_block(w_ptr, w_row, b, j, n_ok, TYPE)
        sumi = tl.sum(q[:, None] * codes.to(tl.float32), axis=0)  # exact: small integers
        acc += _block_dot(sumi, d4, m4, d8, s8, TYPE)
    return acc


@triton.jit
def _dot_rows(x_ptr, w_ptr, tokens, live, w_row, col, n_ok, TYPE: tl.constexpr, MMA: tl.constexpr,
              ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    """ROWS activation rows `tokens` (int64; rows not `live` read as 0) against BLOCK_N
    weight rows: [ROWS, BLOCK_N]. MMA (ROWS >= 16) sums the codes with tl.dot."""
    j = tl.arange(0, 32)
    acc = tl.zeros([ROWS, BLOCK_N], tl.float32)
    for b in range(0, col // 32):
        x = tl.load(x_ptr + tokens[:, None] * col + b * 32 + j[None, :], mask=live[:, None], other=0.0).to(tl.float32)
        q, d8, s8 = _q8_1_rows(x)
        d4, m4, codes = _weight_block(w_ptr, w_row, b, j, n_ok, TYPE)
        if MMA:  # small integers are exact in float16, and their dot in float32
            sumi = tl.dot(q.to(tl.float16), codes.to(tl.float16))
        else:  # [ROWS, 32, 1] x [1, 32, BLOCK_N]: exact sums of small integers
            sumi = tl.sum(q[:, :, None] * codes.to(tl.float32)[None, :, :], axis=1)
        acc += _block_dot(sumi, d4[None, :], m4[None, :], d8[:, None], s8[:, None], TYPE)
    return acc


def _ggml_output(X, type, n_out, row):
    """The [n_out, row] result in X's dtype and the bytes of one weight row (Q4_0, Q4_1 or
    Q8_0 blocks of X.shape[1] columns)."""
    if type not in (2, 3, 8):
        raise NotImplementedError(f"GGML type {type}")
    y = torch.empty((n_out, row), dtype=X.dtype, device=X.device)
    return y, X.shape[1] // 32 * {2: 18, 3: 20, 8: 34}[type]
