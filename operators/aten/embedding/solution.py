import torch
import triton
import triton.language as tl

MAXD = 6  # dims a kernel walks after merging; more is refused



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
def _embedding_kernel(weight, out, idx, rows, dim, w_row, w_col, D1, D2, D3, D4, D5,
                      S0, S1, S2, S3, S4, S5, NDIM: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr):
    # A tile of BLOCK_R lookups x BLOCK_D features; idx is read through its own strides.
    r = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)
    c = tl.program_id(1).to(tl.int64) * BLOCK_D + tl.arange(0, BLOCK_D)
    rm = r < rows
    io, _ = _nd_offsets(r, D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5, S0, S1, S2, S3, S4, S5, NDIM)
    k = tl.load(idx + io, mask=rm, other=0).to(tl.int64)
    m = rm[:, None] & (c < dim)[None, :]
    v = tl.load(weight + k[:, None] * w_row + c[None, :] * w_col, mask=m)
    tl.store(out + r[:, None] * dim + c[None, :], v, mask=m)


def _collapse(shape, *strides):
    """Drop size-1 dims and merge neighbours contiguous in every stride list (same walk order)."""
    dims = []
    for k, size in enumerate(shape):
        if size == 1:
            continue
        st = [s[k] for s in strides]
        if dims and all(po == si * size for po, si in zip(dims[-1][1], st, strict=False)):
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



def embedding(weight: torch.Tensor, indices: torch.Tensor, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> torch.Tensor:
    # padding_idx, scale_grad_by_freq and sparse only change the backward pass
    dim = weight.shape[1]
    out = torch.empty((*indices.shape, dim), dtype=weight.dtype, device=weight.device)
    rows = indices.numel()
    if out.numel() == 0:
        return out
    ndim, d, (s,) = _collapse(indices.shape, indices.stride())
    block_d = min(triton.next_power_of_2(dim), 256)
    block_r = max(4096 // block_d, 1)
    grid = (triton.cdiv(rows, block_r), triton.cdiv(dim, block_d))
    _embedding_kernel[grid](
        weight, out, indices, rows, dim, weight.stride(0), weight.stride(1), *d[1:], *s,
        NDIM=ndim, BLOCK_R=block_r, BLOCK_D=block_d,
    )
    return out
