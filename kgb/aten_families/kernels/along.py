"""Seeing a strided tensor as (O, N, K) around one dimension N, O and K the dimensions
before and after it, each merged into one stride (copying the tensor only when they cannot
be): the launch of the kernels that work along one dimension (softmax, cumsum, renorm,
diff)."""

from kgb.aten_families.kernels.merge import _merge


def _along(x, dim):
    """x seen as (O, N, K) around the one dimension dim: (x, (O, so), (N, sn), (K, sk))."""
    outer = _merge(x.shape[:dim], x.stride()[:dim])
    inner = _merge(x.shape[dim + 1:], x.stride()[dim + 1:])
    if outer is None or inner is None:
        return _along(x.contiguous(), dim)
    return x, outer, (x.shape[dim], x.stride(dim)), inner
