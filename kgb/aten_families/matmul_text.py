"""What each member of the matmul family says for itself: its task text, signatures and
reference function (written into its spec). Cases, inputs and the table of members are in
`matmul.py`; the kernels in `kernels/`."""

# ------------------------------------------------------------ bmm

BMM_TASK = """\
Batched matrix product: `aten::bmm`.

`bmm(self, mat2)`: `self` is (B, M, K) and `mat2` is (B, K, N); the result is (B, M, N)
with out[b] = self[b] @ mat2[b]. No broadcasting: both batch sizes are equal.

- dtypes: float16, bfloat16 or float32, the same for both inputs; the result has that
  dtype. Accumulate in float32 and round once. float32 products must be computed at full
  float32 precision (no TF32): the tolerance is float32's.
- Inputs may have any strides: transposed matrices (column-major), sliced views, and
  batch strides of 0 (an expanded matrix shared by every batch).
- Empty sizes are allowed: K = 0 gives zeros; B, M or N = 0 gives an empty result.
- The result is a new tensor; the inputs must not be modified.
- Required: the default overload. Left out: `bmm.out`, and `bmm.dtype`/`bmm.dtype_out`
  (an output dtype other than the inputs'), which PyTorch implements only on CUDA.

Checked with the published tolerance, each output's atol at least 1e-4 sqrt(sum of the
squares of the products it adds): the order of the additions is free, and its rounding
follows the size of the products, not of a result that cancels.
"""

BMM_SIGNATURES = '''\
def bmm(self: torch.Tensor, mat2: torch.Tensor) -> torch.Tensor:
    """aten::bmm(Tensor self, Tensor mat2) -> Tensor"""
'''

BMM_REFERENCES = '''\
def reference(self, mat2):
    return torch.ops.aten.bmm.default(self, mat2)
'''


# ------------------------------------------------------------ linear

LINEAR_TASK = """\
Fully connected layer: `aten::linear`.

`linear(input, weight, bias=None)` = input @ weight.T + bias.
- `input` has shape (*, in_features) with any number of leading dimensions, or is 1-D
  (in_features,); `weight` is 2-D (out_features, in_features); `bias` is None or 1-D
  (out_features,). The result has shape (*, out_features) ((out_features,) for a 1-D input).
- dtypes: float16, bfloat16 or float32, the same for all operands; the result has that
  dtype. Accumulate in float32, add the bias in float32 and round once. float32 products
  must be computed at full float32 precision (no TF32): the tolerance is float32's.
- Operands may have any strides (a transposed input or a weight that is a transposed
  view). in_features = 0 gives the bias broadcast (or zeros); other empty sizes give empty
  results.
- The result is a new tensor; the inputs must not be modified.
- Required: the default overload. Left out: `linear.out`.

Checked with the published tolerance, each output's atol at least 1e-4 sqrt(sum of the
squares of the products it adds, and of the bias): the order of the additions is free, and its rounding
follows the size of the products, not of a result that cancels.
"""

LINEAR_SIGNATURES = '''\
def linear(input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor"""
'''

LINEAR_REFERENCES = '''\
def reference(input, weight, bias=None):
    return torch.ops.aten.linear.default(input, weight, bias)
'''


# ------------------------------------------------------------ matmul

MATMUL_TASK = """\
Matrix product with NumPy-style broadcasting: `aten::matmul`.

`matmul(self, other)` follows torch.matmul:
- both 1-D (K) and (K): the dot product, a 0-d tensor;
- 2-D (M, K) and 2-D (K, N): the matrix product (M, N);
- 1-D (K) and 2-D (K, N): (N) (the vector is a row, then that dimension is removed);
- 2-D (M, K) and 1-D (K): (M) (the vector is a column, then removed);
- either at least 3-D: a batched product. The last two dimensions are the matrices; all
  leading (batch) dimensions broadcast against each other (sizes equal or 1, missing
  leading dimensions count as 1). A 1-D operand is first made a matrix as above and that
  dimension is removed from the result. E.g. (2, 1, 40, 64) @ (3, 64, 50) -> (2, 3, 40, 50)
  and (5, 7, 300) @ (300) -> (5, 7).
- dtypes: float16, bfloat16 or float32, the same for both operands; the result has that
  dtype. Accumulate in float32 and round once. float32 products must be computed at full
  float32 precision (no TF32): the tolerance is float32's.
- Operands may have any strides (transposed or expanded views). K = 0 gives zeros; other
  empty sizes give empty results.
- The result is a new tensor; the inputs must not be modified.
- Required: the default overload. Left out: `matmul.out`.

Checked with the published tolerance, each output's atol at least 1e-4 sqrt(sum of the
squares of the products it adds): the order of the additions is free, and its rounding
follows the size of the products, not of a result that cancels.
"""

MATMUL_SIGNATURES = '''\
def matmul(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """aten::matmul(Tensor self, Tensor other) -> Tensor"""
'''

MATMUL_REFERENCES = '''\
def reference(self, other):
    return torch.ops.aten.matmul.default(self, other)
'''
