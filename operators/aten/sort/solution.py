import math

import torch
import triton
import triton.language as tl

# Every element becomes one int64: (32-bit order key << 32) | its index in the row. The
# indices are unique, so sorting these ascending is a stable sort by key, and one integer
# compare does it. Rows are sorted in chunks of up to CHUNK elements by ranking (each
# element's place is the number of smaller ones in its chunk), then runs are merged
# pairwise (each element finds its place in the partner run by binary search). int64
# inputs need 64-bit keys: they are sorted twice, by the low then the high 32 bits (LSD).
# (tl.sort would do the chunk step, but Triton's CPU interpreter runs it about a thousand
# times slower than this ranking.)
CHUNK = 256
SUB = 64
_LOW32 = tl.constexpr(0xFFFFFFFF)
_PAD = tl.constexpr(2**63 - 1)  # sorts after every real element


@triton.jit
def _order_key(x, MODE: tl.constexpr, DESC: tl.constexpr):
    # int32 keys whose signed order is the sort order (reversed for descending)
    if MODE == 0:
        if x.dtype.is_floating():
            f = x.to(tl.float32)
            b = f.to(tl.int32, bitcast=True)
            key = tl.where(b < 0, b ^ 0x7FFFFFFF, b)  # negative floats: reverse magnitude
            key = tl.where(f == 0, 0, key)  # -0.0 ties with 0.0
            key = tl.where(f != f, 0x7FFFFFFF, key)  # every NaN after +inf
        else:
            key = x.to(tl.int32)
        if DESC:
            key = ~key
    else:
        v = x.to(tl.int64)
        if DESC:
            v = ~v
        if MODE == 1:  # low half, unsigned order mapped to signed order
            key = v.to(tl.int32) ^ -2147483648
        else:  # high half, signed
            key = (v >> 32).to(tl.int32)
    return key


@triton.jit
def _pairs(x_ptr, perm_ptr, row, o, k, ns, ok, N, sxo, sxn, sxk, MODE: tl.constexpr, DESC: tl.constexpr):
    # (key << 32 | n) for positions ns of row r = o * K + k of x seen as (O, N, K); MODE 2
    # reads element perm[r, n] (its low bits) instead of element n. _PAD where not ok.
    src = ns
    if MODE == 2:
        src = tl.load(perm_ptr + row * N + ns, mask=ok, other=0) & _LOW32
    x = tl.load(x_ptr + o * sxo + k * sxk + src * sxn, mask=ok, other=0)
    packed = (_order_key(x, MODE, DESC).to(tl.int64) << 32) | ns
    return tl.where(ok, packed, _PAD)


@triton.jit
def _chunk_sort(x_ptr, perm_ptr, dst_ptr, N, K, num_cb, sxo, sxn, sxk,
                MODE: tl.constexpr, DESC: tl.constexpr, BLOCK: tl.constexpr, SUB: tl.constexpr):
    # Sorts positions [c * BLOCK, (c + 1) * BLOCK) of one row: each element goes to
    # position (number of smaller elements in the chunk), counted SUB elements at a time.
    pid = tl.program_id(0).to(tl.int64)
    row = pid // num_cb
    start = (pid % num_cb) * BLOCK
    o = row // K
    k = row % K
    ns = start + tl.arange(0, BLOCK).to(tl.int64)
    ok = ns < N
    mine = _pairs(x_ptr, perm_ptr, row, o, k, ns, ok, N, sxo, sxn, sxk, MODE, DESC)
    rank = tl.zeros([BLOCK], tl.int32)
    for j in range(0, BLOCK, SUB):
        js = start + j + tl.arange(0, SUB).to(tl.int64)
        theirs = _pairs(x_ptr, perm_ptr, row, o, k, js, js < N, N, sxo, sxn, sxk, MODE, DESC)
        rank += tl.sum((theirs[None, :] < mine[:, None]).to(tl.int32), axis=1)
    tl.store(dst_ptr + row * N + start + rank, mine, mask=ok)


@triton.jit
def _merge_runs(src_ptr, dst_ptr, N, run, steps, num_cb, BLOCK: tl.constexpr):
    # Merge sorted runs [2j*run, (2j+1)*run) and [(2j+1)*run, (2j+2)*run) of every row.
    pid = tl.program_id(0).to(tl.int64)
    row = pid // num_cb
    p = (pid % num_cb) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    ok = p < N
    base = src_ptr + row * N
    v = tl.load(base + p, mask=ok, other=0)
    run_id = p // run
    pair = (run_id - run_id % 2) * run
    partner = tl.where(run_id % 2 == 0, pair + run, pair)
    plen = tl.minimum(tl.maximum(N - partner, 0), run)
    # count the partner's elements below v (all values differ: indices are unique)
    lo = tl.zeros([BLOCK], tl.int64)
    hi = plen
    for _ in range(steps):
        active = ok & (lo < hi)
        mid = (lo + hi) // 2
        pv = tl.load(base + partner + mid, mask=active, other=0)
        below = pv < v
        lo = tl.where(active & below, mid + 1, lo)
        hi = tl.where(active & ~below, mid, hi)
    tl.store(dst_ptr + row * N + pair + (p - run_id * run) + lo, v, mask=ok)


@triton.jit
def _gather_out(src_ptr, perm_ptr, x_ptr, val_ptr, idx_ptr, R, N, K, num_cb, sxo, sxn, sxk,
                HAS_PERM: tl.constexpr, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    # values[o, n, k] = x[o, idx, k] and indices[o, n, k] = idx, idx from the sorted pairs
    pid = tl.program_id(0).to(tl.int64)
    rows = (pid // num_cb) * ROWS + tl.arange(0, ROWS).to(tl.int64)
    ns = (pid % num_cb) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = (rows < R)[:, None] & (ns < N)[None, :]
    flat = rows[:, None] * N + ns[None, :]
    idx = tl.load(src_ptr + flat, mask=mask, other=0) & _LOW32
    if HAS_PERM:
        idx = tl.load(perm_ptr + rows[:, None] * N + idx, mask=mask, other=0) & _LOW32
    o = (rows // K)[:, None]
    k = (rows % K)[:, None]
    val = tl.load(x_ptr + o * sxo + k * sxk + idx * sxn, mask=mask)
    out = o * N * K + ns[None, :] * K + k
    tl.store(val_ptr + out, val, mask=mask)
    tl.store(idx_ptr + out, idx, mask=mask)


def _merge(sizes, strides):
    """(size, stride) of consecutive dims viewed as one, or None if they cannot be."""
    dims = [(n, s) for n, s in zip(sizes, strides, strict=False) if n != 1]
    for (_, s0), (n1, s1) in zip(dims, dims[1:], strict=False):
        if s0 != s1 * n1:
            return None
    return math.prod(n for n, _ in dims), (dims[-1][1] if dims else 1)


def _tile(R, N):
    block = min(triton.next_power_of_2(N), 1024)
    rows = max(1, min(triton.next_power_of_2(R), 2048 // block))
    return rows, block


def _sorted_pairs(x, layout, R, N, K, mode, descending, perm=None):
    """(R, N) int64 pairs (key << 32 | index), each row sorted ascending."""
    block = min(triton.next_power_of_2(N), CHUNK)
    num_cb = triton.cdiv(N, block)
    a = torch.empty((R, N), dtype=torch.int64, device=x.device)
    _chunk_sort[(R * num_cb,)](
        x, a if perm is None else perm, a, N, K, num_cb, *layout,
        MODE=mode, DESC=descending, BLOCK=block, SUB=min(block, SUB))
    run = block
    if run < N:
        b = torch.empty_like(a)
        num_mb = triton.cdiv(N, 1024)
        while run < N:
            _merge_runs[(R * num_mb,)](a, b, N, run, run.bit_length(), num_mb, BLOCK=1024)
            a, b = b, a
            run *= 2
    return a


def _sort_impl(self, dim, descending):
    x = self.reshape(1) if self.ndim == 0 else self
    dim = dim % x.ndim
    values = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    indices = torch.empty(self.shape, dtype=torch.int64, device=self.device)
    if x.numel() == 0:
        return values, indices
    outer = _merge(x.shape[:dim], x.stride()[:dim])
    inner = _merge(x.shape[dim + 1:], x.stride()[dim + 1:])
    if outer is None or inner is None:
        x = x.contiguous()
        outer = _merge(x.shape[:dim], x.stride()[:dim])
        inner = _merge(x.shape[dim + 1:], x.stride()[dim + 1:])
    (O, so), (K, sk) = outer, inner
    N, sn = x.shape[dim], x.stride(dim)
    R, layout = O * K, (so, sn, sk)
    if x.dtype == torch.int64:
        first = _sorted_pairs(x, layout, R, N, K, 1, descending)
        pairs = _sorted_pairs(x, layout, R, N, K, 2, descending, perm=first)
    else:
        first = None
        pairs = _sorted_pairs(x, layout, R, N, K, 0, descending)
    rows, block = _tile(R, N)
    num_cb = triton.cdiv(N, block)
    _gather_out[(triton.cdiv(R, rows) * num_cb,)](
        pairs, pairs if first is None else first, x, values, indices, R, N, K, num_cb, *layout,
        HAS_PERM=first is not None, ROWS=rows, BLOCK=block)
    return values, indices


def sort(self: torch.Tensor, dim: int = -1, descending: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    return _sort_impl(self, dim, descending)


def sort_stable(self: torch.Tensor, *, stable: bool | None, dim: int = -1,
                descending: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    return _sort_impl(self, dim, descending)  # always stable
