"""The loss family's launch: each member's kernel computes its elementwise loss on a tile
of the (rows, last dim) broadcast of its inputs, and either writes it (reduction none) or
adds the tile into a float32 partial; `_finish_kernel` turns the partials into the mean or
sum, rounded once."""

import math

import torch
import triton
import triton.language as tl

from kgb.aten_families.kernels.broadcast import _broadcast
from kgb.aten_families.kernels.rounding import _round_to


@triton.jit
def _tile(R, C, num_cb, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    # this program's tile of the (R, C) view: (pid, rows (a column), cols (a row), mask)
    pid = tl.program_id(0).to(tl.int64)
    rows = ((pid // num_cb) * BLOCK_R + tl.arange(0, BLOCK_R).to(tl.int64))[:, None]
    cols = ((pid % num_cb) * BLOCK_C + tl.arange(0, BLOCK_C).to(tl.int64))[None, :]
    return pid, rows, cols, (rows < R) & (cols < C)


@triton.jit
def _load(ptr, rows, cols, s_row, s_col, mask):
    return tl.load(ptr + rows * s_row + cols * s_col, mask=mask, other=0.0).to(tl.float32)


@triton.jit
def _emit(y_ptr, loss, pid, rows, cols, C, mask, DT: tl.constexpr, REDUCE: tl.constexpr):
    # REDUCE: y[pid] = the tile's sum of losses (a float32 partial); else y[r, c] = loss
    # (contiguous, input dtype)
    if REDUCE:
        tl.store(y_ptr + pid, tl.sum(tl.sum(tl.where(mask, loss, 0.0), 1), 0))
    else:
        tl.store(y_ptr + rows * C + cols, loss.to(DT), mask=mask)


@triton.jit
def _finish_kernel(part_ptr, y_ptr, P, divisor, BLOCK: tl.constexpr):
    # y = sum(partials) / divisor, in a fixed order (deterministic)
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, P, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(part_ptr + offs, mask=offs < P, other=0.0)
    total = tl.sum(acc, 0) / divisor
    tl.store(y_ptr, _round_to(total, y_ptr.dtype.element_ty))


def _loss(kernel, inputs, scalars, reduction, **constexprs):
    """`kernel` over the broadcast of `inputs`, reduced as `reduction` says: 0 none (the
    losses, of the broadcast shape), 1 mean, 2 sum (0-d tensors). The kernel takes the
    inputs, the result, R, C, num_cb, each input's two strides, then `scalars`."""
    shape, views = _broadcast(*inputs)
    tensors = [v[0] for v in views]
    strides = [s for v in views for s in v[1:]]
    first = inputs[0]
    R, C = math.prod(shape[:-1]), shape[-1]
    block_c = min(triton.next_power_of_2(max(C, 1)), 1024)
    block_r = max(1, min(triton.next_power_of_2(max(R, 1)), 2048 // block_c))
    num_cb = triton.cdiv(C, block_c)
    programs = triton.cdiv(R, block_r) * num_cb
    kw = dict(BLOCK_R=block_r, BLOCK_C=block_c, **constexprs)
    if reduction == 0:
        out = torch.empty(shape if any(t.ndim for t in inputs) else [], dtype=first.dtype, device=first.device)
        if out.numel():
            kernel[(programs,)](*tensors, out, R, C, num_cb, *strides, *scalars, REDUCE=False, **kw)
        return out
    part = torch.empty(programs, dtype=torch.float32, device=first.device)
    if programs:
        kernel[(programs,)](*tensors, part, R, C, num_cb, *strides, *scalars, REDUCE=True, **kw)
    out = torch.empty((), dtype=first.dtype, device=first.device)
    divisor = float(R * C) if reduction == 1 else 1.0  # mean of nothing: 0 / 0 = NaN
    _finish_kernel[(1,)](part, out, programs, divisor, BLOCK=1024)
    return out
