"""What each member of the rowwise family says for itself: its task text, signatures and
reference function (written into its spec). Cases, inputs and the table of members are in
`rowwise.py`; the kernels in `kernels/`."""

# ------------------------------------------------------------ _softmax

SOFTMAX_TASK = """\
Softmax along one dimension, the internal ATen form: `aten::_softmax`.

out = exp(x - max(x, dim)) / sum(exp(x - max(x, dim)), dim), taken along `dim` (negative
values count from the end). Every other dimension is a batch dimension.

- `self` is a floating tensor (float16, bfloat16 or float32) of any rank, possibly
  non-contiguous (a transposed view, for example). A 0-d tensor is one row of length 1
  (its softmax is 1); `dim` is then 0 or -1. Tensors with zero elements give an empty
  result of the same shape.
- `half_to_float`: when False, the result has the dtype of `self`. When True, `self` is
  float16 and the result is float32: the softmax is computed in float32 and never
  rounded to float16 (this is the CUDA behaviour; PyTorch's CPU kernel lacks this path,
  so the reference computes it as the float32 softmax of the upcast input, and CUDA's
  refuses bfloat16 here, so no case passes bfloat16 with `half_to_float`).
  Half-precision inputs should be accumulated in float32 and rounded once at the end.
- A row containing -inf is valid; a row that is entirely -inf gives NaN, as in PyTorch.
- The result is a new tensor of the same shape (any strides); `self` must not be modified.
- Required: the default overload only. Left out: `_softmax.out`.
"""

SOFTMAX_SIGNATURES = '''\
def _softmax(self: torch.Tensor, dim: int, half_to_float: bool) -> torch.Tensor:
    """aten::_softmax(Tensor self, int dim, bool half_to_float) -> Tensor"""
'''

SOFTMAX_REFERENCES = '''\
def reference(self, dim, half_to_float):
    if half_to_float and self.device.type == "cpu":
        # The CPU kernel refuses half_to_float; CUDA computes the float32 softmax of the
        # upcast input, which is exactly this.
        return torch.ops.aten._softmax.default(self.float(), dim, False)
    return torch.ops.aten._softmax.default(self, dim, half_to_float)
'''


# ------------------------------------------------------------ cumsum

CUMSUM_TASK = """\
Cumulative sum along one dimension: `aten::cumsum`.

out[..., i, ...] = sum of self[..., j, ...] for j <= i, along `dim` (negative values count
from the end). Every other dimension is a batch dimension; the result has the shape of
`self`. A 0-d `self` (dim 0 or -1) gives a 0-d copy of its value.

- Result dtype: `dtype` when given (each element is first converted to `dtype`, e.g.
  float to int truncates); otherwise int64 for integer and bool inputs, and the input's
  dtype for floating inputs.
- Inputs: float16, bfloat16, float32, integer types and bool, any strides (transposed or
  sliced views). Accumulate half precision in float32, rounding each output once;
  integers in int64 (wrapping on overflow like PyTorch).
- Tensors with zero elements give an empty result.
- The result is a new tensor; `self` must not be modified.
- Required: the default overload. Left out: `cumsum.out`, the in-place `cumsum_` and the
  Dimname overloads.
"""

CUMSUM_SIGNATURES = '''\
def cumsum(self: torch.Tensor, dim: int, *, dtype: torch.dtype | None = None) -> torch.Tensor:
    """aten::cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor"""
'''

CUMSUM_REFERENCES = '''\
def reference(self, dim, *, dtype=None):
    out = dtype or (self.dtype if self.is_floating_point() else torch.int64)
    if out in (torch.float16, torch.bfloat16):
        # PyTorch's CUDA scan drifts from the float32 total for bfloat16 (on an H200: 608
        # where the float32 total rounds to 620, i.e. 3 bfloat16 steps); the task asks
        # for a float32 total rounded once, which is what the CPU kernel computes.
        return torch.ops.aten.cumsum.default(self.to(out), dim, dtype=torch.float32).to(out)
    return torch.ops.aten.cumsum.default(self, dim, dtype=dtype)
'''


# ------------------------------------------------------------ diff

DIFF_TASK = """\
n-th forward difference along one dimension: `aten::diff`.

`diff(self, n=1, dim=-1, prepend=None, append=None)`:
1. If given, `prepend` is concatenated before and `append` after `self` along `dim`
   (negative values count from the end). They have the same number of dimensions as
   `self` and the same sizes except along `dim`. The concatenation has the dtype that
   type promotion gives (torch.result_type of the three); in the cases here all three
   share one dtype.
2. The first difference out[i] = v[i + 1] - v[i] along `dim` is applied `n` times, each
   time to the previous result, so the length along `dim` shrinks by one per step (never
   below 0). `n = 0` returns a copy of `self` alone: ATen then ignores `prepend` and
   `append`.
- Each step is computed in the tensor's dtype, as PyTorch does: float16 and bfloat16 round
  every intermediate difference to their precision, integers wrap around (uint8 2 - 5 is
  253), and for bool the difference is logical xor (v[i + 1] != v[i]).
- `self` has at least one dimension and may have any strides. The result is a new
  contiguous-or-not tensor of the right shape; the inputs must not be modified.
- Required: the default overload. Left out: `diff.out`.
"""

DIFF_SIGNATURES = '''\
def diff(self: torch.Tensor, n: int = 1, dim: int = -1, prepend: torch.Tensor | None = None, append: torch.Tensor | None = None) -> torch.Tensor:
    """aten::diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) -> Tensor"""
'''

DIFF_REFERENCES = '''\
def reference(self, n=1, dim=-1, prepend=None, append=None):
    return torch.ops.aten.diff.default(self, n, dim, prepend, append)
'''


# ------------------------------------------------------------ pairwise_distance

PAIRWISE_DISTANCE_TASK = """\
Distance between paired vectors: `aten::pairwise_distance`.

`pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False)` = the p-norm of
(x1 - x2 + eps) over the last dimension, where x1 and x2 broadcast against each other
(NumPy rules: trailing dimensions aligned, sizes equal or 1, missing leading dimensions
count as 1). The last dimension of the broadcast shape is reduced; with `keepdim` it stays
with size 1, otherwise it is removed. A 0-d pair gives a 0-d result.

- Norms: p = 2 is sqrt(sum d^2), p = 1 is sum |d|, p = inf is max |d|, p = 0 counts the
  non-zero d, any other p > 0 is (sum |d|^p)^(1/p), with d = x1 - x2 + eps.
- dtypes: float16, bfloat16 or float32, the same for both inputs; the result has that
  dtype. As in PyTorch, x1 - x2 and then + eps are each rounded to the input dtype; the
  norm is accumulated in float32 and rounded once.
- Inputs may have any strides. An empty last dimension gives zeros; other empty
  dimensions give an empty result.
- The result is a new tensor; the inputs must not be modified.
- Required: the default overload (it has no `out=` variant).
"""

PAIRWISE_DISTANCE_SIGNATURES = '''\
def pairwise_distance(x1: torch.Tensor, x2: torch.Tensor, p: float = 2.0, eps: float = 1e-06, keepdim: bool = False) -> torch.Tensor:
    """aten::pairwise_distance(Tensor x1, Tensor x2, float p=2., float eps=9.9999999999999995e-07, bool keepdim=False) -> Tensor"""
'''

PAIRWISE_DISTANCE_REFERENCES = '''\
def reference(x1, x2, p=2.0, eps=1e-06, keepdim=False):
    return torch.ops.aten.pairwise_distance.default(x1, x2, p, eps, keepdim)
'''


# ------------------------------------------------------------ renorm

RENORM_TASK = """\
Limit the p-norm of sub-tensors: `aten::renorm`.

`renorm(self, p, dim, maxnorm)`: for each index i along `dim` (negative values count from
the end), the sub-tensor self.select(dim, i) is one slice. Its p-norm over all of its
elements, norm_i = (sum |x|^p)^(1/p) (max |x| when p is inf), is computed in float32; then
  factor_i = maxnorm / (norm_i + 1e-7) if norm_i > maxnorm else 1.0
and out = self * factor_i on slice i. As in PyTorch, factor_i is rounded to the dtype of
`self` first and the product is rounded once to that dtype.

- `self` is float16, bfloat16 or float32 with at least 2 dimensions and any strides.
  `p` is a Python number > 0 or float('inf'); `maxnorm` is a Python number >= 0.
- Slices whose norm does not exceed `maxnorm` are copied unchanged. Empty tensors give
  empty results.
- The result is a new tensor of the shape and dtype of `self`; `self` must not be
  modified.
- Required: the default overload. Left out: `renorm.out` and the in-place `renorm_`.
"""

RENORM_SIGNATURES = '''\
def renorm(self: torch.Tensor, p: float, dim: int, maxnorm: float) -> torch.Tensor:
    """aten::renorm(Tensor self, Scalar p, int dim, Scalar maxnorm) -> Tensor"""
'''

RENORM_REFERENCES = '''\
def reference(self, p, dim, maxnorm):
    return torch.ops.aten.renorm.default(self, p, dim, maxnorm)
'''
