"""cuBLAS `cublasSdot_v2` (cuBLAS 12): the dot product of two strided float32 vectors.

    cublasSdot_v2(n, x, incx, y, incy, result) -> None

The BLAS routine without its handle, called with CUBLAS_POINTER_MODE_DEVICE: `result` is
a 1-element float32 tensor on the device into which the routine writes

    result[0] = sum over i = 0 .. n-1 of xi * yi

accumulated in float32 (in any order). `x` and `y` are 1-D contiguous float32 tensors
that stand for the device pointers, read with the increments `incx` and `incy` and the
BLAS convention for the element order of a strided vector:

    xi = x[i * incx]   if incx > 0,   x[(n - 1 - i) * |incx|]   if incx < 0

(the same for y), so a negative increment walks the vector backwards from the end of the
buffer, which holds at least 1 + (n - 1) * |inc| elements. The increments are never 0 in
the cases. For n <= 0 the result is 0. `result` holds garbage before the call; x and y
must not be modified. The call must not synchronise with the host (result stays on the
device).
"""

import torch

from kgb import cublas
from kgb.evaluate.correctness import compare_tensor
from kgb.operators import ATOL_FACTOR, PUBLISHED_RTOL, Case, Tolerance

VERSION = 1

SIGNATURES = '''
def cublasSdot_v2(n: int, x: torch.Tensor, incx: int, y: torch.Tensor, incy: int, result: torch.Tensor) -> None:
    """cublasStatus_t cublasSdot_v2(cublasHandle_t handle, int n, const float *x, int incx,
    const float *y, int incy, float *result)  -- without the handle; result in device memory"""
'''

OUTPUT_ARGS = ("result",)


def _case(name, tag, n, incx=1, incy=1, mean=0.0, seed=0):
    """mean: the inputs' mean; 0 makes the sum cancel (|result| ~ sqrt(n)), > 0 not."""
    return Case(
        name, tag, dict(n=n, incx=incx, incy=incy, mean=mean), seed=seed, reduction=max(n, 1)
    )


CASES = [
    _case("smoke-unit", "smoke", 1000, mean=0.5),
    _case("smoke-strided-negative", "smoke", 37, incx=-2, incy=3, seed=1),
    _case("large", "check", 1_000_003, mean=0.3),
    _case("large-cancelling", "check", 1_000_003),
    _case("odd-block", "check", 4097, incx=2, incy=-1, mean=1.0),
    _case("both-negative", "check", 10_001, incx=-3, incy=-2, mean=0.5),
    _case("x-reversed", "check", 65_537, incx=-1, incy=1),
    _case("wide-stride", "check", 999, incx=7, incy=5, mean=0.2),
    _case("one", "check", 1, incx=-5, incy=-7),
    _case("short", "check", 17, mean=0.5),
    _case("bench-1e8", "bench", 100_000_000, mean=0.5),
    _case("bench-16m", "bench", 1 << 24),
    _case("bench-strided", "bench", 1 << 24, incx=2, incy=-2, mean=0.5),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    n, incx, incy = p["n"], p["incx"], p["incy"]
    x = (torch.randn(1 + (n - 1) * abs(incx), generator=gen) + p["mean"]).to(device)
    y = (torch.randn(1 + (n - 1) * abs(incy), generator=gen) + p["mean"]).to(device)
    result = torch.empty(1, dtype=torch.float32, device=device)
    return dict(n=n, x=x, incx=incx, y=y, incy=incy, result=result)


def _products(n, x, incx, y, incy) -> torch.Tensor:
    """x_i * y_i for i = 0 .. n-1, in float32."""
    xs = x.as_strided((n,), (abs(incx),))
    ys = y.as_strided((n,), (abs(incy),))
    # a negative increment reverses one vector's logical order relative to memory
    xs = xs.flip(0) if (incx < 0) != (incy < 0) else xs
    return xs * ys


def reference(n, x, incx, y, incy, result):
    if n <= 0:
        result.zero_()
        return
    result.copy_(_products(n, x, incx, y, incy).sum(dtype=torch.float32).reshape(1))


def compare(actual, expected, case, inputs):
    """The published rule, with atol = 1e-4 * n * RMS(x_i * y_i).

    The default scales atol by the RMS of the expected output; with one output element
    that is |result| itself, so for n >= 1e4 an all-zero answer would pass. The natural
    scale of a dot product's rounding error is that of its terms, which for unit-scale
    inputs gives the published absolute atol of 1e-4 * n.
    """
    p = inputs
    terms = _products(p["n"], p["x"], p["incx"], p["y"], p["incy"]).double()
    scale = float(terms.pow(2).mean().sqrt())
    tol = Tolerance(
        rtol=PUBLISHED_RTOL["float32"], atol=ATOL_FACTOR * case.reduction * scale
    )
    message, _, _ = compare_tensor(
        "argument result", actual["result"], expected["result"], case.reduction, tol
    )
    return message


def speed_baseline(entry, device):
    return cublas.baseline("cublasSdot_v2", device, pointer_mode="device")
