import math

import torch
import triton
import triton.language as tl


@triton.jit
def _round_to(x, OUT: tl.constexpr):
    # float32 -> OUT, rounding to nearest even. Triton's CPU interpreter truncates
    # float32 -> bfloat16 casts, so bfloat16 is rounded by hand first and the cast is then
    # exact (on a GPU this is the same value the cast itself would give).
    if OUT == tl.bfloat16:
        bits = x.to(tl.int32, bitcast=True)
        bits = (bits + (0x7FFF + ((bits >> 16) & 1))) & -65536
        x = bits.to(tl.float32, bitcast=True)
    return x.to(OUT)


@triton.jit
def _pdist_kernel(a_ptr, b_ptr, y_ptr, R, D, sar, sad, sbr, sbd, p, eps,
                  NORM: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr):
    # y[r] = || a[r, :] - b[r, :] + eps ||_p for BLOCK_R rows per program.
    # NORM: 1, 2, 3 (inf), 4 (p = 0, a count) or 0 (general p).
    IN: tl.constexpr = a_ptr.dtype.element_ty
    rows = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R).to(tl.int64)
    r_ok = rows < R
    acc = tl.zeros([BLOCK_R, BLOCK_D], tl.float32)
    for start in range(0, D, BLOCK_D):
        ds = start + tl.arange(0, BLOCK_D).to(tl.int64)
        mask = r_ok[:, None] & (ds < D)[None, :]
        a = tl.load(a_ptr + rows[:, None] * sar + ds[None, :] * sad, mask=mask, other=0.0)
        b = tl.load(b_ptr + rows[:, None] * sbr + ds[None, :] * sbd, mask=mask, other=0.0)
        # the difference and the eps shift are each rounded to the input dtype
        d = _round_to(a.to(tl.float32) - b.to(tl.float32), IN).to(tl.float32)
        d = _round_to(d + eps, IN).to(tl.float32)
        v = tl.where(mask, tl.abs(d), 0.0)
        if NORM == 1:
            acc += v
        elif NORM == 2:
            acc += v * v
        elif NORM == 3:
            acc = tl.maximum(acc, v)
        elif NORM == 4:
            acc += (v != 0).to(tl.float32)
        else:
            acc += tl.where(v > 0, tl.exp2(p * tl.log2(v)), 0.0)
    if NORM == 3:
        norm = tl.max(acc, 1)
    else:
        total = tl.sum(acc, 1)
        if NORM == 2:
            norm = tl.sqrt(total)
        elif NORM == 0:
            norm = tl.where(total > 0, tl.exp2(tl.log2(total) / p), 0.0)
        else:
            norm = total
    tl.store(y_ptr + rows, _round_to(norm, y_ptr.dtype.element_ty), mask=r_ok)


def _merge(sizes, strides):
    """(size, stride) of consecutive dims viewed as one, or None if they cannot be."""
    dims = [(n, s) for n, s in zip(sizes, strides, strict=False) if n != 1]
    for (_, s0), (n1, s1) in zip(dims, dims[1:], strict=False):
        if s0 != s1 * n1:
            return None
    return math.prod(n for n, _ in dims), (dims[-1][1] if dims else 1)


def _rows(t, shape):
    """t broadcast to shape, seen as (rows, D): (tensor, row stride, column stride)."""
    t = t.expand(shape)
    lead = _merge(t.shape[:-1], t.stride()[:-1])
    if lead is None:  # leading dims that cannot be viewed as one: copy
        t = t.reshape(-1, shape[-1])
        return t, t.stride(0), t.stride(1)
    return t, lead[1], t.stride(-1)


def pairwise_distance(x1: torch.Tensor, x2: torch.Tensor, p: float = 2.0, eps: float = 1e-06,
                      keepdim: bool = False) -> torch.Tensor:
    n = max(x1.ndim, x2.ndim, 1)
    s1 = [1] * (n - x1.ndim) + list(x1.shape)
    s2 = [1] * (n - x2.ndim) + list(x2.shape)
    shape = [a if b == 1 else b for a, b in zip(s1, s2, strict=False)]
    out_shape = shape[:-1] + [1] if keepdim else shape[:-1]
    if max(x1.ndim, x2.ndim) == 0:
        out_shape = []
    out = torch.empty(out_shape, dtype=x1.dtype, device=x1.device)
    R, D = math.prod(shape[:-1]), shape[-1]
    if R == 0:
        return out
    a, sar, sad = _rows(x1.reshape(s1), shape)
    b, sbr, sbd = _rows(x2.reshape(s2), shape)
    kind = {1.0: 1, 2.0: 2, math.inf: 3, 0.0: 4}.get(float(p), 0)
    block_d = min(triton.next_power_of_2(max(D, 1)), 1024)
    block_r = max(1, min(triton.next_power_of_2(R), 2048 // block_d))
    _pdist_kernel[(triton.cdiv(R, block_r),)](a, b, out, R, D, sar, sad, sbr, sbd, float(p), float(eps),
                                              NORM=kind, BLOCK_R=block_r, BLOCK_D=block_d)
    return out
