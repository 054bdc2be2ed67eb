import itertools

import torch
import triton
import triton.language as tl

BLOCK = 1024
MAX_DIMS = 6
STREAM = 64  # Philox counters reserved per element: rejection rounds, then the inversion draw
_calls = itertools.count(1)


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
    rate_ptr,
    out_ptr,
    n,
    seed,
    s1,
    s2,
    s3,
    s4,
    s5,
    t0,
    t1,
    t2,
    t3,
    t4,
    t5,
    STREAM: tl.constexpr,
    BLOCK: tl.constexpr,
):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    i5 = idx % s5
    r = idx // s5
    i4 = r % s4
    r = r // s4
    i3 = r % s3
    r = r // s3
    i2 = r % s2
    r = r // s2
    i1 = r % s1
    i0 = r // s1
    lam = tl.load(
        rate_ptr + i0 * t0 + i1 * t1 + i2 * t2 + i3 * t3 + i4 * t4 + i5 * t5, mask=mask, other=0
    )
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


def _seed(generator) -> int:
    base = generator.initial_seed() if generator is not None else torch.initial_seed()
    # a new stream per call, reproducible after torch.manual_seed
    return (base * 0x9E3779B1 + next(_calls) * 0x85EBCA77) % (1 << 62)


def _layout(t: torch.Tensor):
    """Sizes and strides of t with size-1 dims dropped and chaining dims merged (row-major
    order kept), padded in front to MAX_DIMS."""
    dims = []
    for size, stride in zip(t.shape, t.stride(), strict=True):
        if size == 1:
            continue
        if dims and dims[-1][1] == size * stride:
            dims[-1] = (dims[-1][0] * size, stride)
        else:
            dims.append((size, stride))
    if len(dims) > MAX_DIMS:
        raise NotImplementedError(f"poisson supports up to {MAX_DIMS} non-mergeable dims")
    dims = [(1, 0)] * (MAX_DIMS - len(dims)) + dims
    return [d[0] for d in dims][1:] + [d[1] for d in dims]


def poisson(self, generator=None):
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    n = out.numel()
    if n:
        _poisson[(triton.cdiv(n, BLOCK),)](
            self, out, n, _seed(generator), *_layout(self), STREAM=STREAM, BLOCK=BLOCK
        )
    return out
