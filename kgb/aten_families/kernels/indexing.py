"""Advanced indexing as the indexing family's solutions do it (index, index_put_,
_index_put_impl_): resolve bool masks to coordinates, broadcast the index tensors, lay out
the indexed shape and compute every index position's element offset into `self`. Every
solution of the family carries this text (a candidate cannot import it)."""

import torch
import triton
import triton.language as tl

from kgb.aten_families.kernels.nd_walk import BLOCK, MAXD, _collapse, _nd_offsets


@triton.jit
def _add_index_kernel(base, idx, n, size, stride, D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5,
                      NDIM: tl.constexpr, BLOCK: tl.constexpr):
    # base[p] += wrap(idx[p]) * stride, idx read through its broadcast strides.
    p = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = p < n
    off, _ = _nd_offsets(p, D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5, S0, S1, S2, S3, S4, S5, NDIM)
    k = tl.load(idx + off, mask=m, other=0).to(tl.int64)
    k = tl.where(k < 0, k + size, k)
    acc = tl.load(base + p, mask=m, other=0)
    tl.store(base + p, acc + k * stride, mask=m)


@triton.jit
def _count_kernel(mask, counts, n, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(mask + i, mask=i < n, other=0) != 0
    tl.store(counts + tl.program_id(0), tl.sum(v.to(tl.int64), 0))


@triton.jit
def _scan_kernel(counts, starts, nblocks, BLOCK: tl.constexpr):
    # One program: exclusive prefix sum of the block counts; starts[nblocks] = total.
    total = tl.zeros([], tl.int64)
    for s in range(0, nblocks, BLOCK):
        j = s + tl.arange(0, BLOCK)
        c = tl.load(counts + j, mask=j < nblocks, other=0)
        inc = tl.cumsum(c, 0)
        tl.store(starts + j, total + inc - c, mask=j < nblocks)
        total += tl.sum(c, 0)
    tl.store(starts + nblocks, total)


@triton.jit
def _coords_kernel(mask, starts, coords, n, nnz, D1, D2, D3, D4, D5, NDIM: tl.constexpr, BLOCK: tl.constexpr):
    # Row-major coordinates of every nonzero of a contiguous mask: coords[d, rank].
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    v = (tl.load(mask + i, mask=i < n, other=0) != 0).to(tl.int64)
    pos = tl.load(starts + tl.program_id(0)) + tl.cumsum(v, 0) - 1
    keep = v != 0
    r = i
    if NDIM > 5:
        tl.store(coords + 5 * nnz + pos, r % D5, mask=keep)
        r = r // D5
    if NDIM > 4:
        tl.store(coords + 4 * nnz + pos, r % D4, mask=keep)
        r = r // D4
    if NDIM > 3:
        tl.store(coords + 3 * nnz + pos, r % D3, mask=keep)
        r = r // D3
    if NDIM > 2:
        tl.store(coords + 2 * nnz + pos, r % D2, mask=keep)
        r = r // D2
    if NDIM > 1:
        tl.store(coords + nnz + pos, r % D1, mask=keep)
        r = r // D1
    tl.store(coords + pos, r, mask=keep)


@triton.jit
def _copy_kernel(src, dst, n, D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5,
                 T0, T1, T2, T3, T4, T5, NDIM: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    so, do = _nd_offsets(i, D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5, T0, T1, T2, T3, T4, T5, NDIM)
    tl.store(dst + do, tl.load(src + so, mask=m).to(dst.dtype.element_ty), mask=m)


def _launch_nd(kernel, ptrs, n, shape, strides_a, strides_b, *extra):
    ndim, d, (s, t) = _collapse(shape, strides_a, strides_b)
    kernel[(triton.cdiv(n, BLOCK),)](*ptrs, n, *extra, *d[1:], *s, *t, NDIM=ndim, BLOCK=BLOCK)


def _contiguous(t):
    if t.is_contiguous():
        return t
    out = torch.empty(t.shape, dtype=t.dtype, device=t.device)
    _launch_nd(_copy_kernel, (t, out), t.numel(), t.shape, t.stride(), out.stride())
    return out


def _nonzero(mask):
    """The nonzero coordinates of a bool mask, one int64 vector per mask dim."""
    mask = _contiguous(mask)
    n = mask.numel()
    nblocks = max(triton.cdiv(n, BLOCK), 1)
    counts = torch.empty(nblocks, dtype=torch.int64, device=mask.device)
    starts = torch.empty(nblocks + 1, dtype=torch.int64, device=mask.device)
    _count_kernel[(nblocks,)](mask, counts, n, BLOCK=BLOCK)
    _scan_kernel[(1,)](counts, starts, nblocks, BLOCK=1024)
    nnz = int(starts[nblocks].item())  # the result's shape depends on it: one host sync
    coords = torch.empty((max(mask.ndim, 1), nnz), dtype=torch.int64, device=mask.device)
    if nnz and mask.ndim:
        if mask.ndim > MAXD:
            raise NotImplementedError("mask with too many dimensions")
        d = list(mask.shape) + [1] * (MAXD - mask.ndim)
        _coords_kernel[(nblocks,)](mask, starts, coords, n, nnz, *d[1:], NDIM=mask.ndim, BLOCK=BLOCK)
    return [coords[k] for k in range(mask.ndim)]


def _plan(self, indices):
    """Resolve masks, broadcast the index tensors and lay out the result.

    Returns (dims, idx, bshape, rest, out_shape, perm): the indexed dims of self with their
    index tensors expanded to the broadcast shape bshape, the other dims of self in order,
    the result shape, and the permutation taking the result to [bshape..., rest...].
    """
    dims, idx = [], []
    d = 0
    for t in indices:
        if t is None:
            d += 1
        elif t.dtype in (torch.bool, torch.uint8):
            for k, c in enumerate(_nonzero(t)):
                dims.append(d + k)
                idx.append(c)
            d += t.ndim
        else:
            dims.append(d)
            idx.append(t)
            d += 1
    if d > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
    bshape = torch.broadcast_shapes(*[t.shape for t in idx])
    idx = [t.expand(bshape) for t in idx]
    rest = [k for k in range(self.ndim) if k not in dims]
    nb = len(bshape)
    if dims == list(range(dims[0], dims[-1] + 1)):
        f = dims[0]
        out_shape = [*self.shape[:f], *bshape, *self.shape[dims[-1] + 1:]]
        perm = [*range(f, f + nb), *range(f), *range(f + nb, len(out_shape))]
    else:
        out_shape = [*bshape, *[self.shape[k] for k in rest]]
        perm = list(range(len(out_shape)))
    return dims, idx, list(bshape), rest, out_shape, perm


def _base_offsets(self, dims, idx, bshape):
    """Element offset into self of every index position (flattened broadcast shape)."""
    p = 1
    for s in bshape:
        p *= s
    base = torch.zeros(p, dtype=torch.int64, device=self.device)
    if p:
        for d, t in zip(dims, idx, strict=True):
            ndim, dd, (s,) = _collapse(t.shape, t.stride())
            _add_index_kernel[(triton.cdiv(p, BLOCK),)](
                base, t, p, self.shape[d], self.stride(d), *dd[1:], *s, NDIM=ndim, BLOCK=BLOCK
            )
    return base, p
