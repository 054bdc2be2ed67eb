"""The view operators' cases (view_ops.py reads them through `cases(name)`), kept out of
the processes that run candidate code: see kgb.operators.import_spec_libraries."""

from __future__ import annotations

from kgb.operators import Case

# ---- expand, expand_as: broadcast to a shape -------------------------------------------------


def _expand_case(name, tag, shape, size, dtype="float32", layout="contiguous"):
    return Case(name, tag, dict(shape=shape, size=size, dtype=dtype, layout=layout))


EXPAND_CASES = [
    _expand_case("smoke-rows", "smoke", [1, 37], [5, 37]),
    _expand_case("smoke-new-dims-f16", "smoke", [3, 1], [2, -1, 4], "float16"),
    _expand_case("smoke-scalar-int", "smoke", [], [3, 4], "int64"),
    _expand_case("attention-mask", "check", [2, 1, 1, 77], [2, 8, 77, 77], "bool"),
    _expand_case("kv-heads-bf16", "check", [4, 8, 1, 128, 64], [4, 8, 4, 128, 64], "bfloat16"),
    _expand_case("bias-transposed", "check", [65, 1], [3, 65, 33], "float32", "transposed"),
    _expand_case("sliced-self", "check", [1, 40], [7, 40], "float16", "sliced"),
    _expand_case("same-shape", "check", [5, 6], [5, 6]),
    _expand_case("all-minus-one", "check", [5, 1, 6], [-1, -1, -1], "int32"),
    _expand_case("to-empty", "check", [1, 6], [0, 6]),
    _expand_case("empty-self", "check", [0, 1], [0, 9]),
    _expand_case("scalar-to-scalar", "check", [], []),
    _expand_case("bench-mask", "bench", [8, 1, 1, 4096], [8, 32, 4096, 4096], "bool"),
    _expand_case("bench-kv-bf16", "bench", [8, 8, 1, 2048, 128], [8, 8, 4, 2048, 128], "bfloat16"),
]


def _expand_as_case(name, tag, shape, other, dtype="float32", layout="contiguous", other_dtype="float32"):
    return Case(
        name,
        tag,
        dict(shape=shape, other=other, dtype=dtype, layout=layout, other_dtype=other_dtype),
    )


EXPAND_AS_CASES = [
    _expand_as_case("smoke-rows", "smoke", [1, 37], [5, 37]),
    _expand_as_case("smoke-new-dims-f16", "smoke", [3, 1], [2, 3, 4], "float16"),
    _expand_as_case("smoke-scalar-int", "smoke", [], [3, 4], "int64", other_dtype="bfloat16"),
    _expand_as_case("attention-mask", "check", [2, 1, 1, 77], [2, 8, 77, 77], "bool", other_dtype="float16"),
    _expand_as_case(
        "grad-like-bf16", "check", [1, 128, 1], [16, 128, 64], "bfloat16", other_dtype="bfloat16"
    ),
    _expand_as_case("bias-transposed", "check", [65, 1], [3, 65, 33], "float32", "transposed"),
    _expand_as_case("sliced-self", "check", [1, 40], [7, 40], "float16", "sliced"),
    _expand_as_case("same-shape", "check", [5, 6], [5, 6], "int32"),
    _expand_as_case("to-empty", "check", [1, 6], [0, 6]),
    _expand_as_case("scalar-to-scalar", "check", [], []),
    _expand_as_case("bench-mask", "bench", [8, 1, 1, 4096], [8, 32, 128, 4096], "bool"),
    _expand_as_case("bench-bf16", "bench", [1, 4096, 1], [64, 4096, 1024], "bfloat16"),
]


# ---- narrow, select, unsqueeze: one dim sliced, taken or added -------------------------------


def _narrow_case(
    name, tag, shape, dim, start, length, dtype="float32", layout="contiguous", tensor_start=False
):
    params = dict(shape=shape, dim=dim, start=start, length=length, dtype=dtype, layout=layout)
    return Case(name, tag, params, entry="narrow_Tensor" if tensor_start else "narrow")


NARROW_CASES = [
    _narrow_case("smoke-cols", "smoke", [5, 37], 1, 3, 20),
    _narrow_case("smoke-rows-f16-neg-dim", "smoke", [9, 6], -2, 2, 4, "float16"),
    _narrow_case("smoke-tensor-start-int", "smoke", [4, 10], 1, 7, 3, "int64", tensor_start=True),
    _narrow_case("qkv-split-bf16", "check", [2, 128, 3 * 768], -1, 768, 768, "bfloat16"),
    _narrow_case("kv-cache-prefix", "check", [2, 8, 512, 64], 2, 0, 77, "float16"),
    _narrow_case("negative-start", "check", [40, 33], 0, -10, 10),
    _narrow_case("transposed", "check", [65, 33], 1, 5, 20, "float32", "transposed"),
    _narrow_case("sliced-self", "check", [12, 40], 1, 3, 10, "float16", "sliced"),
    _narrow_case("zero-length", "check", [6, 7], 1, 7, 0),
    _narrow_case("full-length", "check", [6, 7], 0, 0, 6, "int32"),
    _narrow_case("1d", "check", [1000], 0, 999, 1, "bool"),
    _narrow_case("tensor-start-negative", "check", [3, 50, 4], 1, -20, 15, "bfloat16", tensor_start=True),
    _narrow_case(
        "tensor-start-transposed",
        "check",
        [30, 20],
        0,
        4,
        9,
        "float32",
        "transposed",
        tensor_start=True,
    ),
    _narrow_case("bench-qkv", "bench", [8, 2048, 3 * 4096], 2, 4096, 4096, "bfloat16"),
    _narrow_case("bench-rows", "bench", [65536, 1024], 0, 1024, 32768, "float32", tensor_start=True),
]


def _select_case(name, tag, shape, dim, index, dtype="float32", layout="contiguous"):
    return Case(name, tag, dict(shape=shape, dim=dim, index=index, dtype=dtype, layout=layout))


SELECT_CASES = [
    _select_case("smoke-row", "smoke", [5, 37], 0, 3),
    _select_case("smoke-col-f16-neg", "smoke", [9, 6], -1, -2, "float16"),
    _select_case("smoke-1d-int", "smoke", [10], 0, 7, "int64"),
    _select_case("cls-token-bf16", "check", [8, 197, 768], 1, 0, "bfloat16"),
    _select_case("last-token", "check", [4, 77, 512], 1, -1, "float16"),
    _select_case("qkv-unbind", "check", [3, 2, 12, 64, 64], 0, 2),
    _select_case("transposed", "check", [65, 33], 1, 32, "float32", "transposed"),
    _select_case("sliced-self", "check", [12, 40], 0, 11, "float16", "sliced"),
    _select_case("middle-dim-int32", "check", [6, 7, 8], -2, 3, "int32"),
    _select_case("bool", "check", [33, 3], 1, 1, "bool"),
    _select_case("empty-rest", "check", [4, 0, 5], 0, 2),
    _select_case("bench-cls", "bench", [256, 577, 1024], 1, 0, "bfloat16"),
    _select_case("bench-qkv", "bench", [3, 16, 32, 1024, 128], 0, 1, "float16"),
]


def _unsqueeze_case(name, tag, shape, dim, dtype="float32", layout="contiguous"):
    return Case(name, tag, dict(shape=shape, dim=dim, dtype=dtype, layout=layout))


UNSQUEEZE_CASES = [
    _unsqueeze_case("smoke-front", "smoke", [5, 37], 0),
    _unsqueeze_case("smoke-last-f16-transposed", "smoke", [9, 6], -1, "float16", "transposed"),
    _unsqueeze_case("smoke-scalar-int", "smoke", [], 0, "int64"),
    _unsqueeze_case("mask-heads-bf16", "check", [2, 77, 77], 1, "bfloat16"),
    _unsqueeze_case("middle-negative", "check", [4, 5, 6], -2),
    _unsqueeze_case("end", "check", [4, 5, 6], 3, "int32"),
    _unsqueeze_case("sliced", "check", [12, 40], 1, "float16", "sliced"),
    _unsqueeze_case("transposed-front", "check", [65, 33], -3, "float32", "transposed"),
    _unsqueeze_case("scalar-negative", "check", [], -1, "float32"),
    _unsqueeze_case("empty", "check", [0, 5], 1),
    _unsqueeze_case("bool", "check", [33, 3], 2, "bool"),
    _unsqueeze_case("bench-bf16", "bench", [64, 4096, 1024], 1, "bfloat16"),
    _unsqueeze_case("bench-f32", "bench", [8192, 8192], -1, "float32", "transposed"),
]


# ---- t: a matrix transposed ----------------------------------------------------------------


def _t_case(name, tag, shape, dtype="float32", layout="contiguous"):
    return Case(name, tag, dict(shape=shape, dtype=dtype, layout=layout))


T_CASES = [
    _t_case("smoke-matrix", "smoke", [5, 37]),
    _t_case("smoke-f16-transposed", "smoke", [9, 6], "float16", "transposed"),
    _t_case("smoke-1d-int", "smoke", [10], "int64"),
    _t_case("weight-bf16", "check", [3072, 768], "bfloat16"),
    _t_case("sliced", "check", [12, 40], "float16", "sliced"),
    _t_case("row-block", "check", [64, 33], "float32", "row_block"),
    _t_case("scalar", "check", []),
    _t_case("1d-f32", "check", [4097]),
    _t_case("column", "check", [77, 1], "int32"),
    _t_case("empty", "check", [0, 5]),
    _t_case("bool", "check", [33, 3], "bool"),
    _t_case("bench-weight-bf16", "bench", [11008, 4096], "bfloat16"),
    _t_case("bench-weight-f32", "bench", [4096, 4096], "float32", "transposed"),
]


# member -> its cases
CASES = {
    "expand": EXPAND_CASES,
    "expand_as": EXPAND_AS_CASES,
    "narrow": NARROW_CASES,
    "select": SELECT_CASES,
    "t": T_CASES,
    "unsqueeze": UNSQUEEZE_CASES,
}
