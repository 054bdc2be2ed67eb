"""In-place masked fill: `aten::masked_fill_.Scalar` and `aten::masked_fill_.Tensor`.

    self[mask] <- value          (elsewhere `self` keeps its values; then `self` is returned)

Required entry points: `masked_fill__Scalar` (value is a Python number) and
`masked_fill__Tensor` (value is a 0-d tensor).

- `mask` is a bool tensor that broadcasts to `self`'s shape (e.g. an attention mask of shape
  (B, 1, L, L) for scores (B, H, L, L)); `self` is never broadcast. Either may be
  non-contiguous. `mask` and `value` must not be modified.
- In place: the result is written into `self`'s own memory through its strides, and the
  function returns that same tensor object (or one with the same storage, offset, shape and
  strides). Elements where the mask is False must be left exactly as they were.
- `value` is converted to `self`'s dtype the way a C cast does: float -> integer truncates
  toward zero (2.5 -> 2, -2.5 -> -2), anything -> bool is `!= 0`, float -> float16/bfloat16
  rounds to nearest. A 0-d `value` tensor may have another dtype than `self` (e.g. float64
  into float32) and lives on `self`'s device here. Cases only use values exactly
  representable in `self`'s dtype, and +-inf.
- Dtypes of `self`: float16, bfloat16, float32, int8..int64 and bool. Empty and 0-d tensors
  are valid.
"""

import torch

from kgb.evaluate.correctness import compare_values
from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def masked_fill__Scalar(self: torch.Tensor, mask: torch.Tensor, value: int | float | bool) -> torch.Tensor:
    """aten::masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)"""

def masked_fill__Tensor(self: torch.Tensor, mask: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    """aten::masked_fill_.Tensor(Tensor(a!) self, Tensor mask, Tensor value) -> Tensor(a!)"""
'''

INOUT_ARGS = ("self",)


def _case(name, tag, shape, mask_shape, value, dtype, value_dtype=None, layout=None,
          mask_layout=None, density=0.5, causal=False, seed=0):
    """`value`: a Python number (Scalar entry), or a number with `value_dtype` given (Tensor
    entry, a 0-d tensor). Layouts: `t` transposes, `slice` takes every other column.
    `causal` makes the mask upper-triangular (the future positions) instead of random."""
    entry = "masked_fill__Scalar" if value_dtype is None else "masked_fill__Tensor"
    params = dict(shape=shape, mask_shape=mask_shape, value=value, dtype=dtype, value_dtype=value_dtype,
                  layout=layout, mask_layout=mask_layout, density=density, causal=causal)
    return Case(name, tag, params, seed=seed, entry=entry)


NEG_INF = float("-inf")

CASES = [
    _case("smoke-attn-f32", "smoke", (2, 3, 5, 5), (2, 1, 5, 5), NEG_INF, "float32", causal=True),
    _case("smoke-t-f16", "smoke", (9, 6), (9, 1), 2.5, "float16", layout="t", seed=1),
    _case("smoke-tensor-i32", "smoke", (3, 7), (3, 7), -4, "int32", "int64", seed=2),
    _case("attn-f32", "check", (4, 12, 128, 128), (4, 1, 128, 128), NEG_INF, "float32"),
    _case("causal-bf16", "check", (4, 8, 256, 256), (256, 256), -10000.0, "bfloat16", causal=True),
    _case("dense-f16", "check", (2, 1024, 1024), (2, 1024, 1024), 0.0, "float16"),
    _case("sparse-f32", "check", (1000, 1000), (1000, 1000), 1.5, "float32", density=0.01),
    _case("all-true-f32", "check", (300, 257), (257,), -2.0, "float32", density=1.0),
    _case("self-t-f32", "check", (257, 300), (257, 300), NEG_INF, "float32", layout="t"),
    _case("self-slice-bf16", "check", (128, 513), (128, 1), 0.5, "bfloat16", layout="slice"),
    _case("mask-t-f16", "check", (300, 257), (300, 257), -65504.0, "float16", mask_layout="t"),
    _case("rows-f32", "check", (1823, 781), (1823, 1), 3.0, "float32"),
    _case("i64", "check", (1000, 1000), (1000,), 7, "int64"),
    _case("i8-float-value", "check", (64, 1000), (64, 1000), -2.5, "int8"),
    _case("i32-float-value", "check", (64, 1000), (64, 1000), 2.5, "int32"),
    _case("bool", "check", (100, 77), (100, 77), True, "bool"),
    _case("bool-false", "check", (100, 77), (77,), False, "bool"),
    _case("tensor-bf16-from-f32", "check", (1000, 33), (1000, 33), 0.5, "bfloat16", "float32"),
    _case("tensor-f32-from-f64", "check", (512, 1000), (1000,), -0.125, "float32", "float64"),
    _case("tensor-i32-from-i64", "check", (512, 100), (512, 100), -3, "int32", "int64"),
    _case("tensor-f16-inf", "check", (16, 256, 256), (1, 256, 256), NEG_INF, "float16", "float32", causal=True),
    _case("empty", "check", (0, 5), (5,), 1.0, "float32"),
    _case("zero-dim", "check", (), (), 2.0, "float32", density=1.0),
    _case("attn-f16", "bench", (8, 16, 1024, 1024), (8, 1, 1024, 1024), NEG_INF, "float16"),
    _case("dense-f32", "bench", (8192, 8192), (8192, 8192), 0.0, "float32"),
    _case("causal-bf16-bench", "bench", (32, 2048, 2048), (2048, 2048), NEG_INF, "bfloat16", causal=True),
]


def _rand(shape, dtype, gen):
    if dtype.is_floating_point:
        return torch.randn(shape, generator=gen).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    return torch.randint(-100, 101, shape, generator=gen).to(dtype)


def _layout(full_shape, layout):
    """The shape to allocate for a view of `full_shape` with this layout."""
    if layout == "t":
        return full_shape[::-1]
    if layout == "slice":
        return (*full_shape[:-1], 2 * full_shape[-1])
    return full_shape


def _view(x, layout):
    return x.t() if layout == "t" else x[..., ::2] if layout == "slice" else x


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    self = _view(_rand(_layout(p["shape"], p["layout"]), dtype, gen).to(device), p["layout"])
    mshape = _layout(p["mask_shape"], p["mask_layout"])
    if p["causal"]:
        n = mshape[-1]
        mask = torch.ones(n, n, dtype=torch.bool).triu(1).expand(mshape).contiguous()
    else:
        mask = torch.rand(mshape, generator=gen) < p["density"]
    mask = _view(mask.to(device), p["mask_layout"])
    value = p["value"]
    if p["value_dtype"] is not None:
        value = torch.tensor(value, dtype=getattr(torch, p["value_dtype"]), device=device)
    return dict(self=self, mask=mask, value=value)


def masked_fill__Scalar(self, mask, value):
    return torch.ops.aten.masked_fill_.Scalar(self, mask, value)


def masked_fill__Tensor(self, mask, value):
    return torch.ops.aten.masked_fill_.Tensor(self, mask, value)


reference = {"masked_fill__Scalar": masked_fill__Scalar, "masked_fill__Tensor": masked_fill__Tensor}


def compare(actual, expected, case, inputs):
    """The default value comparison, then: the return value must be `self` itself."""
    for key in ("self", "return"):
        message, _, _ = compare_values(key, actual.get(key), expected[key], case.reduction)
        if message:
            return message
    ret, self = actual["return"], inputs["self"]
    same = (ret.untyped_storage().data_ptr() == self.untyped_storage().data_ptr()
            and ret.storage_offset() == self.storage_offset()
            and ret.shape == self.shape and ret.stride() == self.stride())
    return None if same else "the return value is not `self` (masked_fill_ must return its updated input)"
