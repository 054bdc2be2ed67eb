"""The filling family's cases (filling.py), one list per member. This module holds hidden
cases and is kept out of the processes that run candidate code (see
kgb.operators.import_spec_libraries): only `filling.cases` and the generator import it."""

from __future__ import annotations

from kgb.operators import Case


def _fill_case(name, tag, shape, dtype, value, layout="contiguous", value_dtype=None):
    entry = "fill__Tensor" if value_dtype else "fill__Scalar"
    params = dict(shape=shape, dtype=dtype, value=value, layout=layout, value_dtype=value_dtype)
    return Case(name, tag, params, entry=entry)


def _fill_cases() -> list[Case]:
    c = _fill_case
    return [
        c("smoke-f32", "smoke", [5, 37], "float32", 0.5),
        c("smoke-f16-sliced", "smoke", [6, 9], "float16", -1.5, "sliced"),
        c("smoke-tensor-bf16", "smoke", [3, 17], "bfloat16", 2.25, "transposed", value_dtype="float32"),
        c("scalar", "check", [], "float32", 3.0),
        c("empty", "check", [0, 5], "float32", 1.0),
        c("neg-inf-f32", "check", [8, 1, 129, 129], "float32", float("-inf")),
        c("nan-bf16", "check", [77, 77], "bfloat16", float("nan"), "transposed"),
        c("f16-rounding", "check", [4099], "float16", 0.1),
        c("column-block", "check", [512, 384], "float32", -3.5, "column_block"),
        c("sliced-3d", "check", [4, 33, 65], "bfloat16", 1e-3, "sliced"),
        c("int64-big", "check", [1000, 3], "int64", 2**40 + 3),
        c("int32-trunc", "check", [513, 7], "int32", -2.75, "transposed"),
        c("int-to-float", "check", [65, 65], "float16", 3),
        c("bool", "check", [17, 33], "bool", True, "sliced"),
        c("uint8", "check", [300], "uint8", 200),
        c("tensor-int-to-f32", "check", [1023, 5], "float32", 7, value_dtype="int64"),
        c("tensor-f32-to-int32", "check", [100], "int32", -9.5, value_dtype="float32"),
        c("tensor-to-bool", "check", [31], "bool", 0.25, value_dtype="float32"),
        c("tensor-scalar-self", "check", [], "float16", -0.125, value_dtype="float16"),
        c("bench-f32", "bench", [8192, 8192], "float32", 0.0),
        c("bench-bf16-column-block", "bench", [16384, 2048], "bfloat16", 1.0, "column_block"),
        c("bench-tensor-f16", "bench", [32, 32, 256, 128], "float16", -65504.0, value_dtype="float16"),
    ]


def _zero_cases() -> list[Case]:
    def c(name, tag, shape, dtype, layout="contiguous"):
        return Case(name, tag, dict(shape=shape, dtype=dtype, layout=layout))

    # An all-zero answer is right here; the smoke cases still fail a fresh zero tensor
    # because the result must be self.
    return [
        c("smoke-f32", "smoke", [5, 37], "float32"),
        c("smoke-f16-sliced", "smoke", [6, 9], "float16", "sliced"),
        c("smoke-int64-transposed", "smoke", [3, 17], "int64", "transposed"),
        c("scalar", "check", [], "float32"),
        c("empty", "check", [0, 5], "float32"),
        c("grad-buffer-f32", "check", [1024, 1023], "float32"),
        c("bf16-transposed", "check", [77, 129], "bfloat16", "transposed"),
        c("f16", "check", [4099], "float16"),
        c("column-block", "check", [512, 384], "float32", "column_block"),
        c("sliced-3d", "check", [4, 33, 65], "bfloat16", "sliced"),
        c("int32", "check", [513, 7], "int32", "transposed"),
        c("bool", "check", [17, 33], "bool", "sliced"),
        c("uint8", "check", [300], "uint8"),
        c("bench-f32", "bench", [8192, 8192], "float32"),
        c("bench-bf16-column-block", "bench", [16384, 2048], "bfloat16", "column_block"),
        c("bench-f16", "bench", [32, 32, 256, 128], "float16"),
    ]


def _full_cases() -> list[Case]:
    def c(name, tag, size, value, dtype=None):
        return Case(name, tag, dict(size=size, value=value, dtype=dtype))

    return [
        c("smoke-f32", "smoke", [5, 37], 0.5),
        c("smoke-int", "smoke", [3, 7], 7),
        c("smoke-f16", "smoke", [2, 3, 9], -0.1, "float16"),
        c("neg-inf-f16", "check", [2, 3, 9], float("-inf"), "float16"),
        c("scalar", "check", [], 3.25),
        c("empty", "check", [4, 0, 3], 1.0),
        c("mask-min-bf16", "check", [1, 1, 77, 77], -3.3895313892515355e38, "bfloat16"),
        c("mask-neg-inf-f32", "check", [8, 1, 129, 129], float("-inf")),
        c("f16-value", "check", [4099], 0.1, "float16"),
        c("int64-big", "check", [1000, 3], 2**40 + 3),
        c("int32", "check", [513, 7], -123456, "int32"),
        c("int-to-float", "check", [65, 65], 3, "float32"),
        c("float-to-int", "check", [100], 2.75, "int64"),
        c("bool-true", "check", [17, 33], True),
        c("bool-from-int", "check", [31], 2, "bool"),
        c("uint8", "check", [300], 200, "uint8"),
        c("nan", "check", [3, 5], float("nan")),
        c("bench-mask-f32", "bench", [16, 1, 2048, 2048], float("-inf")),
        c("bench-bf16", "bench", [8192, 8192], 1.0, "bfloat16"),
        c("bench-int64", "bench", [2**25], 7),
    ]


def _new_ones_cases() -> list[Case]:
    def c(name, tag, self_shape, size, dtype="float32", out_dtype=None):
        return Case(name, tag, dict(self_shape=self_shape, size=size, dtype=dtype, out_dtype=out_dtype))

    return [
        c("smoke-f32", "smoke", [3, 4], [5, 37]),
        c("smoke-int64-to-f16", "smoke", [7], [2, 3, 9], "int64", out_dtype="float16"),
        c("attention-mask-bf16", "check", [2, 8], [2, 1, 77, 77], "bfloat16"),
        c("scalar", "check", [5], [], "float16"),
        c("empty", "check", [5], [3, 0]),
        c("from-scalar-self", "check", [], [4099]),
        c("int32", "check", [1], [12345], "int32"),
        c("int64", "check", [3], [17, 129], "int64"),
        c("bool", "check", [2, 2], [31, 33], "bool"),
        c("f32-to-bool", "check", [2], [1000], out_dtype="bool"),
        c("bench-f32", "bench", [1], [8192, 8192]),
        c("bench-bf16", "bench", [1], [32, 32, 256, 128], "bfloat16"),
    ]


def _zeros_cases() -> list[Case]:
    def c(name, tag, size, dtype=None):
        return Case(name, tag, dict(size=size, dtype=dtype))

    # The smoke cases use integer and bool results on purpose: the self-test checks that an
    # all-zero floating answer fails, which cannot hold for this operator.
    return [
        c("smoke-int64", "smoke", [5, 37], "int64"),
        c("smoke-bool", "smoke", [3, 1, 9], "bool"),
        c("default-f32", "check", [33, 65]),
        c("scalar", "check", []),
        c("empty", "check", [0, 7]),
        c("f16", "check", [4, 4099], "float16"),
        c("bf16", "check", [2, 16, 1023], "bfloat16"),
        c("int32", "check", [12345], "int32"),
        c("uint8", "check", [129, 3], "uint8"),
        c("kv-cache-f16", "check", [2, 8, 256, 64], "float16"),
        c("bench-f32", "bench", [8192, 8192]),
        c("bench-bf16", "bench", [32, 32, 256, 128], "bfloat16"),
        c("bench-int64", "bench", [2**25], "int64"),
    ]


CASES = {
    "fill_": _fill_cases(),
    "zero_": _zero_cases(),
    "full": _full_cases(),
    "new_ones": _new_ones_cases(),
    "zeros": _zeros_cases(),
}
