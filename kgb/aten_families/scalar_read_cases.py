"""The scalar-read family's cases (scalar_read.py), the same for item and
_local_scalar_dense. This module holds hidden cases and is kept out of the processes that
run candidate code (see kgb.operators.import_spec_libraries): only `scalar_read.cases` and
the generator import it."""

from __future__ import annotations

from kgb.operators import Case


def _case(name, tag, dtype, shape=(), value=None, view=None, seed=0):
    # value: a fixed value (else random); view: "offset" (x[3] of a vector) or
    # "transposed" (one element of a transposed matrix)
    return Case(name, tag, dict(dtype=dtype, shape=shape, value=value, view=view), seed=seed)


CASES = [
    _case("smoke-f32", "smoke", "float32"),
    _case("smoke-int64", "smoke", "int64", shape=(1, 1)),
    _case("smoke-bool", "smoke", "bool", value=True),
    _case("f16", "check", "float16", shape=(1,)),
    _case("bf16", "check", "bfloat16"),
    _case("f64", "check", "float64", value=0.1),
    _case("int8-negative", "check", "int8", value=-100),
    _case("uint8", "check", "uint8", value=200),
    _case("int16", "check", "int16", shape=(1, 1, 1), value=-12345),
    _case("int32", "check", "int32", value=2**31 - 1),
    _case("int64-big", "check", "int64", value=2**62 + 1),
    _case("bool-false", "check", "bool", shape=(1,), value=False),
    _case("nan", "check", "float32", value=float("nan")),
    _case("inf-f16", "check", "float16", value=float("-inf")),
    _case("offset-view", "check", "float32", view="offset"),
    _case("transposed-element", "check", "bfloat16", view="transposed"),
    _case("offset-int64", "check", "int64", view="offset"),
    _case("bench-f32", "bench", "float32"),
]
