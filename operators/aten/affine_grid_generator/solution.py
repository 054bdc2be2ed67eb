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
    # one operation's result rounded to DT, kept in float32
    return _round_to(x, DT).to(tl.float32)


@triton.jit
def _axis(i, n, ALIGN: tl.constexpr, DT: tl.constexpr):
    # point i of PyTorch's linspace_from_neg_one(n) in dtype DT, as float32
    nf = (i * 0 + n).to(tl.float32)
    back = (n - 1 - i).to(tl.float32)
    if DT == tl.float32:
        # float32 linspace: step rounded once; -1 + step * i with one rounding (an FMA),
        # done exactly in float64 (step * i has at most 48 significant bits)
        step = (2.0 / (nf.to(tl.float64) - 1.0)).to(tl.float32).to(tl.float64)
        lo = (-1.0 + step * i.to(tl.float64)).to(tl.float32)
        hi = (1.0 - step * back.to(tl.float64)).to(tl.float32)
    else:
        # half precision: every operation is rounded to the dtype (hence no fused
        # multiply-adds, see the launch). Divisions use div_rn: a GPU's default float32
        # division is approximate and can flip that rounding.
        step = _r(tl.math.div_rn(i * 0.0 + 2.0, _r(nf - 1.0, DT)), DT)
        lo = _r(-1.0 + _r(step * _r(i.to(tl.float32), DT), DT), DT)
        hi = _r(1.0 - _r(step * _r(back, DT), DT), DT)
    v = tl.where(i < n // 2, lo, hi)
    if not ALIGN:
        v = _r(tl.math.div_rn(_r(v * (nf - 1.0), DT), nf), DT)
    return tl.where(nf > 1.0, v, 0.0)


@triton.jit
def _grid_kernel(theta_ptr, out_ptr, P, D, H, W, stn, str_, stc, num_pb,
                 ALIGN: tl.constexpr, THREE_D: tl.constexpr, BLOCK: tl.constexpr):
    # Positions p (flat over D, H, W) of batch n: out[n, p, j] = sum_k base[p, k] * theta[n, j, k]
    # with base = (x_w, y_h, [z_d,] 1).
    DT: tl.constexpr = theta_ptr.dtype.element_ty
    pid = tl.program_id(0).to(tl.int64)
    n = pid // num_pb
    p = (pid % num_pb) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    ok = p < P
    w = p % W
    h = (p // W) % H
    x = _axis(w, W, ALIGN, DT)
    y = _axis(h, H, ALIGN, DT)
    th = theta_ptr + n * stn
    if THREE_D:
        z = _axis(p // (W * H), D, ALIGN, DT)
        for j in tl.static_range(3):
            acc = x * tl.load(th + j * str_).to(tl.float32)
            acc += y * tl.load(th + j * str_ + stc).to(tl.float32)
            acc += z * tl.load(th + j * str_ + 2 * stc).to(tl.float32)
            acc += tl.load(th + j * str_ + 3 * stc).to(tl.float32)
            tl.store(out_ptr + (n * P + p) * 3 + j, _round_to(acc, DT), mask=ok)
    else:
        for j in tl.static_range(2):
            acc = x * tl.load(th + j * str_).to(tl.float32)
            acc += y * tl.load(th + j * str_ + stc).to(tl.float32)
            acc += tl.load(th + j * str_ + 2 * stc).to(tl.float32)
            tl.store(out_ptr + (n * P + p) * 2 + j, _round_to(acc, DT), mask=ok)


def affine_grid_generator(theta: torch.Tensor, size: list[int], align_corners: bool) -> torch.Tensor:
    size = [int(s) for s in size]
    three_d = len(size) == 5
    N = size[0]
    D, H, W = (size[2], size[3], size[4]) if three_d else (1, size[2], size[3])
    spatial = size[2:]
    out = torch.empty((N, *spatial, 3 if three_d else 2), dtype=theta.dtype, device=theta.device)
    P = math.prod(spatial)
    if out.numel() == 0:
        return out
    block = min(triton.next_power_of_2(P), 1024)
    num_pb = triton.cdiv(P, block)
    _grid_kernel[(N * num_pb,)](theta, out, P, D, H, W, *theta.stride(), num_pb,
                                ALIGN=bool(align_corners), THREE_D=three_d, BLOCK=block,
                                # PyTorch rounds each linspace step to the half type; fused,
                                # the GPU turns -1 + step * i into one half-precision FMA
                                # (seen on an H200: 664 elements of image-f16 off by 3 ulp)
                                enable_fp_fusion=False)
    return out
