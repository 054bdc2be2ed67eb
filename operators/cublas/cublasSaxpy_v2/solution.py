import torch
import triton
import triton.language as tl

BLOCK = 2048


@triton.jit
def _saxpy_kernel(x_ptr, y_ptr, n, alpha, incx, incy, x_base, y_base, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    x_off = x_base + i * incx
    y_off = y_base + i * incy
    x = tl.load(x_ptr + x_off, mask=mask)
    y = tl.load(y_ptr + y_off, mask=mask)
    tl.store(y_ptr + y_off, alpha * x + y, mask=mask)


def _base(n: int, inc: int) -> int:
    # BLAS: with a negative increment, element 0 sits at the far end of the buffer
    return (1 - n) * inc if inc < 0 else 0


def cublasSaxpy_v2(
    n: int, alpha: float, x: torch.Tensor, incx: int, y: torch.Tensor, incy: int
) -> None:
    if n <= 0:
        return
    _saxpy_kernel[(triton.cdiv(n, BLOCK),)](
        x, y, n, float(alpha), incx, incy, _base(n, incx), _base(n, incy), BLOCK=BLOCK
    )
