"""The strided-empty family's cases (strided_empty.py), one list per member. This module
holds hidden cases and is kept out of the processes that run candidate code (see
kgb.operators.import_spec_libraries): only `strided_empty.cases` and the generator import
it."""

from __future__ import annotations

from kgb.operators import Case


def _empty_strided_cases() -> list[Case]:
    def c(name, tag, size, stride, dtype=None):
        return Case(name, tag, dict(size=size, stride=stride, dtype=dtype))

    # Floating smoke cases have gaps in their strides: the self-test's all-zero stand-in is
    # then contiguous, and fails on strides as it should.
    return [
        c("smoke-padded-rows", "smoke", [4, 5], [8, 1]),
        c("smoke-column-major-int", "smoke", [3, 4, 5], [1, 3, 12], "int64"),
        c("smoke-f16-gaps", "smoke", [2, 3, 4], [40, 12, 2], "float16"),
        c("scalar", "check", [], []),
        c("empty", "check", [0, 5], [5, 1]),
        c("empty-odd-strides", "check", [3, 0, 2], [100, 7, 1], "bfloat16"),
        c("contiguous", "check", [7, 129], [129, 1], "float16"),
        c("broadcast-zero-stride", "check", [4, 5, 6], [0, 6, 1]),
        c("overlapping", "check", [10, 4], [2, 1], "int32"),
        c("channels-last", "check", [2, 3, 17, 19], [969, 1, 57, 3], "bfloat16"),
        c("transposed", "check", [1024, 4096], [1, 1024], "float32"),
        c("bool", "check", [5, 7], [16, 2], "bool"),
        c("size-one-dims", "check", [1, 8, 1], [123, 1, 456], "float32"),
        c("bench-f32", "bench", [8192, 8192], [8192, 1]),
        c("bench-bf16-padded", "bench", [4096, 11008], [11072, 1], "bfloat16"),
    ]


def _new_empty_strided_cases() -> list[Case]:
    def c(name, tag, size, stride, self_dtype="float32", dtype=None, on_device=False):
        params = dict(size=size, stride=stride, self_dtype=self_dtype, dtype=dtype, on_device=on_device)
        return Case(name, tag, params)

    # As for empty_strided, floating smoke cases have gaps in their strides.
    return [
        c("smoke-padded-rows", "smoke", [4, 5], [8, 1]),
        c("smoke-column-major-int", "smoke", [3, 4, 5], [1, 3, 12], "int64"),
        c("smoke-f16-gaps-to-f32", "smoke", [2, 3, 4], [40, 12, 2], "float16", "float32"),
        c("scalar", "check", [], [], "bfloat16"),
        c("empty", "check", [0, 5], [5, 1]),
        c("empty-odd-strides", "check", [3, 0, 2], [100, 7, 1], "bfloat16"),
        c("contiguous-f16", "check", [7, 129], [129, 1], "float16"),
        c("broadcast-zero-stride", "check", [4, 5, 6], [0, 6, 1]),
        c("overlapping-int32", "check", [10, 4], [2, 1], "int32"),
        c("channels-last", "check", [2, 3, 17, 19], [969, 1, 57, 3], "bfloat16"),
        c("transposed", "check", [1024, 4096], [1, 1024]),
        c("bool", "check", [5, 7], [16, 2], "bool"),
        c("f32-to-int64", "check", [6, 6], [1, 6], "float32", "int64"),
        c("explicit-device", "check", [1, 8, 1], [123, 1, 456], "float16", on_device=True),
        c("bench-f32", "bench", [8192, 8192], [8192, 1]),
        c("bench-bf16-padded", "bench", [4096, 11008], [11072, 1], "bfloat16"),
    ]


CASES = {"empty_strided": _empty_strided_cases(), "new_empty_strided": _new_empty_strided_cases()}
