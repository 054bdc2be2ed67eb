"""cuBLAS `cublasSaxpy_v2` (cuBLAS 12): y <- alpha * x + y on strided float32 vectors.

    cublasSaxpy_v2(n, alpha, x, incx, y, incy) -> None

The BLAS routine without its handle. `x` and `y` are 1-D contiguous float32 tensors that
stand for the device pointers: the routine reads and writes their memory with the
increments `incx` and `incy`, exactly as cuBLAS would through the raw pointers. `alpha`
is a Python float (a host scalar, CUBLAS_POINTER_MODE_HOST).

For i = 0 .. n-1, with the BLAS convention for the element order of a strided vector

    xi = x[i * incx]              if incx > 0,   x[(n - 1 - i) * |incx|]   if incx < 0
    yi = y[i * incy]              if incy > 0,   y[(n - 1 - i) * |incy|]   if incy < 0
    yi <- alpha * xi + yi         (float32; a fused multiply-add is fine)

so a negative increment walks the vector backwards from the end of the buffer. The
buffers hold at least 1 + (n - 1) * |inc| elements. Elements of `y` that are not among
the n strided ones must keep their values; `x` must not be modified. The increments are
never 0 in the cases. n <= 0 returns without touching `y`. The vectors have no overlap.
"""

import torch

from kgb import cublas
from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def cublasSaxpy_v2(n: int, alpha: float, x: torch.Tensor, incx: int, y: torch.Tensor, incy: int) -> None:
    """cublasStatus_t cublasSaxpy_v2(cublasHandle_t handle, int n, const float *alpha,
    const float *x, int incx, float *y, int incy)  -- without the handle"""
'''

INOUT_ARGS = ("y",)


def _case(name, tag, n, alpha, incx=1, incy=1, seed=0):
    return Case(name, tag, dict(n=n, alpha=alpha, incx=incx, incy=incy), seed=seed)


CASES = [
    _case("smoke-unit", "smoke", 1000, 0.75),
    _case("smoke-strided-negative", "smoke", 37, -2.5, incx=-2, incy=3, seed=1),
    _case("large", "check", 1_000_003, 1.5),
    _case("odd-block", "check", 4097, -0.3, incx=2, incy=-1),
    _case("both-negative", "check", 10_001, 2.0, incx=-3, incy=-2),
    _case("x-reversed", "check", 65_537, 1.0, incx=-1, incy=1),
    _case("wide-stride", "check", 999, 3.25, incx=7, incy=5),
    _case("one", "check", 1, -4.0, incx=-5, incy=-7),
    _case("tiny-alpha", "check", 3000, 1e-3),
    _case("bench-2e8", "bench", 200_000_000, 0.5),
    _case("bench-16m", "bench", 1 << 24, -1.25),
    _case("bench-strided", "bench", 1 << 24, 2.0, incx=2, incy=-2),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    n, incx, incy = p["n"], p["incx"], p["incy"]
    x = torch.randn(1 + (n - 1) * abs(incx), generator=gen).to(device)
    y = torch.randn(1 + (n - 1) * abs(incy), generator=gen).to(device)
    return dict(n=n, alpha=p["alpha"], x=x, incx=incx, y=y, incy=incy)


def _vector(buf: torch.Tensor, n: int, inc: int) -> torch.Tensor:
    """The n elements of a BLAS vector as a view, in memory order (reversed if inc < 0)."""
    return buf.as_strided((n,), (abs(inc),))


def reference(n, alpha, x, incx, y, incy):
    if n <= 0:
        return
    xs = _vector(x, n, incx)
    ys = _vector(y, n, incy)
    # a negative increment reverses the logical order of one vector relative to memory
    xs = xs.flip(0) if (incx < 0) != (incy < 0) else xs
    ys.copy_(alpha * xs + ys)


def speed_baseline(entry, device):
    return cublas.baseline("cublasSaxpy_v2", device)
