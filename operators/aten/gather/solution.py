import torch
import triton
import triton.language as tl

MAXD = 6  # dims a kernel walks after merging; more is refused
BLOCK = 1024


@triton.jit
def _nd_offsets(i, D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5, T0, T1, T2, T3, T4, T5, NDIM: tl.constexpr):
    # Row-major flat index -> element offsets under two stride sets. Dims are left-aligned
    # (dim 0 outermost, dim NDIM-1 innermost); the outermost coordinate is what remains.
    r = i
    a = i * 0
    b = i * 0
    if NDIM > 5:
        c = r % D5
        r = r // D5
        a += c * S5
        b += c * T5
    if NDIM > 4:
        c = r % D4
        r = r // D4
        a += c * S4
        b += c * T4
    if NDIM > 3:
        c = r % D3
        r = r // D3
        a += c * S3
        b += c * T3
    if NDIM > 2:
        c = r % D2
        r = r // D2
        a += c * S2
        b += c * T2
    if NDIM > 1:
        c = r % D1
        r = r // D1
        a += c * S1
        b += c * T1
    return a + r * S0, b + r * T0


@triton.jit
def _gather_kernel(src, out, index, n, dim_stride, D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5,
                   T0, T1, T2, T3, T4, T5, NDIM: tl.constexpr, BLOCK: tl.constexpr):
    # Walk index's shape; out is contiguous in that shape. S: self's strides with 0 at dim,
    # T: index's strides. The position along dim is the loaded index value.
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    so, io = _nd_offsets(i, D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5, T0, T1, T2, T3, T4, T5, NDIM)
    k = tl.load(index + io, mask=m, other=0).to(tl.int64)
    tl.store(out + i, tl.load(src + so + k * dim_stride, mask=m), mask=m)


def _collapse(shape, *strides):
    """Drop size-1 dims and merge neighbours contiguous in every stride list (same walk order)."""
    dims = []
    for k, size in enumerate(shape):
        if size == 1:
            continue
        st = [s[k] for s in strides]
        if dims and all(po == si * size for po, si in zip(dims[-1][1], st)):
            dims[-1] = (dims[-1][0] * size, st)
        else:
            dims.append((size, st))
    if not dims:
        dims = [(1, [0] * len(strides))]
    if len(dims) > MAXD:
        raise NotImplementedError(f"more than {MAXD} non-mergeable dimensions")
    sizes = [d[0] for d in dims] + [1] * (MAXD - len(dims))
    lists = [[d[1][j] for d in dims] + [0] * (MAXD - len(dims)) for j in range(len(strides))]
    return len(dims), sizes, lists



def gather(self: torch.Tensor, dim: int, index: torch.Tensor, *, sparse_grad: bool = False) -> torch.Tensor:
    # sparse_grad only changes the backward pass
    out = torch.empty(index.shape, dtype=self.dtype, device=self.device)
    n = out.numel()
    if n == 0:
        return out
    if self.ndim == 0:
        src_strides, dim_stride = [0] * index.ndim, 0
    else:
        dim = dim % self.ndim
        src_strides = list(self.stride())
        dim_stride = src_strides[dim]
        src_strides[dim] = 0
    ndim, d, (s, t) = _collapse(index.shape, src_strides, index.stride())
    _gather_kernel[(triton.cdiv(n, BLOCK),)](
        self, out, index, n, dim_stride, *d[1:], *s, *t, NDIM=ndim, BLOCK=BLOCK
    )
    return out
