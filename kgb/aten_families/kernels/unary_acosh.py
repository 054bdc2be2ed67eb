"""acosh of the unary family, elementwise on float32."""

import triton
import triton.language as tl


@triton.jit
def _acosh(x):
    ln2 = 0.6931471805599453  # a local: a kernel may not read plain module globals on the GPU
    # acosh(1 + t) = log1p(t + sqrt(t * (t + 2))): t = x - 1 is exact near 1, and
    # t * (t + 2) avoids the cancellation of x * x - 1.
    t = x - 1.0
    u = t + tl.sqrt(t * (t + 2.0))
    # log1p(u) = log(w) * u / (w - 1) with w = 1 + u corrects the rounding of w.
    w = 1.0 + u
    small = tl.where(w == 1.0, u, tl.log(w) * (u / (w - 1.0)))
    # beyond 1e4 the -1 under the root is below float32 resolution: acosh(x) = log(2x)
    big = tl.log(x) + ln2
    y = tl.where(x > 1.0e4, big, small)
    return tl.where(x < 1.0, float("nan"), y)
