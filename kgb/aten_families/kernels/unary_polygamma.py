"""polygamma of the unary family: the n-th derivative of digamma, by the recurrence up to
z >= 10 and the asymptotic expansion there."""

import math

import torch
import triton
import triton.language as tl

from kgb.aten_families.kernels.unary import _block, _float_result, _launch

# Bernoulli numbers B_2, B_4, ..., B_12
BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730)


@triton.jit
def _polygamma_kernel(x_ptr, y_ptr, numel, fact_n, c0, c1, b1, b2, b3, b4, b5, b6, sign,
                      N: tl.constexpr, BLOCK: tl.constexpr):
    # constants as locals: a kernel may not read plain module globals on the GPU, and
    # tl.constexpr globals misbehave in the CPU interpreter when they come first in an expression
    z0 = 10.0  # the asymptotic expansions are used from here on
    pi = 3.141592653589793
    offs, mask = _block(numel, BLOCK)
    x = tl.load(x_ptr + offs, mask=mask, other=1).to(tl.float32)
    if N == 0:
        # digamma of negative x through the reflection psi(x) = psi(1 - x) - pi / tan(pi x)
        neg = x < 0.0
        z = tl.where(neg, 1.0 - x, x)
    else:
        z = x  # for n >= 1 the recurrence below is exact for negative x too
    # Recurrence psi^(n)(z) = psi^(n)(z + 1) - (-1)^n n! / z^(n+1): step every lane up to
    # z >= z0, summing 1 / z^(n+1) on the way. NaN and -inf lanes take no steps.
    todo = (z < z0) & (z > float("-inf"))
    n_steps = tl.max(tl.where(todo, tl.ceil(z0 - z), 0.0), axis=0).to(tl.int32)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for _ in range(0, n_steps):
        active = z < z0
        t = 1.0 / z
        tp = t
        for _j in tl.static_range(N):
            tp = tp * t
        acc += tl.where(active, tp, 0.0)
        z = tl.where(active, z + 1.0, z)
    w = 1.0 / z
    w2 = w * w
    if N == 0:
        # psi(z) ~ ln z - 1/(2z) - sum B_2k / (2k z^2k), k <= 5
        tail = w2 * (-1.0 / 12 + w2 * (1.0 / 120 + w2 * (-1.0 / 252 + w2 * (1.0 / 240 + w2 * (-1.0 / 132)))))
        y = tl.log(z) - 0.5 * w + tail - acc
        # tan(pi x) = tan(pi r) with r = x - round(x) in [-1/2, 1/2]: pi r is exact enough
        r = x - tl.floor(x + 0.5)
        y = tl.where(neg, y - pi * tl.cos(pi * r) / tl.sin(pi * r), y)
        y = tl.where(neg & (x == tl.floor(x)), float("nan"), y)  # negative integers, -inf
        minus_zero = x.to(tl.int32, bitcast=True) < 0
        y = tl.where(x == 0.0, tl.where(minus_zero, float("inf"), float("-inf")), y)
    else:
        # psi^(n)(z) ~ sign z^-n [(n-1)! + n!/2 w + sum_k B_2k (2k+n-1)!/(2k)! w^2k], w = 1/z
        wn = w
        for _j in tl.static_range(N - 1):
            wn = wn * w
        series = c0 + w * (c1 + w * (b1 + w2 * (b2 + w2 * (b3 + w2 * (b4 + w2 * (b5 + w2 * b6))))))
        y = sign * (fact_n * acc + wn * series)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def polygamma(n: int, self: torch.Tensor) -> torch.Tensor:
    if n < 0:
        raise ValueError("polygamma(n, x) does not support negative n")
    # coefficients of the asymptotic expansion for this n (unused for n = 0)
    f = math.factorial
    c0 = float(f(n - 1)) if n > 0 else 0.0
    b = [B * f(2 * k + n - 1) / f(2 * k) if n > 0 else 0.0 for k, B in enumerate(BERNOULLI, start=1)]
    sign = 1.0 if n % 2 == 1 else -1.0
    return _launch(_polygamma_kernel, self, _float_result(self), float(f(n)), c0, f(n) / 2, *b, sign, N=n)
