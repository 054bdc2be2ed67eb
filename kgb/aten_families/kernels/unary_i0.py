"""i0 (the modified Bessel function of order 0) of the unary family, elementwise on
float32."""

import triton
import triton.language as tl

from kgb.aten_families.kernels.unary_exp import _exp_scaled


@triton.jit
def _i0(x):
    inv_sqrt_2pi = 0.3989422804014327  # a local: kernels may not read plain globals on the GPU
    a = tl.abs(x)
    # |x| < 10: the power series in u = x^2 / 4, coefficients 1 / (k!)^2, k <= 17
    u = a * a * 0.25
    p = 7.904291839561953e-30
    p = p * u + 2.2843403070268506e-27
    p = p * u + 5.8479111859887375e-25
    p = p * u + 1.3157801051012797e-22
    p = p * u + 2.5789289454139907e-20
    p = p * u + 4.358389832123526e-18
    p = p * u + 6.276081093560082e-16
    p = p * u + 7.5940583032022e-14
    p = p * u + 7.594058194781983e-12
    p = p * u + 6.151187337266606e-10
    p = p * u + 3.936759895850628e-08
    p = p * u + 1.9290123418613803e-06
    p = p * u + 6.944444612599909e-05
    p = p * u + 0.0017361111240461469
    p = p * u + 0.02777777798473835
    p = p * u + 0.25
    p = p * u + 1.0
    p = p * u + 1.0
    # |x| >= 10: exp(a) / sqrt(2 pi a) * S(1/a), S the asymptotic series with coefficients
    # ((2k-1)!!)^2 / (k! 8^k), k <= 12 (the first omitted term is below 1e-8 at a = 10)
    ac = tl.where(a < 10.0, 10.0, tl.where(a > 100.0, 100.0, a))  # past 92 it is +inf anyway
    w = 1.0 / ac
    s = 3038.090576171875
    s = s * w + 551.3358764648438
    s = s * w + 110.01714324951172
    s = s * w + 24.380529403686523
    s = s * w + 6.074041843414307
    s = s * w + 1.7277275323867798
    s = s * w + 0.5725014209747314
    s = s * w + 0.22710800170898438
    s = s * w + 0.112152099609375
    s = s * w + 0.0732421875
    s = s * w + 0.0703125
    s = s * w + 0.125
    s = s * w + 1.0
    big = _exp_scaled(ac, s * (inv_sqrt_2pi * tl.rsqrt(ac)), 0)
    y = tl.where(a < 10.0, p, big)
    return tl.where(a == float("inf"), float("nan"), y)  # PyTorch: inf / inf
