"""Seeing a strided tensor as (O, N, K), N the dimensions a kernel works along and O, K
the ones before and after, each merged into one stride (copying the tensor only when they
cannot be): the launch of the kernels that reduce over several dimensions (sum, mean, amin,
argmax)."""

from kgb.aten_families.kernels.merge import _merge


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
