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
    # dst[walk] = src[walk] converted to dst's dtype; S/T are the two tensors' strides.
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    so, do = _nd_offsets(i, D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5, T0, T1, T2, T3, T4, T5, NDIM)
    v = tl.load(src + so, mask=m)
    if dst.dtype.element_ty == tl.float16 or dst.dtype.element_ty == tl.bfloat16:
        v = v.to(tl.float32)  # ATen rounds integers (and doubles) to half through float32
    tl.store(dst + do, v.to(dst.dtype.element_ty), mask=m)


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



def _copy_into(dst, src):
    """dst[...] = src[...] (src broadcast to dst's shape), converting the dtype."""
    n = dst.numel()
    if n:
        src = src.expand(dst.shape)
        # walk the elements in dst's memory order, so that writes (and reads of a
        # same-layout src, e.g. a transposed clone) are coalesced
        order = sorted(range(dst.ndim), key=lambda k: -dst.stride(k))
        ndim, d, (s, t) = _collapse([dst.shape[k] for k in order], [src.stride(k) for k in order],
                                    [dst.stride(k) for k in order])
        _copy_kernel[(triton.cdiv(n, BLOCK),)](src, dst, n, *d[1:], *s, *t, NDIM=ndim, BLOCK=BLOCK)
    return dst


def _to_copy(self: torch.Tensor, *, dtype=None, layout=None, device=None, pin_memory=None,
             non_blocking: bool = False, memory_format=None) -> torch.Tensor:
    if device is not None and torch.device(device) != self.device:
        raise NotImplementedError("copies between devices are not a kernel's job")
    if layout not in (None, torch.strided):
        raise NotImplementedError("only strided tensors")
    # empty_like applies ATen's layout rule (preserve_format keeps dense strides)
    out = torch.empty_like(self, dtype=dtype or self.dtype,
                           memory_format=memory_format if memory_format is not None else torch.preserve_format)
    return _copy_into(out, self)
