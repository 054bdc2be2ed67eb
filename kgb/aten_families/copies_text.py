"""The copies family's words, member by member: the task text a model is shown, each as
its hand-written spec had it. The signatures, the spec's settings and the reference functions
are in copies_code.py; copies.py reads them all from here."""

from kgb.aten_families.copies_code import (  # noqa: F401 - copies.py reads them from here
    EXTRA,
    REFERENCES,
    SIGNATURES,
)

TASKS = {
    "_to_copy": """\
Copy a tensor, converting its dtype and/or layout: `aten::_to_copy` (what `.to()` runs
whenever it has to copy).

Returns a new tensor (never `self` nor a view of it) with self's shape and values,
converted to `dtype` when given (else self's dtype). Conversions follow C casts as ATen
does them: float to integer truncates toward zero (the cases stay in range and avoid
NaN/inf there); to bool is `x != 0`; bool is 0/1; integers and float64 go to float16 and
bfloat16 through float32 (round to nearest even at each step); integer narrowing wraps.
Dtypes: float32, float16, bfloat16, float64, int64, int32, int8, uint8, bool.

Layout of the result (checked: every dimension of size > 1 must have the reference's
stride):
- memory_format None or torch.preserve_format: if `self` is non-overlapping and dense
  (e.g. contiguous, transposed, channels-last) the result has exactly self's strides;
  otherwise (a sliced view with gaps) it is contiguous, or channels-last when self's
  strides look channels-last (the rule of torch.empty_like).
- torch.contiguous_format / torch.channels_last: the result is laid out that way.
`layout` is None or torch.strided; `device` is None or self's own device (cross-device
copies are not part of this task); `pin_memory` and `non_blocking` change nothing here.
`self` may be 0-d, empty or non-contiguous and must not be modified. This is pure data
movement: PyTorch's copy ops (`copy_`, `clone`, `contiguous`, `_to_copy`) are not allowed;
the data must be moved by Triton kernels.

Required overload: `_to_copy` (default). Left out: `_to_copy.out`.
""",
    "clone": """\
Copy a tensor into new memory: `aten::clone`.

Returns a new tensor (never sharing self's memory) with self's shape, dtype and values,
bit for bit (the comparison is exact, NaN included). Its layout is checked on every
dimension of size > 1:
- memory_format None or torch.preserve_format: if `self` is non-overlapping and dense
  (contiguous, transposed, permuted, channels-last...) the copy has exactly self's
  strides; otherwise (a view with gaps, or expanded with stride 0) it is contiguous, or
  channels-last when self's strides look channels-last (the rule of torch.empty_like);
- torch.contiguous_format, torch.channels_last (4-D): laid out that way.
Any dtype (float32, float16, bfloat16, float64, integers, bool); `self` may be 0-d, empty,
or any strided view, and must not be modified. The whole job is the copy, so PyTorch's
copy ops (`clone`, `copy_`, `contiguous`, `_to_copy`) are not allowed: the data must be
moved by a Triton kernel.

Required overload: `clone` (default). Left out: `clone.out`.
""",
    "contiguous": """\
Make a tensor contiguous in a memory format: `aten::contiguous`.

If `self` is already contiguous in `memory_format` (self.is_contiguous(memory_format=...)
is True), the result is `self` itself: the same tensor object, no copy. Otherwise it is a
new tensor with self's shape, dtype and values (bit for bit: the comparison is exact, NaN
included), laid out contiguously in that format: row-major for torch.contiguous_format
(the default), NHWC order for torch.channels_last (4-D tensors). Strides are checked on
every dimension of size > 1.
Any dtype (float32, float16, bfloat16, float64, integers, bool); `self` may be 0-d,
empty, or any strided view (transposed, permuted, sliced with gaps, expanded), and must
not be modified. Because of the first case no kernel launch is required of the op as a
whole (KERNEL_REQUIRED is off), but every copy must be done by a Triton kernel: PyTorch's
copy ops (`contiguous`, `clone`, `copy_`, `_to_copy`) are not allowed.

Required overload: `contiguous` (default).
""",
    "copy_": """\
Copy values into an existing tensor, in place: `aten::copy_` (default overload).

Writes src's values into `self` and returns `self` itself (the same tensor object).
- `src` broadcasts to self's shape (e.g. a row copied into every row, a 0-d tensor into
  every element); self's shape never changes.
- dtypes may differ: each value is converted to self's dtype as C casts do in ATen:
  float to integer truncates toward zero (the cases stay in range and avoid NaN/inf),
  to bool is `x != 0`, bool is 0/1, integers and float64 go to float16/bfloat16 through
  float32 (round to nearest even at each step).
- `self` may be any non-overlapping strided view (transposed, channels-last, a slice with
  gaps): only the elements it views are written. `src` may be any strided view too; it
  lives on self's device (cross-device copies are not part of this task) and does not
  overlap self. `non_blocking` changes nothing here. Dtypes: float32, float16, bfloat16,
  float64, int64, int32, uint8, bool. 0-d and empty tensors are valid.
`src` must not be modified. The whole job is the copy, so PyTorch's copy ops (`copy_`,
`clone`, `contiguous`, `_to_copy`) are not allowed: the data must be moved by a Triton
kernel.

Required overload: `copy_` (default). Left out: `copy_.Tensor` (the same op under another
name), and `copy_.int` / `copy_.float` (TorchScript fills from a Python scalar).
""",
    "to": """\
Convert a tensor's dtype and/or layout, or return it unchanged: `aten::to` (the
`dtype`, `device`, `other` and `dtype_layout` overloads).

The target dtype is `dtype` (to.dtype, to.device; optional in to.dtype_layout, where None
keeps self's) or `other.dtype` (to.other, whose target device is other's). The device
argument is None or self's own device in every case (cross-device copies are not part of
this task); `layout` is None or torch.strided; `non_blocking` and `pin_memory` change
nothing here.

`to` returns `self` itself (the same tensor object, no copy, no kernel) when the dtype
already matches, `copy` is False, and `memory_format` is None, torch.preserve_format, or
the format self's strides already suggest (ATen's suggest_memory_format: channels_last for
a 4-D tensor whose strides look channels-last, channels_last_3d likewise in 5-D,
contiguous_format otherwise, so a transposed matrix with memory_format=contiguous_format
is returned as is). Because of this case no kernel launch is required of the op as a
whole (KERNEL_REQUIRED is off), but every conversion or copy must be done by a Triton
kernel: PyTorch's copy ops (`copy_`, `clone`, `contiguous`, `_to_copy`) are not allowed.

Otherwise it returns a new tensor with self's values converted to the target dtype, as
`_to_copy` does: float to integer truncates toward zero (cases stay in range), to bool is
`x != 0`, bool is 0/1, integers and float64 go to float16/bfloat16 through float32. Its
layout (checked on every dimension of size > 1): with memory_format None/preserve, self's
strides when self is non-overlapping and dense, else contiguous (the rule of
torch.empty_like); with an explicit memory_format, that format. `self` (any of float32,
float16, bfloat16, float64, int64, int32, uint8, bool; 0-d, empty or non-contiguous) must
not be modified.

Required overloads: `to.dtype`, `to.device`, `to.other`, `to.dtype_layout`. Left out: the
TorchScript-only `to.prim_Device`, `to.prim_dtype`, `to.prim_other`.
""",
    "cat": """\
Concatenate tensors along a dimension: `aten::cat`.

The result joins `tensors` in order along `dim`: its size there is the sum of their sizes,
and all other sizes are the common ones. Inputs:
- a non-empty list of tensors with the same number of dimensions (>= 1) and equal sizes
  except along `dim`; `dim` may be negative. Any input may be empty along `dim`.
- legacy rule: a 1-D tensor of shape (0,) is ignored whatever the other shapes are.
- dtypes may differ: the result has the promoted dtype (as torch.promote_types over all
  inputs: e.g. float16 with float32 gives float32, int64 with bfloat16 gives bfloat16,
  bool with int32 gives int32); every value is converted to it.
- inputs may be non-contiguous views (transposed, sliced) and the same tensor may appear
  several times.
The result is a new tensor (its strides are free); inputs must not be modified.
This is pure data movement: PyTorch's own copy ops (`copy_`, `clone`, `contiguous`) are
not allowed; the data must be moved by Triton kernels.

Required overload: `cat` (default). Left out: `cat.out` and the Dimname overloads.
""",
    "stack": """\
Stack tensors along a new dimension: `aten::stack`.

All `tensors` have the same shape S; the result has shape S with len(tensors) inserted at
position `dim`, and result.select(dim, k) equals tensors[k]. `dim` is in
[-(len(S) + 1), len(S)]; negative values count from the end of the result's shape.
- dtypes may differ: the result has the promoted dtype (as torch.promote_types over all
  inputs, e.g. float16 with float32 gives float32) and every value is converted to it.
- inputs may be 0-d (the result is then 1-D), empty, or non-contiguous views; the same
  tensor may appear several times.
The result is a new tensor (its strides are free); inputs must not be modified.
This is pure data movement: PyTorch's own copy ops (`copy_`, `clone`, `contiguous`,
`cat`) are not allowed; the data must be moved by Triton kernels.

Required overload: `stack` (default). Left out: `stack.out`.
""",
    "scatter": """\
Write values at positions given along one dimension: `aten::scatter` (`src` and `value`).

The result is a copy of `self` in which, for every position c of `index`,
out[c with its `dim` coordinate replaced by index[c]] = src[c]  (scatter.src), or = value
(scatter.value). In 3-D with dim=0: out[index[i][j][k]][j][k] = src[i][j][k].
- `index` is an int64 tensor with the same number of dimensions as `self` (and `src`),
  with index.size(d) <= self.size(d) for d != dim and index.size(d) <= src.size(d) for
  every d: only the leading part of `src` of index's shape is read. Its values are in
  [0, self.size(dim)). When two positions write the same element, which one wins is
  unspecified; the cases never do that (a permutation along dim).
- `src` has self's dtype. `value` is a Python scalar converted to self's dtype (a float
  into an integer tensor truncates toward zero); the cases pass floats for floating
  tensors, ints for integer tensors and bools for bool tensors.
- `dim` may be negative. Tensors may be non-contiguous views. 0-d tensors are valid, as
  is an empty `index` (the result is then a copy of `self`). Any dtype.
- The result is a new tensor with self's shape and dtype (its strides are free);
  `self`, `index` and `src` must not be modified.

Required overloads: `scatter.src`, `scatter.value`. Left out: the deprecated `reduce=`
overloads (`scatter.reduce`, `scatter.value_reduce`; `scatter_reduce` is its own op), the
`out=` variants and the Dimname overloads.
""",
    "gather": """\
Gather values along one dimension: `aten::gather`.

For a result of index's shape: out[c] = self[c with its `dim` coordinate replaced by
index[c]]. In 3-D with dim=1: out[i][j][k] = self[i][index[i][j][k]][k].
- `index` is an int64 tensor with the same number of dimensions as `self`;
  index.size(d) <= self.size(d) for every d != dim (only that leading part of `self` is
  read); its values are in [0, self.size(dim)), may repeat, in any order. It may be a
  non-contiguous view (transposed, sliced, or expanded with stride 0).
- `dim` may be negative. The result has index's shape and self's dtype (floating,
  integer or bool) and is a new tensor; `self` and `index` must not be modified.
- `self` may be non-contiguous. 0-d `self` with 0-d `index` is valid (index value 0).
  An empty `index` gives an empty result.
- `sparse_grad` only affects the backward pass; it changes nothing here.

Required overload: `gather` (default). Left out: `gather.out` and the Dimname overload.
""",
    "index_select": """\
Select slices along one dimension: `aten::index_select`.

out = self with dimension `dim` replaced by the positions in `index`: for every j,
out[..., j, ...] = self[..., index[j], ...] (the `...` are the other dimensions, unchanged).
- `index` is a 1-D (or 0-d, meaning one element) int64 or int32 tensor; its values are in
  [0, self.size(dim)) and may repeat and come in any order. It may be a strided view.
- `dim` may be negative (counted from the end). The result has self's shape except
  size(dim) = index.numel(), and self's dtype (any dtype: floating, integer, bool).
- `self` may be non-contiguous (a transposed view). A 0-d `self` acts as a 1-element
  vector along dim 0 and gives a 0-d result. Empty `index` or empty `self` give an empty
  result.
- The result is a new tensor; `self` and `index` must not be modified.

Required overload: `index_select` (default). Left out: `index_select.out` and the
Dimname overload.
""",
    "rot90": """\
Rotate by quarter turns in the plane of two dimensions: `aten::rot90`.

Rotates `self` by k * 90 degrees, from the direction of dims[0] towards dims[1]. For a
matrix with dims=[0, 1] and k=1 (counter-clockwise as printed): out[i][j] =
self[j][m - 1 - i] where m = self.size(1), and out has shape (self.size(1), self.size(0)).
In general, with d0, d1 = dims:
- k % 4 == 1: flip along d1, then swap d0 and d1;
- k % 4 == 2: flip along d0 and d1 (shape unchanged);
- k % 4 == 3: flip along d0, then swap d0 and d1;
- k % 4 == 0: an unchanged copy.
k may be any integer (negative turns the other way: k is taken modulo 4). dims are two
different dimensions (negative values count from the end); `self` has at least 2
dimensions, any dtype, and may be non-contiguous or empty. The result is always a new
tensor (never a view of `self`; its strides are free); `self` must not be modified.
This is pure data movement: PyTorch's copy ops (`copy_`, `clone`, `contiguous`) and
`flip` are not allowed; the data must be moved by Triton kernels.

Required overload: `rot90` (default). Left out: `rot90.out`.
""",
    "select_backward": """\
Gradient of `select`: `aten::select_backward`.

The forward pass `x.select(dim, index)` drops dimension `dim` of a tensor of shape
`input_sizes` by taking position `index` along it. This op returns a tensor of shape
`input_sizes`, zero everywhere except the selected slice, which holds `grad_output`:
  out.select(dim, index) == grad_output, and every other element is 0.
- `grad_output` has shape input_sizes with entry `dim` removed (0-d when input_sizes has
  one entry), any dtype (floating, integer or bool: 0 is False), possibly non-contiguous.
- `dim` and `index` may be negative (counted from the end); index is in range.
- The result has grad_output's dtype and is a new tensor (its strides are free);
  grad_output must not be modified. Empty shapes give an empty result.
This is data movement: PyTorch's copy ops (`copy_`, `clone`, `contiguous`) are not
allowed; the slice must be written by a Triton kernel.

Required overload: `select_backward` (default). Left out: `select_backward.out`.
""",
}
