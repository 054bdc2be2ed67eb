"""Broadcast operands seen as (rows, last dim): what lets the loss and pairwise_distance
kernels read any broadcast and strides with two strides per operand."""

from kgb.aten_families.kernels.merge import _merge


def _broadcast(*tensors):
    """The broadcast shape and, per tensor, (tensor, row stride, column stride) of its
    (rows, last dim) view of that shape (copied only when the rows cannot be merged)."""
    n = max(max(t.ndim for t in tensors), 1)
    padded = [[1] * (n - t.ndim) + list(t.shape) for t in tensors]
    shape = [0 if 0 in sizes else max(sizes) for sizes in zip(*padded, strict=False)]
    views = []
    for t, s in zip(tensors, padded, strict=False):
        t = t.reshape(s).expand(shape)
        lead = _merge(t.shape[:-1], t.stride()[:-1])
        if lead is None:
            t = t.reshape(-1, shape[-1])
            lead = (None, t.stride(0))
        views.append((t, lead[1], t.stride(-1)))
    return shape, views
