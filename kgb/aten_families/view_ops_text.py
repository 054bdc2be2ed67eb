"""The view operators' words, member by member: the task text a model is shown (the
bullets every member states written once), the signatures, the spec's settings and the
reference, each as its hand-written spec had it."""

SHARES = """\
- The result shares `self`'s storage: nothing is computed, so this operator needs no
  Triton kernel (a solution may launch none); `self` must not be modified.
"""

CHECKED = """\
- Checked: shape, dtype, device, that the result shares `self`'s storage, its storage
  offset and its strides (except on dims of size 1), and its values.
"""

TASKS = {
    "expand": f"""\
Broadcast a tensor to a larger shape as a view: `aten::expand` (default overload).

Returns a view of `self` (no copy) with shape `size`, where size-1 dimensions are
repeated by giving them stride 0.

- `size` may have more dims than `self`: the new ones are added in front (they get
  stride 0). Aligning from the right, every dim of `self` must either equal the target
  size or be 1 (then broadcast with stride 0). A target entry of -1 keeps `self`'s size
  for that dim (not allowed for the new leading dims). `implicit` has no effect on the
  result.
- `self` can be 0-d, empty, non-contiguous (transposed, sliced) or have a storage offset;
  dims that are not broadcast keep their stride. Any dtype.
{SHARES}- Build the view from its sizes and strides yourself (with `as_strided`, for example):
  PyTorch's `expand`, `expand_as` and `broadcast_to` are not allowed here.
{CHECKED}
Required entry point: `expand`.
""",
    "expand_as": f"""\
Broadcast a tensor to another's shape as a view: `aten::expand_as` (default overload).

Returns a view of `self` (no copy) with the shape of `other`, where size-1 dimensions are
repeated by giving them stride 0. Only `other.shape` matters: its values, dtype, strides
and device play no part.

- `other` may have more dims than `self`: the new ones are added in front (they get
  stride 0). Aligning from the right, every dim of `self` must either equal `other`'s
  size or be 1 (then broadcast with stride 0).
- `self` can be 0-d, empty, non-contiguous (transposed, sliced) or have a storage offset;
  dims that are not broadcast keep their stride. Any dtype.
- The result shares `self`'s storage: nothing is computed, so this operator needs no
  Triton kernel (a solution may launch none); neither input may be modified.
- Build the view from its sizes and strides yourself (with `as_strided`, for example):
  PyTorch's `expand`, `expand_as` and `broadcast_to` are not allowed here.
{CHECKED}
Required entry point: `expand_as`.
""",
    "narrow": f"""\
A slice of one dimension as a view: `aten::narrow` (overloads `default` and `Tensor`).

Returns a view of `self` (no copy) that keeps indices `start .. start + length - 1` of
dimension `dim` and everything of the other dims: the same as `self[..., start:start +
length, ...]` along `dim`.

- `dim` may be negative (counted from the end). `start` may be negative, meaning
  `start + self.shape[dim]`; then `0 <= start` and `start + length <= self.shape[dim]`.
  `length` may be 0 (an empty view).
- `narrow_Tensor`: `start` is a 0-d integer tensor (on `self`'s device) instead of an
  int; reading it on the host (`.item()`) is fine.
- `self` can be non-contiguous (transposed, sliced) or have a storage offset; the result
  keeps all of `self`'s strides and moves the storage offset by `start * stride[dim]`.
  Any dtype.
{SHARES}- Build the view from its sizes, strides and offset yourself (with `as_strided`, for
  example): PyTorch's `narrow`, slicing (`aten::slice`), `split`, `split_with_sizes`,
  `unbind` and `select` are not allowed here.
{CHECKED}
Required entry points: `narrow` and `narrow_Tensor`.
""",
    "select": f"""\
One index of one dimension as a view: `aten::select` (overload `int`).

Returns a view of `self` (no copy) with dimension `dim` removed, holding the elements at
position `index` along it: the same as `self[..., index, ...]` along `dim`.

- `dim` may be negative (counted from the end); `index` may be negative, meaning
  `index + self.shape[dim]`; then `0 <= index < self.shape[dim]`.
- Selecting from a 1-D tensor gives a 0-d view. `self` can be non-contiguous (transposed,
  sliced) or have a storage offset; the result keeps the strides of the remaining dims
  and moves the storage offset by `index * stride[dim]`. Any dtype.
{SHARES}- Build the view from its sizes, strides and offset yourself (with `as_strided`, for
  example): PyTorch's `select`, slicing (`aten::slice`), `narrow` and `unbind` are not
  allowed here.
{CHECKED}
Required entry point: `select_int`. Not required: `select.Dimname` and `select.t` (a
Python list).
""",
    "t": f"""\
Transpose of a matrix as a view: `aten::t` (default overload).

Returns a view of `self` (no copy): for a 2-D tensor its transpose (sizes and strides
of the two dims swapped); for a 0-d or 1-D tensor a view with the same shape and
strides (nothing to swap). Tensors of more than 2 dims are an error (not tested).

- `self` can be non-contiguous (already transposed, sliced) or have a storage offset;
  the storage offset is kept. Any dtype.
{SHARES}- Build the view from its sizes and strides yourself (with `as_strided`, for example):
  PyTorch's `t`, `transpose` and `permute` are not allowed here.
{CHECKED}
Required entry point: `t`.
""",
    "unsqueeze": f"""\
Insert a dimension of size 1 as a view: `aten::unsqueeze` (default overload).

Returns a view of `self` (no copy) with a new dimension of size 1 at position `dim`; the
other dims keep their sizes and strides, and the storage offset is kept.

- `dim` is in `[-self.dim() - 1, self.dim()]`; a negative `dim` means
  `dim + self.dim() + 1` (so -1 appends a last dim). A 0-d tensor becomes shape [1].
- `self` can be non-contiguous (transposed, sliced), empty or have a storage offset. Any
  dtype. The new dim's stride is free (only strides of dims longer than 1 are checked).
{SHARES}- PyTorch's `unsqueeze` is not allowed here: build the view yourself (with `as_strided`
  or `view`, for example).
{CHECKED}
Required entry point: `unsqueeze`.
""",
}

SIGNATURES = {
    "expand": '''\
def expand(self: torch.Tensor, size: list[int], *, implicit: bool = False) -> torch.Tensor:
    """aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)"""
''',
    "expand_as": '''\
def expand_as(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """aten::expand_as(Tensor(a) self, Tensor other) -> Tensor(a)"""
''',
    "narrow": '''\
def narrow(self: torch.Tensor, dim: int, start: int, length: int) -> torch.Tensor:
    """aten::narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)"""


def narrow_Tensor(self: torch.Tensor, dim: int, start: torch.Tensor, length: int) -> torch.Tensor:
    """aten::narrow.Tensor(Tensor(a) self, int dim, Tensor start, SymInt length) -> Tensor(a)"""
''',
    "select": '''\
def select_int(self: torch.Tensor, dim: int, index: int) -> torch.Tensor:
    """aten::select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)"""
''',
    "t": '''\
def t(self: torch.Tensor) -> torch.Tensor:
    """aten::t(Tensor(a) self) -> Tensor(a)"""
''',
    "unsqueeze": '''\
def unsqueeze(self: torch.Tensor, dim: int) -> torch.Tensor:
    """aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a)"""
''',
}

EXTRA = {
    "expand": """\
KERNEL_REQUIRED = False

# The op's whole job is one of these calls: the candidate must work out the view itself.
DENIED_TORCH_OPS = ("aten::expand", "aten::expand_as", "aten::broadcast_to")
""",
    "expand_as": """\
KERNEL_REQUIRED = False

# The op's whole job is one of these calls: the candidate must work out the view itself.
DENIED_TORCH_OPS = ("aten::expand", "aten::expand_as", "aten::broadcast_to")
""",
    "narrow": """\
KERNEL_REQUIRED = False

# The op's whole job is one of these calls: the candidate must work out the view itself.
DENIED_TORCH_OPS = (
    "aten::narrow",
    "aten::slice",
    "aten::split",
    "aten::split_with_sizes",
    "aten::unbind",
    "aten::select",
)
""",
    "select": """\
KERNEL_REQUIRED = False

# The op's whole job is one of these calls: the candidate must work out the view itself.
DENIED_TORCH_OPS = ("aten::select", "aten::slice", "aten::narrow", "aten::unbind")
""",
    "t": """\
KERNEL_REQUIRED = False

# The op's whole job is one of these calls: the candidate must work out the view itself.
DENIED_TORCH_OPS = ("aten::t", "aten::transpose", "aten::permute")
""",
    "unsqueeze": """\
KERNEL_REQUIRED = False

# The op's whole job is this call: the candidate must work out the view itself.
DENIED_TORCH_OPS = ("aten::unsqueeze",)
""",
}

REFERENCES = {
    "expand": """\
reference = torch.ops.aten.expand.default
""",
    "expand_as": """\
reference = torch.ops.aten.expand_as.default
""",
    "narrow": """\
reference = {"narrow": torch.ops.aten.narrow.default, "narrow_Tensor": torch.ops.aten.narrow.Tensor}
""",
    "select": """\
reference = torch.ops.aten.select.int
""",
    "t": """\
reference = torch.ops.aten.t.default
""",
    "unsqueeze": """\
reference = torch.ops.aten.unsqueeze.default
""",
}
