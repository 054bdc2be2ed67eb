"""Elementwise addition with a scale: `aten::add.Tensor` and `aten::add.Scalar`.

out = self + alpha * other, element by element.

Two entry points are required:
- `add_Tensor(self, other, *, alpha=1)`: `other` is a tensor.
- `add_Scalar(self, other, alpha=1)`: `other` is a Python number (bool, int or float).
The out= variants, `add.str`, `add.int` and complex dtypes are not part of the task.

Shapes: `self` and `other` broadcast against each other with the usual NumPy rules
(trailing dimensions aligned; a dimension of size 1, or a missing one, is repeated). The
result has the broadcast shape. Either input may be 0-d, empty (a size-0 dimension gives
an empty result) or non-contiguous (transposed, sliced with a step, or an expanded view
with stride 0). A 0-d `other` tensor may live on the CPU while `self` is on the GPU (a
"CPU scalar"); its value is then read from host memory.

Result dtype (PyTorch type promotion, as `torch.result_type(self, other)` gives it):
- Tensors with at least one dimension decide the dtype: `torch.promote_types` of their
  dtypes (categories bool < integer < floating; within one, the type that holds both:
  int8 + int64 is int64, uint8 + int8 is int16, float16 + bfloat16 is float32).
- A 0-d tensor or a Python number only matters when its category is higher than that of
  the dimensioned tensors: a float 0-d tensor with an int tensor gives the 0-d tensor's
  dtype; a Python float with an int or bool tensor gives float32; a Python int with a
  bool tensor gives int64. Otherwise the dimensioned tensor's dtype wins (float16 tensor
  + float32 0-d tensor is float16).
Each operand is first converted to the result dtype (a Python float `other` is thus
rounded to float16 for a float16 result), then `self + alpha * other` is computed: in
float32 for float16 and bfloat16 results (rounded once at the end), in the result dtype
otherwise. Integer results wrap around on overflow, as in C. For bool results the answer
is `self or (alpha and other)`.

`alpha` is a Python number: an int for integer results (a float alpha there is an error
in PyTorch and is never passed), a bool for bool results, an int or float for floating
results.

The result is a new tensor of the broadcast shape (any strides); the inputs must not be
modified.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def add_Tensor(self: torch.Tensor, other: torch.Tensor, *, alpha: int | float | bool = 1) -> torch.Tensor:
    """aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"""

def add_Scalar(self: torch.Tensor, other: int | float | bool, alpha: int | float | bool = 1) -> torch.Tensor:
    """aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor"""
'''


def _t(name, tag, a, b, alpha=1, seed=0, **extra):
    """A Tensor-overload case. a, b: (shape, dtype) or ("T", shape, dtype) for a transpose."""
    return Case(name, tag, dict(a=a, b=b, alpha=alpha, **extra), seed=seed, entry="add_Tensor")


def _s(name, tag, a, other, alpha=1, seed=0):
    return Case(name, tag, dict(a=a, other=other, alpha=alpha), seed=seed, entry="add_Scalar")


CASES = [
    _t("smoke-bcast-f32", "smoke", ((7, 33), "float32"), ((33,), "float32"), alpha=0.5),
    _t("smoke-f16-int", "smoke", ((5, 6), "float16"), ((5, 1), "int64"), seed=1),
    _s("smoke-scalar-i32", "smoke", ((40,), "int32"), 3, alpha=-2),
    # real model shapes: residual adds and bias adds
    _t("residual-bf16", "check", ((4, 517, 1024), "bfloat16"), ((4, 517, 1024), "bfloat16")),
    _t("bias-f16", "check", ((1000, 1027), "float16"), ((1027,), "float16"), alpha=2),
    _t("f32", "check", ((3001, 333), "float32"), ((3001, 333), "float32"), alpha=-1.5),
    _t("f32-alpha-int", "check", ((77, 129), "float32"), ((77, 129), "float32"), alpha=3),
    # layouts: transposed, strided slice, expanded views, both broadcast
    _t("transposed", "check", ("T", (301, 257), "float32"), ((301, 257), "float32")),
    _t("both-transposed-f16", "check", ("T", (64, 513), "float16"), ("T", (64, 513), "float16")),
    _t("sliced", "check", ("S", (300, 200), "float32"), ((300, 200), "float32")),
    _t("outer", "check", ((129, 1), "float32"), ((1, 257), "float32")),
    _t("bcast-4d", "check", ((2, 3, 1, 65), "bfloat16"), ((3, 31, 1), "bfloat16")),
    _t("expanded", "check", ("E", (200, 300), "float32"), ((200, 300), "float32")),
    _t("rank6", "check", ((2, 3, 2, 3, 5, 7), "float32"), ((3, 1, 3, 1, 7), "float32")),
    # dtypes and promotion
    _t("i64", "check", ((1000, 99), "int64"), ((1000, 99), "int64"), alpha=-7, wide=True),
    _t("i32-wrap", "check", ((4097,), "int32"), ((4097,), "int32"), alpha=65536, wide=True),
    _t("i32", "check", ((33, 1000), "int32"), ((1000,), "int32"), alpha=-1),
    _t("u8-wrap", "check", ((3, 1025), "uint8"), ((3, 1025), "uint8"), alpha=3),
    _t("i8-i64", "check", ((513,), "int8"), ((513,), "int64"), wide=True),
    _t("bool", "check", ((999,), "bool"), ((999,), "bool")),
    _t("bool-int", "check", ((33, 17), "bool"), ((17,), "int32"), alpha=2),
    _t("f16-f32", "check", ((300, 301), "float16"), ((301,), "float32")),
    _t("f16-bf16", "check", ((1024, 33), "float16"), ((1024, 33), "bfloat16")),
    _t("i8-f16", "check", ((777,), "int8"), ((777,), "float16")),
    _t("f64", "check", ((2049,), "float64"), ((2049,), "float64"), alpha=0.1),
    # 0-d and empty tensors
    _t("zero-dim-other", "check", ((65, 65), "float16"), ((), "float32")),
    _t("zero-dim-float-int", "check", ((1000,), "int64"), ((), "float64")),
    _t("zero-dim-both", "check", ((), "float32"), ((), "float32"), alpha=2.5),
    _t("zero-dim-self", "check", ((), "float32"), ((4, 5), "float32")),
    _t("cpu-scalar", "check", ((100, 100), "float32"), ((), "float32"), cpu_other=True),
    _t("empty", "check", ((0, 16), "float32"), ((16,), "float32")),
    _t("empty-bcast", "check", ((3, 0), "float16"), ((1,), "float16")),
    _s("scalar-f32", "check", ((1001, 37), "float32"), 0.1, alpha=-3.0),
    _s("scalar-f16", "check", ((8, 2049), "float16"), 0.75, alpha=2),
    _s("scalar-bf16-T", "check", ("T", (127, 65), "bfloat16"), -1.5),
    _s("scalar-int-float", "check", ((1000,), "int64"), 2.5),
    _s("scalar-bool-int", "check", ((100,), "bool"), 1),
    _s("scalar-bool", "check", ((100,), "bool"), False, alpha=True),
    _s("scalar-u8-wrap", "check", ((1025,), "uint8"), 250),
    _s("scalar-0d", "check", ((), "float32"), 2.0),
    _s("scalar-empty", "check", ((0,), "float32"), 2.0),
    # bench: large activations of real models
    _t("residual-bf16-big", "bench", ((8, 4096, 4096), "bfloat16"), ((8, 4096, 4096), "bfloat16")),
    _t("bias-f16-big", "bench", ((16384, 4096), "float16"), ((4096,), "float16")),
    _t("f32-big", "bench", ((64, 1024, 1024), "float32"), ((64, 1024, 1024), "float32"), alpha=0.5),
    _s("scalar-f32-big", "bench", ((1 << 26,), "float32"), 1.0),
]


def _tensor(desc, gen: torch.Generator, device: str, wide: bool) -> torch.Tensor:
    """Random values of a dtype. desc is (shape, dtype), or (layout, shape, dtype) for a
    view of that shape: "T" transposed, "S" every second column, "E" expanded (stride 0).
    Integers span the whole int32 range (or +-2**40 for int64) when `wide`, to exercise
    wrap-around; else +-1000, which float16 holds exactly."""
    layout, shape, dtype = desc if len(desc) == 3 else ("", *desc)
    dtype = getattr(torch, dtype)
    full = shape
    if layout == "T":
        full = tuple(reversed(shape))
    elif layout == "S":
        full = (*shape[:-1], 2 * shape[-1])
    elif layout == "E":
        full = (1, *shape[1:])
    if dtype == torch.bool:
        t = torch.rand(full, generator=gen) < 0.5
    elif dtype == torch.uint8:
        t = torch.randint(0, 256, full, generator=gen).to(dtype)
    elif dtype in (torch.int8, torch.int32, torch.int64):
        big = (
            {torch.int8: 1 << 7, torch.int32: 1 << 31, torch.int64: 1 << 40}[dtype]
            if wide
            else 1000
        )
        big = min(big, 1 << 7) if dtype == torch.int8 else big
        t = torch.randint(-big, big, full, generator=gen, dtype=torch.int64).to(dtype)
    else:
        t = (torch.randn(full, generator=gen, dtype=torch.float64) * 4).to(dtype)
    t = t.to(device)  # before making the view: a copy to the GPU would make it contiguous
    if layout == "T":
        return t.t()
    if layout == "S":
        return t[..., ::2]
    if layout == "E":
        return t.expand(shape)
    return t


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    wide = p.get("wide", False)
    a = _tensor(p["a"], gen, device, wide)
    if case.entry == "add_Scalar":
        return dict(self=a, other=p["other"], alpha=p["alpha"])
    # a "CPU scalar": a 0-d tensor left on the host
    b = _tensor(p["b"], gen, "cpu" if p.get("cpu_other") else device, wide)
    return dict(self=a, other=b, alpha=p["alpha"])


def add_Tensor(self, other, *, alpha=1):
    return torch.ops.aten.add.Tensor(self, other, alpha=alpha)


def add_Scalar(self, other, alpha=1):
    return torch.ops.aten.add.Scalar(self, other, alpha)


reference = {"add_Tensor": add_Tensor, "add_Scalar": add_Scalar}
