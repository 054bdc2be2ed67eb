"""The filled-like family's cases (filled_like.py), nearly the same for ones_like and
zeros_like. This module holds hidden cases and is kept out of the processes that run
candidate code (see kgb.operators.import_spec_libraries): only `filled_like.cases` and the
generator import it."""

from __future__ import annotations

from kgb.operators import Case


def _case(
    name, tag, shape, dtype="float32", layout="contiguous", out_dtype=None, memory_format=None
):
    params = dict(
        shape=shape, dtype=dtype, layout=layout, out_dtype=out_dtype, memory_format=memory_format
    )
    return Case(name, tag, params)


def cases(name: str) -> list[Case]:
    # zeros_like's smoke cases use integer and bool results on purpose: the self-test checks
    # that an all-zero floating answer fails, which cannot hold for zeros_like.
    if name == "ones_like":
        first = [
            _case("smoke-f32", "smoke", [5, 37]),
            _case("smoke-to-bool-transposed", "smoke", [7, 9], "float32", "transposed", out_dtype="bool"),
            _case("int64", "check", [5, 37], "int64"),
        ]
    else:
        first = [
            _case("smoke-int64", "smoke", [5, 37], "int64"),
            _case("smoke-to-bool-transposed", "smoke", [7, 9], "float32", "transposed", out_dtype="bool"),
        ]
    return first + [
        _case("f32", "check", [33, 65]),
        _case("scalar", "check", [], "float16"),
        _case("empty", "check", [0, 7], "bfloat16"),
        _case("f16-transposed", "check", [129, 1000], "float16", "transposed"),
        _case("bf16-sliced", "check", [64, 4097], "bfloat16", "sliced"),
        _case("int32", "check", [12345], "int32"),
        _case("bool", "check", [31, 3], "bool"),
        _case("f16-to-f32", "check", [4, 4099], "float16", out_dtype="float32"),
        _case(
            "contiguous-format",
            "check",
            [65, 33],
            "float32",
            "transposed",
            memory_format="contiguous_format",
        ),
        _case("channels-last", "check", [2, 3, 17, 19], "float32", "channels_last"),
        _case("bench-f32", "bench", [8192, 8192]),
        _case("bench-bf16", "bench", [32, 32, 256, 128], "bfloat16"),
    ]
