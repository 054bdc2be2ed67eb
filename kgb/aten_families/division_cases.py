"""The division family's cases (division.py): the tables of div, div_ and floor_divide.
Kept out of the processes that run candidate code (kgb.operators.import_spec_libraries):
division.cases imports this module when a judge loads a spec."""

from __future__ import annotations

from functools import partial

from kgb.aten_families.division import NO_MODE
from kgb.operators import Case


def _case(op, name, tag, shape, other, dtype, other_dtype=None, mode=NO_MODE, layout=None,
          other_layout=None, divisor="any", seed=0):
    """`other`: a shape (Tensor entries) or a Python number (Scalar entries). `divisor`: `any`
    (normal floats, nonzero ints), `away` (|other| in [0.25, 4], for rounded quotients),
    `unit` (|other| log-uniform in [2**-1/64, 2**1/64]: an element of an in-place quotient,
    divided by its same divisor call after call, moves a 64th of a binade a call at most)
    or `special` (self and other are the 8 values 0, +-1, +-2.5, +-inf, nan, crossed)."""
    kind = "Tensor" if isinstance(other, tuple) else "Scalar"
    entry = f"{op}_{kind}" + ("" if mode == NO_MODE else "_mode")
    params = dict(shape=shape, other=other, dtype=dtype, other_dtype=other_dtype or dtype, mode=mode,
                  layout=layout, other_layout=other_layout, divisor=divisor)
    return Case(name, tag, params, seed=seed, entry=entry)


def floor_case(name, tag, shape, other, dtype, other_dtype=None, layout=None, other_layout=None,
               divisor="away", seed=0):
    """floor_divide has no rounding_mode parameter (and rounds away from small divisors by
    default); otherwise as `_case`."""
    entry = "floor_divide" if isinstance(other, tuple) else "floor_divide_Scalar"
    params = dict(shape=shape, other=other, dtype=dtype, other_dtype=other_dtype or dtype,
                  layout=layout, other_layout=other_layout, divisor=divisor)
    return Case(name, tag, params, seed=seed, entry=entry)


div_case = partial(_case, "div")
inplace_case = partial(_case, "div_")

DIV_CASES = [
    div_case("smoke-f32", "smoke", (5, 37), (37,), "float32"),
    div_case("smoke-floor-special", "smoke", (8, 1), (1, 8), "float32", mode="floor", divisor="special"),
    div_case("smoke-trunc-i32", "smoke", (3, 7), -3, "int32", mode="trunc", seed=1),
    div_case("true-bf16", "check", (4, 512, 768), (4, 512, 768), "bfloat16"),
    div_case("true-f16-rows", "check", (2, 1024, 1024), (1024,), "float16"),
    div_case("true-f32-column", "check", (1823, 781), (1823, 1), "float32"),
    div_case("true-f32-t", "check", (300, 257), (300, 257), "float32", layout="t", other_layout="slice"),
    div_case("true-i64", "check", (1000, 1000), (1000, 1000), "int64"),
    div_case("true-i32-0d-f32", "check", (300, 300), (), "int32", "float32"),
    div_case("true-bool", "check", (100, 77), (100, 77), "bool"),
    div_case("true-special", "check", (8, 1), (1, 8), "float32", divisor="special"),
    div_case("none-mode-f16", "check", (512, 1000), (512, 1000), "float16", mode=None),
    div_case("trunc-f16", "check", (1000, 513), (513,), "float16", mode="trunc", divisor="away"),
    div_case("trunc-bf16-t", "check", (513, 1000), (513, 1000), "bfloat16", mode="trunc", divisor="away", layout="t"),
    div_case("trunc-f32", "check", (1000, 1000), (1000, 1000), "float32", mode="trunc", divisor="away"),
    div_case("trunc-i64", "check", (1000, 1000), (1000,), "int64", mode="trunc"),
    div_case("trunc-i8", "check", (64, 1000), (64, 1000), "int8", mode="trunc"),
    div_case("trunc-special", "check", (8, 1), (1, 8), "float32", mode="trunc", divisor="special"),
    div_case("floor-f32-column", "check", (1823, 781), (1823, 1), "float32", mode="floor", divisor="away"),
    div_case("floor-f16", "check", (1000, 513), (1000, 513), "float16", mode="floor", divisor="away"),
    div_case("floor-bf16-t", "check", (513, 1000), (1000,), "bfloat16", mode="floor", divisor="away", layout="t"),
    div_case("floor-i32", "check", (1000, 1000), (1000, 1000), "int32", mode="floor"),
    div_case("floor-i16-i64", "check", (64, 1000), (1000,), "int16", "int64", mode="floor"),
    div_case("floor-special-f16", "check", (8, 1), (1, 8), "float16", mode="floor", divisor="special"),
    div_case("scalar-f32", "check", (1000, 1000), 2.5, "float32"),
    div_case("scalar-int-bf16", "check", (512, 1000), 3, "bfloat16", layout="t"),
    div_case("scalar-i64", "check", (1000, 100), 2, "int64"),
    div_case("scalar-zero-f32", "check", (100, 100), 0.0, "float32"),
    div_case("scalar-floor-tenth", "check", (1000, 1000), 0.1, "float32", mode="floor"),
    div_case("scalar-floor-i64", "check", (1000, 1000), -7, "int64", mode="floor"),
    div_case("scalar-trunc-f16", "check", (1000, 1000), -0.25, "float16", mode="trunc"),
    div_case("scalar-none-mode", "check", (1000, 100), 4, "int32", mode=None),
    div_case("empty", "check", (0, 5), (5,), "float32"),
    div_case("zero-dim", "check", (), (), "float32"),
    div_case("zero-dim-floor", "check", (), (), "int64", mode="floor"),
    div_case("div-f32", "bench", (8192, 8192), (8192, 8192), "float32"),
    div_case("attn-scale-bf16", "bench", (16, 2048, 4096), 8.0, "bfloat16"),
    div_case("floor-i64", "bench", (8192, 8192), (8192,), "int64", mode="floor"),
    div_case("floor-f32", "bench", (8192, 8192), (8192, 8192), "float32", mode="floor", divisor="away"),
]

DIV_INPLACE_CASES = [
    inplace_case("smoke-f32-bias", "smoke", (5, 37), (37,), "float32"),
    inplace_case("smoke-floor-i32", "smoke", (3, 7), -3, "int32", mode="floor", seed=1),
    inplace_case("smoke-trunc-f16-t", "smoke", (9, 6), (6,), "float16", "float32", mode="trunc", layout="t",
                  divisor="away", seed=2),
    inplace_case("true-bf16", "check", (4, 512, 768), (4, 512, 768), "bfloat16"),
    inplace_case("true-f16-rows", "check", (2, 1024, 1024), (1024,), "float16"),
    inplace_case("true-f32-column", "check", (1823, 781), (1823, 1), "float32"),
    inplace_case("true-f32-t", "check", (300, 257), (300, 257), "float32", layout="t", other_layout="slice"),
    inplace_case("true-slice-bf16", "check", (128, 513), (128, 513), "bfloat16", layout="slice"),
    inplace_case("true-f16-by-f32", "check", (300, 257), (257,), "float16", "float32"),
    inplace_case("true-bf16-by-0d-f32", "check", (1000, 33), (), "bfloat16", "float32"),
    inplace_case("true-special", "check", (8, 8), (1, 8), "float32", divisor="special"),
    inplace_case("none-mode-f32", "check", (512, 1000), (512, 1000), "float32", mode=None),
    inplace_case("trunc-f16", "check", (1000, 513), (513,), "float16", mode="trunc", divisor="away"),
    inplace_case("trunc-f32-t", "check", (513, 1000), (513, 1000), "float32", mode="trunc", divisor="away", layout="t"),
    inplace_case("trunc-i64", "check", (1000, 1000), (1000,), "int64", mode="trunc"),
    inplace_case("trunc-i8", "check", (64, 1000), (64, 1000), "int8", mode="trunc"),
    inplace_case("floor-f32", "check", (1823, 781), (1823, 1), "float32", mode="floor", divisor="away"),
    inplace_case("floor-bf16", "check", (1000, 513), (1000, 513), "bfloat16", mode="floor", divisor="away"),
    inplace_case("floor-i32-by-i64", "check", (1000, 1000), (1000,), "int32", "int64", mode="floor"),
    inplace_case("floor-special", "check", (8, 8), (1, 8), "float32", mode="floor", divisor="special"),
    inplace_case("scalar-f32", "check", (1000, 1000), 2.5, "float32"),
    inplace_case("scalar-int-bf16-t", "check", (512, 1000), 3, "bfloat16", layout="t"),
    inplace_case("scalar-zero-f16", "check", (100, 100), 0.0, "float16"),
    inplace_case("scalar-floor-tenth", "check", (1000, 1000), 0.1, "float32", mode="floor"),
    inplace_case("scalar-floor-i64", "check", (1000, 1000), -7, "int64", mode="floor"),
    inplace_case("scalar-trunc-f16", "check", (1000, 1000), -0.25, "float16", mode="trunc"),
    inplace_case("scalar-none-mode", "check", (1000, 100), 4, "float32", mode=None),
    inplace_case("empty", "check", (0, 5), (5,), "float32"),
    inplace_case("zero-dim", "check", (), (), "float32"),
    inplace_case("zero-dim-floor", "check", (), (), "int64", mode="floor"),
    # Timing calls a bench case hundreds of times on the same tensors, each element by the
    # same divisor, so these are within 2% of 1 in magnitude (INPLACE_VERSION); 1 + 2**-7 is
    # exact in bfloat16.
    inplace_case("div-f32", "bench", (8192, 8192), (8192, 8192), "float32", divisor="unit"),
    inplace_case("scale-bf16", "bench", (16, 2048, 4096), 1.0078125, "bfloat16"),
    inplace_case("floor-i64", "bench", (8192, 8192), (8192,), "int64", mode="floor"),
]

FLOOR_DIVIDE_CASES = [
    floor_case("smoke-f32", "smoke", (5, 37), (37,), "float32"),
    floor_case("smoke-special", "smoke", (8, 1), (1, 8), "float32", divisor="special"),
    floor_case("smoke-scalar-i32", "smoke", (3, 7), -3, "int32", seed=1),
    floor_case("f32-column", "check", (1823, 781), (1823, 1), "float32"),
    floor_case("f32-any", "check", (1000, 1000), (1000, 1000), "float32", divisor="any"),
    floor_case("f16", "check", (1000, 513), (1000, 513), "float16"),
    floor_case("bf16-t", "check", (513, 1000), (1000,), "bfloat16", layout="t"),
    floor_case("f32-slice-t", "check", (300, 257), (300, 257), "float32", layout="slice", other_layout="t"),
    floor_case("bf16-by-0d-f32", "check", (1000, 33), (), "bfloat16", "float32"),
    floor_case("f16-by-f32", "check", (300, 257), (257,), "float16", "float32"),
    floor_case("i32-by-f32", "check", (300, 300), (300,), "int32", "float32"),
    floor_case("i64", "check", (1000, 1000), (1000, 1000), "int64", divisor="any"),
    floor_case("i32", "check", (1000, 1000), (1000,), "int32", divisor="any"),
    floor_case("i16-by-i64", "check", (64, 1000), (1000,), "int16", "int64", divisor="any"),
    floor_case("i8", "check", (64, 1000), (64, 1000), "int8", divisor="any"),
    floor_case("special-f16", "check", (8, 1), (1, 8), "float16", divisor="special"),
    floor_case("special-bf16", "check", (8, 1), (1, 8), "bfloat16", divisor="special"),
    floor_case("scalar-tenth", "check", (1000, 1000), 0.1, "float32"),
    floor_case("scalar-f16", "check", (1000, 1000), -0.75, "float16"),
    floor_case("scalar-int-bf16", "check", (512, 1000), 3, "bfloat16", layout="t"),
    floor_case("scalar-zero-f32", "check", (100, 100), 0.0, "float32"),
    floor_case("scalar-i64", "check", (1000, 1000), -7, "int64"),
    floor_case("scalar-float-i64", "check", (1000, 100), 2.5, "int64"),
    floor_case("empty", "check", (0, 5), (5,), "float32"),
    floor_case("zero-dim", "check", (), (), "float32"),
    floor_case("zero-dim-i64", "check", (), (), "int64", divisor="any"),
    floor_case("floor-f32", "bench", (8192, 8192), (8192, 8192), "float32"),
    floor_case("floor-i64", "bench", (8192, 8192), (8192,), "int64", divisor="any"),
    floor_case("scalar-i32-bench", "bench", (16384, 8192), 7, "int32"),
    floor_case("floor-bf16", "bench", (16, 2048, 4096), (16, 2048, 4096), "bfloat16"),
]

CASES = {"div": DIV_CASES, "div_": DIV_INPLACE_CASES, "floor_divide": FLOOR_DIVIDE_CASES}
