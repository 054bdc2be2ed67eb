"""The copies family's solutions, member by member: each one's own kernels and entry
points, pasted after the shared kernels (kernels/nd_walk.py, and copy_into.py and
along_dim.py where copies.TABLE says) into a self-contained solution.py. Only the
generator imports this module (copies.members), so that no engine, judge or candidate
process holds their text."""

SOLUTIONS = {
    "_to_copy": '''\
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
''',
    "clone": '''\
def clone(self: torch.Tensor, *, memory_format=None) -> torch.Tensor:
    # empty_like applies ATen's layout rule (preserve_format keeps dense strides)
    out = torch.empty_like(self, memory_format=memory_format if memory_format is not None else torch.preserve_format)
    return _copy_into(out, self)
''',
    "contiguous": '''\
def contiguous(self: torch.Tensor, *, memory_format=torch.contiguous_format) -> torch.Tensor:
    if self.is_contiguous(memory_format=memory_format):
        return self  # already laid out as asked: ATen returns self itself
    out = torch.empty_like(self, memory_format=memory_format)
    return _copy_into(out, self)
''',
    "copy_": '''\
def copy_(self: torch.Tensor, src: torch.Tensor, non_blocking: bool = False) -> torch.Tensor:
    if src.device != self.device:
        raise NotImplementedError("copies between devices are not a kernel's job")
    _copy_into(self, src)
    return self
''',
    "to": '''\
def _channels_last_like(x):
    """ATen's guess that x's strides are channels-last (is_channels_last_strides_2d/3d)."""
    order = {4: (1, 3, 2, 0), 5: (1, 4, 3, 2, 0)}.get(x.ndim)
    if order is None or x.stride(1) == 0:
        return False
    low = 0
    for d in order:
        if x.shape[d] == 0 or x.stride(d) < low or (d == 0 and low == x.stride(1)):
            return False
        low = x.stride(d) * (x.shape[d] if x.shape[d] > 1 else 1)
    return True


def _suggested_format(x):
    if _channels_last_like(x):
        return torch.channels_last if x.ndim == 4 else torch.channels_last_3d
    return torch.contiguous_format


def _to(x, dtype, device, copy, memory_format):
    dtype = dtype if dtype is not None else x.dtype
    if device is not None and torch.device(device) != x.device:
        raise NotImplementedError("copies between devices are not a kernel's job")
    fmt = memory_format if memory_format is not None else torch.preserve_format
    if dtype == x.dtype and not copy and (fmt == torch.preserve_format or fmt == _suggested_format(x)):
        return x  # nothing to change: `to` returns self itself
    out = torch.empty_like(x, dtype=dtype, memory_format=fmt)
    return _copy_into(out, x)


def to_dtype(self: torch.Tensor, dtype, non_blocking: bool = False, copy: bool = False, memory_format=None) -> torch.Tensor:
    return _to(self, dtype, None, copy, memory_format)


def to_device(self: torch.Tensor, device, dtype, non_blocking: bool = False, copy: bool = False,
              memory_format=None) -> torch.Tensor:
    return _to(self, dtype, device, copy, memory_format)


def to_other(self: torch.Tensor, other: torch.Tensor, non_blocking: bool = False, copy: bool = False,
             memory_format=None) -> torch.Tensor:
    return _to(self, other.dtype, other.device, copy, memory_format)


def to_dtype_layout(self: torch.Tensor, *, dtype=None, layout=None, device=None, pin_memory=None,
                    non_blocking: bool = False, copy: bool = False, memory_format=None) -> torch.Tensor:
    if layout not in (None, torch.strided):
        raise NotImplementedError("only strided tensors")
    return _to(self, dtype, device, copy, memory_format)
''',
    "cat": '''\
def cat(tensors: list, dim: int = 0) -> torch.Tensor:
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = torch.promote_types(dtype, t.dtype)
    # legacy rule: 1-D empty tensors are skipped whatever the other shapes are
    parts = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)]
    if not parts:
        return torch.empty((0,), dtype=dtype, device=tensors[0].device)
    dim = dim % parts[0].ndim
    shape = list(parts[0].shape)
    shape[dim] = sum(t.shape[dim] for t in parts)
    out = torch.empty(shape, dtype=dtype, device=parts[0].device)
    offset = 0
    for t in parts:
        _copy_into(out.narrow(dim, offset, t.shape[dim]), t)
        offset += t.shape[dim]
    return out
''',
    "stack": '''\
def stack(tensors: list, dim: int = 0) -> torch.Tensor:
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = torch.promote_types(dtype, t.dtype)
    shape = list(tensors[0].shape)
    dim = dim % (len(shape) + 1)
    shape.insert(dim, len(tensors))
    out = torch.empty(shape, dtype=dtype, device=tensors[0].device)
    for k, t in enumerate(tensors):
        _copy_into(out.select(dim, k), t)
    return out
''',
    "scatter": '''\
@triton.jit
def _scatter_kernel(out, index, src, value, n, dim_stride, D1, D2, D3, D4, D5,
                    S0, S1, S2, S3, S4, S5, T0, T1, T2, T3, T4, T5, U0, U1, U2, U3, U4, U5,
                    NDIM: tl.constexpr, HAS_SRC: tl.constexpr, BLOCK: tl.constexpr):
    # Walk index's shape: S = out's strides with 0 at dim, T = index's, U = src's.
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    oo, io = _nd_offsets(i, D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5, T0, T1, T2, T3, T4, T5, NDIM)
    k = tl.load(index + io, mask=m, other=0).to(tl.int64)
    if HAS_SRC:
        _, uo = _nd_offsets(i, D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5, U0, U1, U2, U3, U4, U5, NDIM)
        v = tl.load(src + uo, mask=m)
    else:
        v = tl.zeros([BLOCK], tl.float32 if out.dtype.element_ty.is_floating() else tl.int64) + value
    tl.store(out + oo + k * dim_stride, v.to(out.dtype.element_ty), mask=m)


def _scatter(self, dim, index, src, value):
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    if out.numel() == 0:
        return out
    _copy_into(out, self)
    m = index.numel()
    if m == 0:
        return out
    out_strides, dim_stride = _along_dim(out, dim, index.ndim)
    src_strides = list(src.stride()) if src is not None else [0] * index.ndim
    if src is not None and src.ndim == 0:
        src_strides = [0] * index.ndim
    ndim, d, (s, t, u) = _collapse(index.shape, out_strides, index.stride(), src_strides)
    if isinstance(value, bool):
        value = int(value)
    _scatter_kernel[(triton.cdiv(m, BLOCK),)](
        out, index, src if src is not None else out, 0 if value is None else value, m, dim_stride,
        *d[1:], *s, *t, *u, NDIM=ndim, HAS_SRC=src is not None, BLOCK=BLOCK,
    )
    return out


def scatter_src(self: torch.Tensor, dim: int, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    return _scatter(self, dim, index, src, None)


def scatter_value(self: torch.Tensor, dim: int, index: torch.Tensor, value) -> torch.Tensor:
    if self.dtype.is_floating_point:
        value = float(value)
    else:  # integers truncate toward zero, like the scalar cast ATen makes
        value = int(value)
    return _scatter(self, dim, index, None, value)
''',
    "gather": '''\
@triton.jit
def _gather_kernel(src, out, index, n, dim_stride, D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5,
                   T0, T1, T2, T3, T4, T5, NDIM: tl.constexpr, BLOCK: tl.constexpr):
    # Walk index's shape; out is contiguous in that shape. S: self's strides with 0 at dim,
    # T: index's strides. The position along dim is the loaded index value.
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    so, io = _nd_offsets(i, D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5, T0, T1, T2, T3, T4, T5, NDIM)
    k = tl.load(index + io, mask=m, other=0).to(tl.int64)
    tl.store(out + i, tl.load(src + so + k * dim_stride, mask=m), mask=m)


def gather(self: torch.Tensor, dim: int, index: torch.Tensor, *, sparse_grad: bool = False) -> torch.Tensor:
    # sparse_grad only changes the backward pass
    out = torch.empty(index.shape, dtype=self.dtype, device=self.device)
    n = out.numel()
    if n == 0:
        return out
    src_strides, dim_stride = _along_dim(self, dim, index.ndim)
    ndim, d, (s, t) = _collapse(index.shape, src_strides, index.stride())
    _gather_kernel[(triton.cdiv(n, BLOCK),)](
        self, out, index, n, dim_stride, *d[1:], *s, *t, NDIM=ndim, BLOCK=BLOCK
    )
    return out
''',
    "index_select": '''\
@triton.jit
def _select_kernel(src, out, index, n, inner, length, idx_stride, dim_stride,
                   D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5, T0, T1, T2, T3, T4, T5,
                   NDIM: tl.constexpr, BLOCK: tl.constexpr):
    # out walks the result in row-major order; along `dim` the source position comes from
    # index[j] (src strides hold 0 for that dim, its stride is added separately).
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    so, do = _nd_offsets(i, D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5, T0, T1, T2, T3, T4, T5, NDIM)
    j = (i // inner) % length
    k = tl.load(index + j * idx_stride, mask=m, other=0).to(tl.int64)
    tl.store(out + do, tl.load(src + so + k * dim_stride, mask=m), mask=m)


def index_select(self: torch.Tensor, dim: int, index: torch.Tensor) -> torch.Tensor:
    if self.ndim == 0:  # a 0-d tensor acts as one element along dim 0
        src = self.reshape(1)
        return index_select(src, 0, index.reshape(-1)).reshape(())
    dim = dim % self.ndim
    length = index.numel()
    shape = list(self.shape)
    shape[dim] = length
    out = torch.empty(shape, dtype=self.dtype, device=self.device)
    n = out.numel()
    if n == 0:
        return out
    inner = 1
    for s in shape[dim + 1:]:
        inner *= s
    src_strides = list(self.stride())
    src_strides[dim] = 0
    idx_stride = index.stride(0) if index.ndim else 0
    ndim, d, (s, t) = _collapse(shape, src_strides, out.stride())
    _select_kernel[(triton.cdiv(n, BLOCK),)](
        self, out, index, n, inner, length, idx_stride, self.stride(dim),
        *d[1:], *s, *t, NDIM=ndim, BLOCK=BLOCK,
    )
    return out
''',
    "rot90": '''\
@triton.jit
def _copy_kernel(src, dst, n, src_offset, D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5,
                 T0, T1, T2, T3, T4, T5, NDIM: tl.constexpr, BLOCK: tl.constexpr):
    # dst[walk] = src[src_offset + walk]; src strides may be negative (flipped dims).
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    so, do = _nd_offsets(i, D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5, T0, T1, T2, T3, T4, T5, NDIM)
    tl.store(dst + do, tl.load(src + src_offset + so, mask=m), mask=m)


def rot90(self: torch.Tensor, k: int = 1, dims: list = (0, 1)) -> torch.Tensor:
    if len(dims) != 2 or self.ndim < 2:
        raise RuntimeError("rot90 needs two dims and a tensor of at least 2 dimensions")
    d0, d1 = dims[0] % self.ndim, dims[1] % self.ndim
    if d0 == d1:
        raise RuntimeError("rot90 dims must differ")
    k %= 4
    # Describe the rotated tensor as a strided view of self's memory: flips negate a
    # stride and move the start to the last element, the quarter turns swap two dims.
    sizes, strides, offset = list(self.shape), list(self.stride()), 0
    flips = {0: [], 1: [d1], 2: [d0, d1], 3: [d0]}[k]
    for d in flips:
        offset += (sizes[d] - 1) * strides[d]
        strides[d] = -strides[d]
    if k % 2:
        sizes[d0], sizes[d1] = sizes[d1], sizes[d0]
        strides[d0], strides[d1] = strides[d1], strides[d0]
    out = torch.empty(sizes, dtype=self.dtype, device=self.device)
    n = out.numel()
    if n:
        ndim, d, (s, t) = _collapse(sizes, strides, out.stride())
        _copy_kernel[(triton.cdiv(n, BLOCK),)](self, out, n, offset, *d[1:], *s, *t, NDIM=ndim, BLOCK=BLOCK)
    return out
''',
    "select_backward": '''\
@triton.jit
def _select_bw_kernel(g, out, n, inner, size, index, D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5,
                      T0, T1, T2, T3, T4, T5, NDIM: tl.constexpr, BLOCK: tl.constexpr):
    # out (contiguous) is zero except at position `index` of the selected dim, where it
    # holds grad_output. S: grad_output's strides with 0 inserted for that dim.
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    go, _ = _nd_offsets(i, D1, D2, D3, D4, D5, S0, S1, S2, S3, S4, S5, T0, T1, T2, T3, T4, T5, NDIM)
    hit = ((i // inner) % size) == index
    v = tl.load(g + go, mask=m & hit, other=0)
    tl.store(out + i, v, mask=m)


def select_backward(grad_output: torch.Tensor, input_sizes: list, dim: int, index: int) -> torch.Tensor:
    sizes = list(input_sizes)
    dim = dim % len(sizes)
    index = index % sizes[dim] if sizes[dim] else index
    out = torch.empty(sizes, dtype=grad_output.dtype, device=grad_output.device)
    n = out.numel()
    if n == 0:
        return out
    inner = 1
    for s in sizes[dim + 1:]:
        inner *= s
    g_strides = list(grad_output.stride())
    g_strides.insert(dim, 0)
    ndim, d, (s, t) = _collapse(sizes, g_strides, out.stride())
    _select_bw_kernel[(triton.cdiv(n, BLOCK),)](
        grad_output, out, n, inner, sizes[dim], index, *d[1:], *s, *t, NDIM=ndim, BLOCK=BLOCK
    )
    return out
''',
}
