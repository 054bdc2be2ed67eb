"""The cases of the pointwise family's members whose operands are not a plain pair of
tensors (pointwise.py, inputs in pointwise_special.py): pow, prelu and masked_fill_.
Kept out of the processes that run candidate code (kgb.operators.import_spec_libraries):
pointwise.cases imports this module when a judge loads a spec."""

from __future__ import annotations

from kgb.operators import Case


def _pow(name, tag, base, exponent, dtype, exp_dtype=None, base_kind="pos", exp_range=(-4, 4),
         exp_int=False, layout=None, seed=0):
    """`base`/`exponent`: a shape, or a Python number (which picks the entry point). Bases:
    `pos` uniform in [0.25, 3], `any` N(0, 2^2), `small` (ints in [-5, 5]), `wide` (ints in
    [-100, 100]), `special` (0, +-1, +-2, +-0.5, +-inf, nan; the base and exponent
    shapes cross them). Exponents: uniform in `exp_range`, integral if `exp_int`. `layout`
    `t` makes the base a transposed view."""
    if not isinstance(base, tuple):
        entry = "pow_Scalar"
    else:
        entry = "pow_Tensor_Tensor" if isinstance(exponent, tuple) else "pow_Tensor_Scalar"
    params = dict(base=base, exponent=exponent, dtype=dtype, exp_dtype=exp_dtype or dtype,
                  base_kind=base_kind, exp_range=exp_range, exp_int=exp_int, layout=layout)
    return Case(name, tag, params, seed=seed, entry=entry)


POW = [
    _pow("smoke-tt-f32", "smoke", (5, 37), (37,), "float32"),
    _pow("smoke-ts-f16-square", "smoke", (9, 6), 2, "float16", base_kind="any", layout="t", seed=1),
    _pow("smoke-s-i32", "smoke", 2, (3, 7), "int32", exp_range=(0, 40), exp_int=True, seed=2),
    _pow("tt-f32", "check", (1000, 1000), (1000, 1000), "float32", exp_range=(-12, 12)),
    _pow("tt-f32-neg-base", "check", (1000, 1000), (1000, 1000), "float32", base_kind="any",
         exp_range=(-5, 5), exp_int=True),
    _pow("tt-bf16", "check", (4, 512, 768), (4, 512, 768), "bfloat16"),
    _pow("tt-f16-rows", "check", (2, 1024, 1024), (1024,), "float16"),
    _pow("tt-f16-neg-base", "check", (1000, 130), (130,), "float16", base_kind="any", exp_int=True),
    _pow("tt-f32-t", "check", (300, 257), (257,), "float32", layout="t"),
    _pow("tt-f32-0d", "check", (1000, 33), (), "float32"),
    _pow("tt-i32-f32", "check", (300, 300), (300, 300), "int32", "float32", base_kind="small"),
    _pow("tt-special-f32", "check", (10, 1), (1, 10), "float32", base_kind="special"),
    _pow("tt-special-f16", "check", (10, 1), (1, 10), "float16", base_kind="special"),
    _pow("tt-i64", "check", (1000, 1000), (1000, 1000), "int64", base_kind="small",
         exp_range=(-3, 20), exp_int=True),
    _pow("tt-i32-wrap", "check", (1000, 1000), (1000,), "int32", base_kind="wide",
         exp_range=(0, 20), exp_int=True),
    _pow("tt-i8", "check", (64, 1000), (64, 1000), "int8", base_kind="small", exp_range=(0, 8), exp_int=True),
    _pow("ts-f32-square", "check", (1000, 1000), 2, "float32", base_kind="any"),
    _pow("ts-f32-cube", "check", (1000, 1000), 3.0, "float32", base_kind="any"),
    _pow("ts-f32-sqrt", "check", (1000, 1000), 0.5, "float32", base_kind="any"),
    _pow("ts-f32-rsqrt", "check", (1000, 1000), -0.5, "float32"),
    _pow("ts-f32-recip", "check", (1000, 1000), -1, "float32", base_kind="any"),
    _pow("ts-f32-recip-sq", "check", (1000, 1000), -2.0, "float32", base_kind="any"),
    _pow("ts-f32-general", "check", (1000, 1000), 1.5, "float32"),
    _pow("ts-f32-neg-general", "check", (1000, 1000), -2.75, "float32", base_kind="any"),
    _pow("ts-bf16-cube-t", "check", (512, 1000), 3, "bfloat16", base_kind="any", layout="t"),
    _pow("ts-f16-sqrt", "check", (512, 1000), 0.5, "float16"),
    _pow("ts-i64-cube", "check", (1000, 100), 3, "int64", base_kind="wide"),
    _pow("ts-i32-zero", "check", (1000, 100), 0, "int32", base_kind="wide"),
    _pow("ts-i32-half", "check", (1000, 100), 0.5, "int32", base_kind="wide"),
    _pow("ts-bool-square", "check", (100, 77), 2, "bool"),
    _pow("s-f32", "check", 2.0, (1000, 1000), "float32", exp_range=(-20, 20)),
    _pow("s-f32-half", "check", 0.5, (1000, 1000), "float32", exp_range=(-20, 20)),
    _pow("s-bf16", "check", 2.5, (512, 1000), "bfloat16", exp_range=(-6, 6)),
    _pow("s-i64", "check", 3, (1000, 100), "int64", exp_range=(0, 30), exp_int=True),
    _pow("s-float-i32", "check", 2.5, (1000, 100), "int32", exp_range=(0, 10), exp_int=True),
    _pow("empty", "check", (0, 5), (5,), "float32"),
    _pow("zero-dim", "check", (), (), "float32"),
    _pow("zero-dim-scalar", "check", (), 3, "int64", base_kind="small"),
    _pow("square-f32", "bench", (8192, 8192), 2, "float32", base_kind="any"),
    _pow("sqrt-bf16", "bench", (16, 2048, 4096), 0.5, "bfloat16"),
    _pow("general-f32", "bench", (8192, 8192), 1.5, "float32"),
    _pow("tt-f32-bench", "bench", (8192, 8192), (8192, 8192), "float32"),
]

def _prelu(name, tag, shape, weight, dtype, layout=None, seed=0):
    """`weight`: `channel` (one per channel), `shared` (shape (1,)) or `0d`. Layout `cl`:
    `self` is a channels-last tensor viewed as NCHW (via permute); `t`: a transposed 2-D view."""
    return Case(name, tag, dict(shape=shape, weight=weight, dtype=dtype, layout=layout), seed=seed)


PRELU = [
    _prelu("smoke-f32", "smoke", (2, 3, 5, 7), "channel", "float32"),
    _prelu("smoke-f16-shared", "smoke", (4, 37), "shared", "float16", seed=1),
    _prelu("smoke-bf16-cl", "smoke", (2, 6, 3, 5), "channel", "bfloat16", layout="cl", seed=2),
    _prelu("conv-f32", "check", (8, 64, 56, 56), "channel", "float32"),
    _prelu("conv-bf16-cl", "check", (4, 96, 28, 28), "channel", "bfloat16", layout="cl"),
    _prelu("conv-f16-shared", "check", (2, 32, 128, 128), "shared", "float16"),
    _prelu("seq-f32", "check", (4, 512, 768), "channel", "float32"),
    _prelu("linear-bf16", "check", (1000, 300), "channel", "bfloat16"),
    _prelu("linear-f32-t", "check", (300, 1000), "channel", "float32", layout="t"),
    _prelu("odd-f16", "check", (3, 17, 1001), "channel", "float16"),
    _prelu("weight-0d-f32", "check", (64, 1000), "0d", "float32"),
    _prelu("vector-f32", "check", (70001,), "shared", "float32"),
    _prelu("vector-0d-weight-bf16", "check", (4099,), "0d", "bfloat16"),
    _prelu("zero-dim", "check", (), "shared", "float32"),
    _prelu("empty", "check", (0, 16, 4), "channel", "float32"),
    _prelu("nan-f32", "check", (16, 33, 10), "channel", "float32", seed=3),
    _prelu("conv-f32-bench", "bench", (64, 64, 112, 112), "channel", "float32"),
    _prelu("conv-bf16-bench", "bench", (32, 256, 56, 56), "channel", "bfloat16"),
    _prelu("conv-f16-bench", "bench", (16, 128, 128, 128), "shared", "float16"),
]


def _fill(name, tag, shape, mask_shape, value, dtype, value_dtype=None, layout=None,
          mask_layout=None, density=0.5, causal=False, seed=0):
    """`value`: a Python number (Scalar entry), or a number with `value_dtype` given (Tensor
    entry, a 0-d tensor). Layouts: `t` transposes, `slice` takes every other column.
    `causal` makes the mask upper-triangular (the future positions) instead of random."""
    entry = "masked_fill__Scalar" if value_dtype is None else "masked_fill__Tensor"
    params = dict(shape=shape, mask_shape=mask_shape, value=value, dtype=dtype, value_dtype=value_dtype,
                  layout=layout, mask_layout=mask_layout, density=density, causal=causal)
    return Case(name, tag, params, seed=seed, entry=entry)


NEG_INF = float("-inf")

MASKED_FILL = [
    _fill("smoke-attn-f32", "smoke", (2, 3, 5, 5), (2, 1, 5, 5), NEG_INF, "float32", causal=True),
    _fill("smoke-t-f16", "smoke", (9, 6), (9, 1), 2.5, "float16", layout="t", seed=1),
    _fill("smoke-tensor-i32", "smoke", (3, 7), (3, 7), -4, "int32", "int64", seed=2),
    _fill("attn-f32", "check", (4, 12, 128, 128), (4, 1, 128, 128), NEG_INF, "float32"),
    _fill("causal-bf16", "check", (4, 8, 256, 256), (256, 256), -10000.0, "bfloat16", causal=True),
    _fill("dense-f16", "check", (2, 1024, 1024), (2, 1024, 1024), 0.0, "float16"),
    _fill("sparse-f32", "check", (1000, 1000), (1000, 1000), 1.5, "float32", density=0.01),
    _fill("all-true-f32", "check", (300, 257), (257,), -2.0, "float32", density=1.0),
    _fill("self-t-f32", "check", (257, 300), (257, 300), NEG_INF, "float32", layout="t"),
    _fill("self-slice-bf16", "check", (128, 513), (128, 1), 0.5, "bfloat16", layout="slice"),
    _fill("mask-t-f16", "check", (300, 257), (300, 257), -65504.0, "float16", mask_layout="t"),
    _fill("rows-f32", "check", (1823, 781), (1823, 1), 3.0, "float32"),
    _fill("i64", "check", (1000, 1000), (1000,), 7, "int64"),
    _fill("i8-float-value", "check", (64, 1000), (64, 1000), -2.5, "int8"),
    _fill("i32-float-value", "check", (64, 1000), (64, 1000), 2.5, "int32"),
    _fill("bool", "check", (100, 77), (100, 77), True, "bool"),
    _fill("bool-false", "check", (100, 77), (77,), False, "bool"),
    _fill("tensor-bf16-from-f32", "check", (1000, 33), (1000, 33), 0.5, "bfloat16", "float32"),
    _fill("tensor-f32-from-f64", "check", (512, 1000), (1000,), -0.125, "float32", "float64"),
    _fill("tensor-i32-from-i64", "check", (512, 100), (512, 100), -3, "int32", "int64"),
    _fill("tensor-f16-inf", "check", (16, 256, 256), (1, 256, 256), NEG_INF, "float16", "float32", causal=True),
    _fill("empty", "check", (0, 5), (5,), 1.0, "float32"),
    _fill("zero-dim", "check", (), (), 2.0, "float32", density=1.0),
    _fill("attn-f16", "bench", (8, 16, 1024, 1024), (8, 1, 1024, 1024), NEG_INF, "float16"),
    _fill("dense-f32", "bench", (8192, 8192), (8192, 8192), 0.0, "float32"),
    _fill("causal-bf16-bench", "bench", (32, 2048, 2048), (2048, 2048), NEG_INF, "bfloat16", causal=True),
]

CASES = {"pow": POW, "prelu": PRELU, "masked_fill_": MASKED_FILL}
