"""What each member of the extremum family says for itself: its task text, signatures and
reference function (written into its spec). Cases, inputs and the table of members are in
`extremum.py`; the kernels in `kernels/`."""

# ------------------------------------------------------------ amin

AMIN_TASK = """\
Minimum over dimensions: `aten::amin`.

`amin(self, dim=[], keepdim=False)` returns the smallest element over the dimensions listed
in `dim` (negative values count from the end; no dimension repeats). An empty `dim` means
every dimension. With `keepdim` the reduced dimensions stay with size 1, otherwise they are
removed. A 0-d `self` accepts `dim` [], [0] or [-1] and gives a 0-d result.

- The result has the dtype of `self`: float16, bfloat16, float32, integer types or bool
  (for bool, the minimum is a logical AND). Values are returned exactly, no arithmetic.
- NaN propagates: if any element of a reduced group is NaN, that output is NaN.
- `self` may have any strides (transposed or sliced views).
- Every reduced dimension must be non-empty (PyTorch raises otherwise); a kept dimension
  of size zero gives an empty result.
- Unlike `aten::min.dim`, no indices are returned.
- The result is a new tensor; `self` must not be modified.
- Required: the default overload. Left out: `amin.out`.
"""

AMIN_SIGNATURES = '''\
def amin(self: torch.Tensor, dim: list[int] = (), keepdim: bool = False) -> torch.Tensor:
    """aten::amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor"""
'''

AMIN_REFERENCES = '''\
def reference(self, dim=(), keepdim=False):
    return torch.ops.aten.amin.default(self, dim, keepdim)
'''


# ------------------------------------------------------------ argmax

ARGMAX_TASK = """\
Index of the largest element: `aten::argmax`.

`argmax(self, dim=None, keepdim=False)` returns int64 indices.

- With an integer `dim` (negative counts from the end), the result holds, for each
  position of the other dimensions, the index along `dim` of the largest element. With
  `keepdim` that dimension stays with size 1, otherwise it is removed.
- With `dim=None` the tensor is read as flattened in row-major (logical) order, whatever
  its strides, and the result is the flat index of the largest element: a 0-d tensor, or a
  tensor of shape [1, 1, ...] (one 1 per dimension of `self`) when `keepdim` is True.
- Ties: the smallest index wins (the first occurrence).
- NaN counts as larger than every number: if a group holds NaN, the index of its first NaN
  is returned.
- Inputs: float16, bfloat16, float32 and integer types (not bool), any strides. A 0-d
  `self` gives 0 (dim None, 0 or -1).
- The reduced dimension must be non-empty (PyTorch raises otherwise); other empty
  dimensions give an empty result.
- The result is a new tensor; `self` must not be modified.
- Required: the default overload. Left out: `argmax.out`.
"""

ARGMAX_SIGNATURES = '''\
def argmax(self: torch.Tensor, dim: int | None = None, keepdim: bool = False) -> torch.Tensor:
    """aten::argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor"""
'''

ARGMAX_REFERENCES = '''\
def reference(self, dim=None, keepdim=False):
    return torch.ops.aten.argmax.default(self, dim, keepdim)
'''
