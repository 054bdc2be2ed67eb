import math
import struct

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _source(o, in_size, r, MODE: tl.constexpr):
    # The forward pass's nearest source index of output position o (ATen's formula).
    if MODE == 0:
        s = o
    elif MODE == 1:
        s = o // 2
    else:
        s = tl.minimum((o.to(tl.float32) * r).to(tl.int32), in_size - 1)
    return s


@triton.jit
def _first(i, r, MODE: tl.constexpr):
    # An output position at or before the first one mapped to input position i.
    if MODE == 0:
        f = i
    elif MODE == 1:
        f = 2 * i
    else:
        f = tl.maximum((i.to(tl.float32) / r).to(tl.int32) - 2, 0)
    return f


@triton.jit
def _nearest_bw_kernel(g, out, n, C, IH, IW, OH, OW, sn, sc, sh, sw, r_h, r_w, WH, WW,
                       MODE_H: tl.constexpr, MODE_W: tl.constexpr, BLOCK: tl.constexpr):
    # One lane per grad_input element (contiguous n, c, ih, iw). It sums the output
    # gradients whose nearest source it is: they lie in a window of WH x WW output
    # positions starting at _first, and each candidate is checked with the forward formula.
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    iw = (i % IW).to(tl.int32)
    t = i // IW
    ih = (t % IH).to(tl.int32)
    nc = t // IH
    base = g + (nc // C) * sn + (nc % C) * sc
    oh0 = _first(ih, r_h, MODE_H)
    ow0 = _first(iw, r_w, MODE_W)
    acc = tl.zeros([BLOCK], tl.float32)
    for a in range(WH):
        oh = oh0 + a
        hv = m & (oh < OH) & (_source(oh, IH, r_h, MODE_H) == ih)
        for b in range(WW):
            ow = ow0 + b
            wv = hv & (ow < OW) & (_source(ow, IW, r_w, MODE_W) == iw)
            v = tl.load(base + oh.to(tl.int64) * sh + ow.to(tl.int64) * sw, mask=wv, other=0)
            acc += v.to(tl.float32)
    tl.store(out + i, acc.to(out.dtype.element_ty), mask=m)


def _f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def _mapping(in_size, out_size, scale):
    """(mode, float32 ratio input/output, window) for one spatial dimension."""
    if out_size == in_size:
        return 0, 1.0, 1
    if out_size == 2 * in_size:
        return 1, 0.5, 2
    r = _f32(1.0 / scale) if scale is not None and scale > 0 else _f32(_f32(in_size) / _f32(out_size))
    # longest run of outputs on one input: ~1/r, or the clamped tail on the last input
    run = max(math.ceil(1 / r) + 1, out_size - math.floor((in_size - 1) / r) + 1)
    return 2, r, run + 4


def upsample_nearest2d_backward(grad_output: torch.Tensor, output_size: list, input_size: list,
                                scales_h: float | None = None, scales_w: float | None = None) -> torch.Tensor:
    N, C, IH, IW = input_size
    OH, OW = output_size
    out = torch.empty((N, C, IH, IW), dtype=grad_output.dtype, device=grad_output.device)
    if out.numel() == 0:
        return out
    mode_h, r_h, wh = _mapping(IH, OH, scales_h)
    mode_w, r_w, ww = _mapping(IW, OW, scales_w)
    n = out.numel()
    _nearest_bw_kernel[(triton.cdiv(n, BLOCK),)](
        grad_output, out, n, C, IH, IW, OH, OW, *grad_output.stride(), r_h, r_w, wh, ww,
        MODE_H=mode_h, MODE_W=mode_w, BLOCK=BLOCK,
    )
    return out
