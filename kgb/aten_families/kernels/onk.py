"""Seeing a strided tensor as (O, N, K), N the dimensions a kernel works along and O, K
the ones before and after, each merged into one stride (copying the tensor only when they
cannot be): the launch of the kernels that reduce over several dimensions (sum, mean, amin,
argmax)."""

import triton
import triton.language as tl

from kgb.aten_families.kernels.merge import _merge


@triton.jit
def _onk_block(N, K, num_kb, chunk, sxo, sxk, y_split_stride, BLOCK_K: tl.constexpr):
    # this program's BLOCK_K columns of x seen as (O, N, K) and its split's range of N:
    # (x offsets of the columns, y offsets of their results, column mask, n_lo, n_hi)
    pid = tl.program_id(0).to(tl.int64)
    split = tl.program_id(1).to(tl.int64)
    o = pid // num_kb
    ks = (pid % num_kb) * BLOCK_K + tl.arange(0, BLOCK_K)
    n_lo = split * chunk
    out = split * y_split_stride + o * K + ks
    return o * sxo + ks * sxk, out, ks < K, n_lo, tl.minimum(n_lo + chunk, N)


def _as_onk(x, dims):
    """View x as (O, N, K) with the reduced dims as N: (x, [(O, so), (N, sn), (K, sk)])."""
    kept = [d for d in range(x.ndim) if d not in dims]
    if dims == list(range(dims[0], dims[-1] + 1)):
        cuts = (0, dims[0], dims[-1] + 1, x.ndim)
    else:  # reduced dims not adjacent: move them last
        x = x.permute(kept + dims)
        cuts = (0, len(kept), x.ndim, x.ndim)
    for _ in range(2):
        parts = [_merge(x.shape[a:b], x.stride()[a:b]) for a, b in zip(cuts, cuts[1:], strict=False)]
        if None not in parts:
            return x, parts
        x = x.contiguous()
    raise AssertionError("a contiguous tensor always merges")


def _plan(O, N, K, so, sk, wide, budget):
    """The launch of a reduction over N of x seen as (O, N, K), BLOCK_N x BLOCK_K elements
    (at most `budget`, `wide` columns when they are contiguous) per program:
    (O, K, so, sk, block_n, block_k, num_kb, splits, chunk). Few outputs and a long
    reduction split N over `splits` programs of `chunk` rows each, whose partial results
    the caller reduces again."""
    if K == 1:  # reduce the last dims: rows of the o axis become the k columns
        O, K, so, sk = 1, O, 0, so
    n = max(N, 1)
    if sk == 1 and K > 1:  # keep the contiguous axis wide for coalesced loads
        block_k = min(triton.next_power_of_2(K), wide)
        block_n = min(triton.next_power_of_2(n), max(1, budget // block_k))
    else:
        block_n = min(triton.next_power_of_2(n), budget // 2)
        block_k = min(triton.next_power_of_2(K), max(1, budget // block_n))
    num_kb = triton.cdiv(K, block_k)
    programs = O * num_kb
    splits = 1
    if programs < 256 and N > 4 * block_n:
        splits = min(triton.cdiv(N, 4 * block_n), triton.cdiv(1024, programs))
    chunk = triton.cdiv(triton.cdiv(n, splits), block_n) * block_n
    return O, K, so, sk, block_n, block_k, num_kb, triton.cdiv(n, chunk), chunk
