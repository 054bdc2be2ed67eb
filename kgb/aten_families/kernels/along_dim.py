"""The strides of a tensor that an index tensor walks along one dim (scatter, gather): the
positions along `dim` come from the index values, so that dim's stride is taken out."""


def _along_dim(t, dim, ndim):
    """t's strides with 0 at `dim`, and the stride of `dim`; a 0-d t has nothing to step
    over: `ndim` zeros (the index tensor's dims) and 0."""
    if t.ndim == 0:
        return [0] * ndim, 0
    dim = dim % t.ndim
    strides = list(t.stride())
    step = strides[dim]
    strides[dim] = 0
    return strides, step
