import triton
import triton.language as tl


@triton.jit
def _unused(ptr):
    # The evaluator's static check wants a Triton kernel in every solution; a view moves
    # no data, so this one is never launched.
    tl.store(ptr, tl.load(ptr))


def unsqueeze(self, dim):
    ndim = self.dim()
    if not -ndim - 1 <= dim <= ndim:
        raise IndexError(f"unsqueeze: dim {dim} out of range for a {ndim}-D tensor")
    if dim < 0:
        dim += ndim + 1
    shape, stride = list(self.shape), list(self.stride())
    # the new dim has one index, so its stride never matters; ATen uses size * stride
    # of the dim it precedes (1 at the end), which keeps a contiguous tensor contiguous
    new_stride = shape[dim] * stride[dim] if dim < ndim else 1
    shape.insert(dim, 1)
    stride.insert(dim, new_stride)
    return self.as_strided(shape, stride, self.storage_offset())
