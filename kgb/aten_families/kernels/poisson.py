"""poisson's sampler (the sampling family): inversion of the CDF below a rate of 10,
Hoermann's transformed rejection (PTRS) from 10 on, each element with its own block of
Philox counters; the rates are read through their strides."""

import torch
import triton
import triton.language as tl

from kgb.aten_families.kernels.philox import _seed
from kgb.aten_families.kernels.strided_index import _layout, _strided_offsets

BLOCK = 1024
STREAM = 64  # Philox counters reserved per element: rejection rounds, then the inversion draw


@triton.jit
def _log_factorial(k):
    """log(k!) = lgamma(k + 1) for float64 k >= 0: Stirling's series, after shifting small
    arguments up by 8 (error below 1e-9)."""
    z = k + 1.0
    small = z < 8.0
    zz = tl.where(small, z + 8.0, z)
    shift = z * (z + 1.0) * (z + 2.0) * (z + 3.0) * (z + 4.0) * (z + 5.0) * (z + 6.0) * (z + 7.0)
    corr = tl.where(small, tl.log(tl.where(small, shift, 1.0)), 0.0)
    inv = 1.0 / zz
    inv2 = inv * inv
    series = inv * (1.0 / 12.0 - inv2 * (1.0 / 360.0 - inv2 / 1260.0))
    return (zz - 0.5) * tl.log(zz) - zz + 0.91893853320467274178 + series - corr


@triton.jit
def _poisson(
    rate_ptr, out_ptr, n, seed, s1, s2, s3, s4, s5, t0, t1, t2, t3, t4, t5,
    STREAM: tl.constexpr, BLOCK: tl.constexpr,
):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    offs = _strided_offsets(idx, s1, s2, s3, s4, s5, t0, t1, t2, t3, t4, t5)
    lam = tl.load(rate_ptr + offs, mask=mask, other=0)
    lam = lam.to(tl.float64)
    counter = idx * STREAM

    # rates below 10: invert the CDF with one uniform, summing P(X = k) in float64 so the
    # sum reaches every u < 1
    small = mask & (lam < 10.0)
    u = tl.rand(seed, counter + (STREAM - 1)).to(tl.float64)
    p = tl.exp(-lam)
    cdf = p
    k_small = tl.zeros([BLOCK], tl.float64)
    active = small & (u > cdf)
    it = 0
    while tl.max(active.to(tl.int32), 0) > 0:
        k_small = tl.where(active, k_small + 1.0, k_small)
        p = tl.where(active, p * lam / tl.maximum(k_small, 1.0), p)
        cdf = tl.where(active, cdf + p, cdf)
        it += 1
        active = active & (u > cdf) & (it < 200)

    # rates of 10 and more: Hoermann's transformed rejection (PTRS), about 1.1 rounds each
    big = mask & (lam >= 10.0)
    lam_b = tl.where(big, lam, 10.0)
    slam = tl.sqrt(lam_b)
    loglam = tl.log(lam_b)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    log_invalpha = tl.log(1.1239 + 1.1328 / (b - 3.4))
    vr = 0.9277 - 3.6224 / (b - 2.0)
    k_big = tl.zeros([BLOCK], tl.float64)
    active = big
    it = 0
    while tl.max(active.to(tl.int32), 0) > 0:
        r1, r2, _, _ = tl.rand4x(seed, counter + it)
        uu = r1.to(tl.float64) - 0.5
        v = r2.to(tl.float64)
        us = 0.5 - tl.abs(uu)
        us_safe = tl.maximum(us, 1e-12)
        k = tl.floor((2.0 * a / us_safe + b) * uu + lam_b + 0.43)
        fast = (us >= 0.07) & (v <= vr)
        rejected = (k < 0.0) | ((us < 0.013) & (v > us))
        kk = tl.maximum(k, 0.0)
        lhs = tl.log(tl.maximum(v, 1e-300)) + log_invalpha - tl.log(a / (us_safe * us_safe) + b)
        rhs = -lam_b + kk * loglam - _log_factorial(kk)
        accept = fast | (~rejected & (lhs <= rhs))
        k_big = tl.where(active & accept, k, k_big)
        it += 1
        active = active & ~accept & (it < STREAM - 1)

    # float32 holds counts below 2**24 exactly (and float64 -> bfloat16 casts are not
    # supported everywhere)
    count = tl.where(big, k_big, k_small).to(tl.float32)
    if out_ptr.dtype.element_ty == tl.bfloat16:
        # round to nearest even by hand: the CPU interpreter's cast truncates instead
        bits = count.to(tl.int32, bitcast=True)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & -65536
        count = bits.to(tl.float32, bitcast=True)
    tl.store(out_ptr + idx, count.to(out_ptr.dtype.element_ty), mask=mask)


def poisson(self, generator=None):
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    n = out.numel()
    if n:
        _poisson[(triton.cdiv(n, BLOCK),)](
            self, out, n, _seed(generator), *_layout(self), STREAM=STREAM, BLOCK=BLOCK
        )
    return out
