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
def _copy_kernel(src, dst, n, D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5,
                 T0, T1, T2, T3, T4, T5, NDIM: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    so, do = _nd_offsets(i, D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5, T0, T1, T2, T3, T4, T5, NDIM)
    tl.store(dst + do, tl.load(src + so, mask=m), mask=m)


@triton.jit
def _scatter_kernel(out, index, src, value, n, dim_stride, D1, D2, D3, D4, D5,
                    S0, S1, S2, S3, S4, S5, T0, T1, T2, T3, T4, T5, U0, U1, U2, U3, U4, U5,
                    NDIM: tl.constexpr, HAS_SRC: tl.constexpr, BLOCK: tl.constexpr):
    # Walk index's shape: S = out's strides with 0 at dim, T = index's, U = src's.
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    oo, io = _nd_offsets(i, D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5, T0, T1, T2, T3, T4, T5, NDIM)
    k = tl.load(index + io, mask=m, other=0).to(tl.int64)
    if HAS_SRC:
        _, uo = _nd_offsets(i, D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5, U0, U1, U2, U3, U4, U5, NDIM)
        v = tl.load(src + uo, mask=m)
    else:
        v = tl.zeros([BLOCK], tl.float32 if out.dtype.element_ty.is_floating() else tl.int64) + value
    tl.store(out + oo + k * dim_stride, v.to(out.dtype.element_ty), mask=m)


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



def _scatter(self, dim, index, src, value):
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    n = out.numel()
    if n == 0:
        return out
    ndim, d, (s, t) = _collapse(self.shape, self.stride(), out.stride())
    _copy_kernel[(triton.cdiv(n, BLOCK),)](self, out, n, *d[1:], *s, *t, NDIM=ndim, BLOCK=BLOCK)
    m = index.numel()
    if m == 0:
        return out
    if self.ndim == 0:
        out_strides, dim_stride = [0] * index.ndim, 0
    else:
        dim = dim % self.ndim
        out_strides = list(out.stride())
        dim_stride = out_strides[dim]
        out_strides[dim] = 0
    src_strides = list(src.stride()) if src is not None else [0] * index.ndim
    if src is not None and src.ndim == 0:
        src_strides = [0] * index.ndim
    ndim, d, (s, t, u) = _collapse(index.shape, out_strides, index.stride(), src_strides)
    if isinstance(value, bool):
        value = int(value)
    _scatter_kernel[(triton.cdiv(m, BLOCK),)](
        out, index, src if src is not None else out, 0 if value is None else value, m, dim_stride,
        *d[1:], *s, *t, *u, NDIM=ndim, HAS_SRC=src is not None, BLOCK=BLOCK,
    )
    return out


def scatter_src(self: torch.Tensor, dim: int, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    return _scatter(self, dim, index, src, None)


def scatter_value(self: torch.Tensor, dim: int, index: torch.Tensor, value) -> torch.Tensor:
    if self.dtype.is_floating_point:
        value = float(value)
    else:  # integers truncate toward zero, like the scalar cast ATen makes
        value = int(value)
    return _scatter(self, dim, index, None, value)
