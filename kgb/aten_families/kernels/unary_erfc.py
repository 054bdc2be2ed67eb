"""erfc of the unary family, elementwise on float32."""

import triton
import triton.language as tl


@triton.jit
def _erfc(x):
    # x >= 1/2: erfc(x) = exp(-x^2) t P(t), t = 1 / (1 + x), P a least-squares fit (relative
    # error) of erfc(x) exp(x^2) / t on t in (0, 2/3]; no cancellation in the right tail.
    t = 1.0 / (1.0 + tl.abs(x))
    p = -0.004826449789106846
    p = p * t - 1.9901480674743652
    p = p * t + 7.176028728485107
    p = p * t - 10.385366439819336
    p = p * t + 7.053694248199463
    p = p * t - 1.4533385038375854
    p = p * t - 0.5194263458251953
    p = p * t - 0.29699015617370605
    p = p * t + 0.28269699215888977
    p = p * t + 0.5641801953315735
    p = p * t + 0.564189612865448
    tail = tl.exp(-x * x) * t * p
    # x < 1/2: 1 - erf(x) is between 0.48 and 2, nothing cancels
    return tl.where(x < 0.5, 1.0 - tl.erf(x), tail)
