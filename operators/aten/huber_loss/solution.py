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
def _r(x, DT: tl.constexpr):
    # one operation's result rounded to the input dtype, kept in float32
    return _round_to(x, DT).to(tl.float32)


@triton.jit
def _huber_kernel(a_ptr, b_ptr, y_ptr, R, C, num_cb, sar, sac, sbr, sbc, delta,
                  REDUCE: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    # Tile of the (R, C) broadcast view. REDUCE: y[pid] = the tile's sum of losses
    # (a float32 partial); else y[r, c] = loss (contiguous, input dtype).
    DT: tl.constexpr = a_ptr.dtype.element_ty
    pid = tl.program_id(0).to(tl.int64)
    rows = (pid // num_cb) * BLOCK_R + tl.arange(0, BLOCK_R).to(tl.int64)
    cols = (pid % num_cb) * BLOCK_C + tl.arange(0, BLOCK_C).to(tl.int64)
    mask = (rows < R)[:, None] & (cols < C)[None, :]
    a = tl.load(a_ptr + rows[:, None] * sar + cols[None, :] * sac, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + rows[:, None] * sbr + cols[None, :] * sbc, mask=mask, other=0.0).to(tl.float32)
    # PyTorch's order of operations, each rounded to the input dtype
    z = tl.abs(_r(a - b, DT))
    d = _r(tl.zeros([BLOCK_R, BLOCK_C], tl.float32) + delta, DT)
    quad = _r(_r(0.5 * z, DT) * z, DT)
    lin = _r(d * _r(z - _r(0.5 * d, DT), DT), DT)
    loss = tl.where(z < d, quad, lin)
    if REDUCE:
        tl.store(y_ptr + pid, tl.sum(tl.sum(tl.where(mask, loss, 0.0), 1), 0))
    else:
        tl.store(y_ptr + rows[:, None] * C + cols[None, :], loss.to(DT), mask=mask)


@triton.jit
def _finish_kernel(part_ptr, y_ptr, P, divisor, BLOCK: tl.constexpr):
    # y = sum(partials) / divisor, in a fixed order (deterministic)
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, P, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(part_ptr + offs, mask=offs < P, other=0.0)
    total = tl.sum(acc, 0) / divisor
    tl.store(y_ptr, _round_to(total, y_ptr.dtype.element_ty))


def _merge(sizes, strides):
    """(size, stride) of consecutive dims viewed as one, or None if they cannot be."""
    dims = [(n, s) for n, s in zip(sizes, strides, strict=False) if n != 1]
    for (_, s0), (n1, s1) in zip(dims, dims[1:], strict=False):
        if s0 != s1 * n1:
            return None
    return math.prod(n for n, _ in dims), (dims[-1][1] if dims else 1)


def _broadcast(*tensors):
    """The broadcast shape and, per tensor, (tensor, row stride, column stride) of its
    (rows, last dim) view of that shape (copied only when the rows cannot be merged)."""
    n = max(max(t.ndim for t in tensors), 1)
    padded = [[1] * (n - t.ndim) + list(t.shape) for t in tensors]
    shape = [0 if 0 in sizes else max(sizes) for sizes in zip(*padded, strict=False)]
    views = []
    for t, s in zip(tensors, padded, strict=False):
        t = t.reshape(s).expand(shape)
        lead = _merge(t.shape[:-1], t.stride()[:-1])
        if lead is None:
            t = t.reshape(-1, shape[-1])
            lead = (None, t.stride(0))
        views.append((t, lead[1], t.stride(-1)))
    return shape, views


def huber_loss(self: torch.Tensor, target: torch.Tensor, reduction: int = 1, delta: float = 1.0) -> torch.Tensor:
    shape, ((a, sar, sac), (b, sbr, sbc)) = _broadcast(self, target)
    R, C = math.prod(shape[:-1]), shape[-1]
    block_c = min(triton.next_power_of_2(max(C, 1)), 1024)
    block_r = max(1, min(triton.next_power_of_2(max(R, 1)), 2048 // block_c))
    num_cb = triton.cdiv(C, block_c)
    programs = triton.cdiv(R, block_r) * num_cb
    kw = dict(BLOCK_R=block_r, BLOCK_C=block_c)
    if reduction == 0:
        out = torch.empty(shape if self.ndim or target.ndim else [], dtype=self.dtype, device=self.device)
        if out.numel():
            _huber_kernel[(programs,)](a, b, out, R, C, num_cb, sar, sac, sbr, sbc, float(delta), REDUCE=False, **kw)
        return out
    part = torch.empty(programs, dtype=torch.float32, device=self.device)
    if programs:
        _huber_kernel[(programs,)](a, b, part, R, C, num_cb, sar, sac, sbr, sbc, float(delta), REDUCE=True, **kw)
    out = torch.empty((), dtype=self.dtype, device=self.device)
    divisor = float(R * C) if reduction == 1 else 1.0  # mean of nothing: 0 / 0 = NaN
    _finish_kernel[(1,)](part, out, programs, divisor, BLOCK=1024)
    return out
