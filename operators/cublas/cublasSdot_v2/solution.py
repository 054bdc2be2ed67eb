import torch
import triton
import triton.language as tl

BLOCK = 4096
MAX_PARTIALS = 1024  # programs of the first pass; one program then adds their sums


@triton.jit
def _dot_partials(x_ptr, y_ptr, part_ptr, n, incx, incy, x_base, y_base, BLOCK: tl.constexpr):
    # grid-stride loop: program p adds blocks p, p + P, p + 2P, ... into one float32 sum
    pid = tl.program_id(0)
    step = tl.num_programs(0).to(tl.int64) * BLOCK
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(pid.to(tl.int64) * BLOCK, n, step):
        i = start + tl.arange(0, BLOCK)
        mask = i < n
        x = tl.load(x_ptr + x_base + i * incx, mask=mask, other=0.0)
        y = tl.load(y_ptr + y_base + i * incy, mask=mask, other=0.0)
        acc += x * y
    tl.store(part_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def _dot_finish(part_ptr, result_ptr, n_parts, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    parts = tl.load(part_ptr + i, mask=i < n_parts, other=0.0)
    tl.store(result_ptr, tl.sum(parts, axis=0))


def _base(n: int, inc: int) -> int:
    # BLAS: with a negative increment, element 0 sits at the far end of the buffer
    return (1 - n) * inc if inc < 0 else 0


def cublasSdot_v2(
    n: int, x: torch.Tensor, incx: int, y: torch.Tensor, incy: int, result: torch.Tensor
) -> None:
    n_parts = min(triton.cdiv(max(n, 0), BLOCK), MAX_PARTIALS)
    partials = torch.empty(max(n_parts, 1), dtype=torch.float32, device=result.device)
    if n_parts:
        _dot_partials[(n_parts,)](
            x, y, partials, n, incx, incy, _base(n, incx), _base(n, incy), BLOCK=BLOCK
        )
    # with n <= 0 no partial is read and the result is 0
    _dot_finish[(1,)](partials, result, n_parts, BLOCK=triton.next_power_of_2(max(n_parts, 1)))
