"""The cases of the pointwise family's operators on two operands (pointwise.py, inputs in
pointwise_binary.py): fmax, heaviside, logaddexp2 and mul.
Kept out of the processes that run candidate code (kgb.operators.import_spec_libraries):
pointwise.cases imports this module when a judge loads a spec."""

from __future__ import annotations

from functools import partial

from kgb.operators import Case


def _binary(name, tag, shape, other, dtype, other_dtype=None, layout=None, other_layout=None,
            seed=0, entry=None, **extra):
    """`other`: a shape, or a Python number. Layouts: `t` is a transposed view, `slice` a view
    of every other column."""
    params = dict(shape=shape, other=other, dtype=dtype, other_dtype=other_dtype or dtype,
                  layout=layout, other_layout=other_layout, **extra)
    return Case(name, tag, params, seed=seed, entry=entry)


def _overload(name, tag, shape, other, *args, **kwargs):
    """mul's cases: the entry point follows `other` (a shape: Tensor; a number: Scalar)."""
    entry = "mul_Tensor" if isinstance(other, tuple) else "mul_Scalar"
    return _binary(name, tag, shape, other, *args, entry=entry, **kwargs)


def _heaviside(name, tag, shape, values, dtype, layout=None, values_layout=None, seed=0):
    params = dict(shape=shape, values=values, dtype=dtype, layout=layout, values_layout=values_layout)
    return Case(name, tag, params, seed=seed)


FMAX = [
    _binary("smoke-f32", "smoke", (5, 37), (37,), "float32"),
    _binary("smoke-t-f16-bf16", "smoke", (9, 6), (6,), "float16", "bfloat16", layout="t", seed=1),
    _binary("smoke-i32", "smoke", (3, 7), (3, 1), "int32", seed=2),
    _binary("bf16", "check", (4, 512, 768), (4, 512, 768), "bfloat16"),
    _binary("f16-rows", "check", (2, 1024, 1024), (1024,), "float16"),
    _binary("f32-column", "check", (1823, 781), (1823, 1), "float32"),
    _binary("f32-outer", "check", (64, 1, 33), (1, 47, 33), "float32"),
    _binary("f32-t-slice", "check", (300, 257), (300, 257), "float32", layout="t", other_layout="slice"),
    _binary("f16-bf16", "check", (1000, 130), (1000, 130), "float16", "bfloat16"),
    _binary("bf16-0d-f32", "check", (1000, 33), (), "bfloat16", "float32"),
    _binary("i32-f32", "check", (300, 300), (300,), "int32", "float32"),
    _binary("i64", "check", (1000, 1000), (1000, 1000), "int64"),
    _binary("i8-i64", "check", (64, 1000), (1000,), "int8", "int64"),
    _binary("u8", "check", (64, 1000), (64, 1000), "uint8"),
    _binary("bool", "check", (100, 77), (100, 77), "bool"),
    _binary("bool-f16", "check", (100, 77), (77,), "bool", "float16"),
    _binary("empty", "check", (0, 5), (5,), "float32"),
    _binary("zero-dim", "check", (), (), "float32"),
    _binary("fmax-f32", "bench", (8192, 8192), (8192, 8192), "float32"),
    _binary("fmax-bf16", "bench", (16, 2048, 4096), (16, 2048, 4096), "bfloat16"),
    _binary("fmax-i64-rows", "bench", (8192, 8192), (8192,), "int64"),
    _binary("fmax-f16-rows", "bench", (16384, 4096), (4096,), "float16"),
]

HEAVISIDE = [
    _heaviside("smoke-f32", "smoke", (5, 37), (37,), "float32"),
    _heaviside("smoke-t-f16", "smoke", (9, 6), (), "float16", layout="t", seed=1),
    _heaviside("smoke-i32", "smoke", (3, 7), (3, 1), "int32", seed=2),
    _heaviside("bf16", "check", (4, 512, 768), (4, 512, 768), "bfloat16"),
    _heaviside("f16-rows", "check", (2, 1024, 1024), (1024,), "float16"),
    _heaviside("f32-column", "check", (1823, 781), (1823, 1), "float32"),
    _heaviside("f32-0d", "check", (1000, 1000), (), "float32"),
    _heaviside("f32-outer", "check", (64, 1, 33), (1, 47, 33), "float32"),
    _heaviside("f32-t-slice", "check", (300, 257), (300, 257), "float32", layout="t", values_layout="slice"),
    _heaviside("bf16-slice", "check", (128, 513), (513,), "bfloat16", layout="slice"),
    _heaviside("i64", "check", (1000, 1000), (1000, 1000), "int64"),
    _heaviside("i8", "check", (64, 1000), (1000,), "int8"),
    _heaviside("bool", "check", (100, 77), (100, 77), "bool"),
    _heaviside("empty", "check", (0, 5), (5,), "float32"),
    _heaviside("zero-dim", "check", (), (), "float32"),
    _heaviside("heaviside-f32", "bench", (8192, 8192), (), "float32"),
    _heaviside("heaviside-bf16", "bench", (16, 2048, 4096), (16, 2048, 4096), "bfloat16"),
    _heaviside("heaviside-f16-rows", "bench", (16384, 4096), (4096,), "float16"),
]

# values N(0, scale^2); `scale=None` crosses pointwise_binary.LOGADDEXP2_SPECIAL instead
_logaddexp2 = partial(_binary, scale=4.0)

LOGADDEXP2 = [
    _logaddexp2("smoke-f32", "smoke", (5, 37), (37,), "float32"),
    _logaddexp2("smoke-special", "smoke", (10, 1), (1, 10), "float32", scale=None),
    _logaddexp2("smoke-t-f16-bf16", "smoke", (9, 6), (6,), "float16", "bfloat16", layout="t", seed=1),
    _logaddexp2("bf16", "check", (4, 512, 768), (4, 512, 768), "bfloat16"),
    _logaddexp2("f16-rows", "check", (2, 1024, 1024), (1024,), "float16"),
    _logaddexp2("f32-column", "check", (1823, 781), (1823, 1), "float32"),
    _logaddexp2("f32-wide", "check", (1000, 1000), (1000, 1000), "float32", scale=300.0),
    _logaddexp2("f32-close", "check", (1000, 1000), (1000, 1000), "float32", scale=0.01),
    _logaddexp2("f32-outer", "check", (64, 1, 33), (1, 47, 33), "float32"),
    _logaddexp2("f32-t-slice", "check", (300, 257), (300, 257), "float32", layout="t", other_layout="slice"),
    _logaddexp2("f16-bf16", "check", (1000, 130), (1000, 130), "float16", "bfloat16"),
    _logaddexp2("bf16-0d-f32", "check", (1000, 33), (), "bfloat16", "float32"),
    _logaddexp2("special-f16", "check", (10, 1), (1, 10), "float16", scale=None),
    _logaddexp2("special-bf16", "check", (10, 1), (1, 10), "bfloat16", scale=None),
    _logaddexp2("empty", "check", (0, 5), (5,), "float32"),
    _logaddexp2("zero-dim", "check", (), (), "float32"),
    _logaddexp2("logaddexp2-f32", "bench", (8192, 8192), (8192, 8192), "float32"),
    _logaddexp2("logaddexp2-bf16", "bench", (16, 2048, 4096), (16, 2048, 4096), "bfloat16"),
    _logaddexp2("logaddexp2-f16-rows", "bench", (16384, 4096), (4096,), "float16"),
]

MUL = [
    _overload("smoke-bias-f32", "smoke", (5, 37), (37,), "float32"),
    _overload("smoke-t-f16-bf16", "smoke", (9, 6), (6,), "float16", "bfloat16", layout="t", seed=1),
    _overload("smoke-scalar-i32", "smoke", (3, 7), 5, "int32", seed=2),
    _overload("gate-bf16", "check", (4, 512, 768), (4, 512, 768), "bfloat16"),
    _overload("gate-f16", "check", (2, 1024, 1024), (2, 1024, 1024), "float16"),
    _overload("scale-f32", "check", (1024, 3072), (3072,), "float32"),
    _overload("column-f32", "check", (1823, 781), (1823, 1), "float32"),
    _overload("outer-f32", "check", (64, 1, 33), (1, 47, 33), "float32"),
    _overload("mask-bool-f32", "check", (8, 1, 128, 128), (8, 12, 128, 128), "bool", "float32"),
    _overload("t-other-bf16", "check", (300, 257), (300, 257), "bfloat16", other_layout="t"),
    _overload("slice-f16", "check", (128, 513), (128, 513), "float16", layout="slice", other_layout="t"),
    _overload("f16-bf16", "check", (1000, 130), (1000, 130), "float16", "bfloat16"),
    _overload("bf16-0d-f32", "check", (1000, 33), (), "bfloat16", "float32"),
    _overload("0d-times-vector", "check", (), (70001,), "float32"),
    _overload("i32-f32", "check", (300, 300), (300,), "int32", "float32"),
    _overload("i64", "check", (1000, 1000), (1000, 1000), "int64"),
    _overload("i8-wrap", "check", (64, 1000), (64, 1000), "int8"),
    _overload("i16-i64", "check", (64, 1000), (1000,), "int16", "int64"),
    _overload("bool-bool", "check", (100, 77), (100, 77), "bool"),
    _overload("empty", "check", (0, 5), (5,), "float32"),
    _overload("zero-dim", "check", (), (), "float32"),
    _overload("scalar-f32", "check", (1000, 1000), 2.5, "float32"),
    _overload("scalar-bf16-t", "check", (512, 1000), 0.125, "bfloat16", layout="t"),
    _overload("scalar-int-f16", "check", (512, 1000), 3, "float16"),
    _overload("scalar-float-i64", "check", (1000, 100), -1.5, "int64"),
    _overload("scalar-int-bool", "check", (1000, 100), 3, "bool"),
    _overload("scalar-i8", "check", (1000, 100), -7, "int8"),
    _overload("mul-f32", "bench", (8192, 8192), (8192, 8192), "float32"),
    _overload("mul-bf16", "bench", (16, 2048, 4096), (16, 2048, 4096), "bfloat16"),
    _overload("scale-f16", "bench", (16384, 4096), (4096,), "float16"),
    _overload("scalar-bf16-bench", "bench", (8192, 8192), 0.5, "bfloat16"),
]

CASES = {"fmax": FMAX, "heaviside": HEAVISIDE, "logaddexp2": LOGADDEXP2, "mul": MUL}
