"""The indexing family's cases (indexing.py reads them through `cases(name)`), kept out
of the processes that run candidate code: see kgb.operators.import_spec_libraries."""

from __future__ import annotations

import dataclasses

from kgb.operators import Case

# ---------------------------------------------------------------- index

# Index entries as indexing._index reads them.


def index_case(name, tag, shape, dtype, indices, transpose=False, seed=0):
    return Case(name, tag, dict(shape=shape, dtype=dtype, indices=indices, transpose=transpose), seed=seed)


INDEX_CASES = [
    index_case("smoke-rows-f32", "smoke", (9, 7), "float32", [("i64", (5,), 0, True)]),
    index_case("smoke-mask-f16", "smoke", (6, 5), "float16", [None, ("bool", (5,))], seed=1),
    index_case("embedding-like-bf16", "check", (1000, 64), "bfloat16", [("i64", (8, 33), 0, False)]),
    index_case("middle-dim-f32", "check", (4, 50, 6), "float32", [None, ("i64", (2, 3), 1, True)]),
    index_case("split-dims-f32", "check", (6, 7, 8), "float32", [("i64", (5,), 0, False), None, ("i64", (5,), 2, True)]),
    index_case("broadcast-f16", "check", (9, 11, 3), "float16", [("i64", (4, 1), 0, True), ("i64", (1, 5), 1, False)]),
    index_case("all-dims-i64", "check", (13, 17), "int64", [("i64", (100,), 0, True), ("i64", (100,), 1, True)]),
    index_case("int32-index", "check", (300, 33), "float32", [("i32", (129,), 0, False)]),
    index_case("scalar-index", "check", (10, 3, 4), "float32", [None, ("i64", (), 1, False)]),
    index_case("empty-index", "check", (10, 3), "float32", [("i64", (0,), 0, False)]),
    index_case("transposed", "check", (37, 19), "float16", [("i64", (21,), 0, False)], transpose=True),
    index_case("mask-2d-bf16", "check", (16, 10, 3), "bfloat16", [("bool", (16, 10))]),
    index_case("mask-full-f32", "check", (33, 65), "float32", [("bool", (33, 65))]),
    index_case("mask-empty", "check", (5, 6), "float32", [("bool", (5,), 0.0)]),
    index_case("mask-and-int", "check", (8, 12), "float32", [("bool", (8,), 1.0), ("i64", (8,), 1, True)]),
    index_case("bool-data", "check", (40, 3), "bool", [("i64", (17,), 0, False)]),
    index_case("4d-channels", "check", (2, 8, 5, 5), "float32", [None, ("i64", (3,), 1, False), None, ("i64", (3,), 3, False)]),
    index_case("bench-rows-f16", "bench", (32000, 4096), "float16", [("i64", (8192,), 0, False)]),
    index_case("bench-mask-f32", "bench", (4096, 4096), "float32", [("bool", (4096, 4096))]),
    index_case("bench-middle-bf16", "bench", (64, 2048, 128), "bfloat16", [None, ("i64", (1024,), 1, False)]),
]


# ---------------------------------------------------------------- index_put_, _index_put_impl_

# Index entries as indexing._indices reads them; `values` is a shape that broadcasts to the
# indexed shape.


def put_case(name, tag, shape, dtype, indices, values, accumulate=False, transpose=False, reduction=1, seed=0):
    params = dict(shape=shape, dtype=dtype, indices=indices, values=values, accumulate=accumulate, transpose=transpose)
    return Case(name, tag, params, seed=seed, reduction=reduction)


PUT_CASES = [
    put_case("smoke-rows-f32", "smoke", (7, 5), "float32", [("u", (3,), 0)], (3, 5)),
    put_case("smoke-acc-f16", "smoke", (6, 4), "float16", [("r", (9,), 0, True)], (9, 4), accumulate=True, reduction=10, seed=1),
    put_case("kv-rows-bf16", "check", (64, 8, 32), "bfloat16", [("u", (20,), 0)], (20, 8, 32)),
    put_case("middle-dim-f32", "check", (4, 50, 6), "float32", [None, ("u", (2, 3), 1)], (4, 2, 3, 6)),
    put_case("scalar-value", "check", (30, 17), "float32", [("u", (7,), 0)], ()),
    put_case("row-broadcast-f16", "check", (30, 17), "float16", [("u", (7,), 0)], (17,)),
    put_case("two-dims-i64", "check", (13, 17), "int64", [("u", (50,), 0), ("u", (50,), 1)], (50,)),
    put_case("split-dims-f32", "check", (6, 7, 8), "float32", [("u", (5,), 0), None, ("u", (5,), 2)], (5, 7)),
    put_case("outer-product", "check", (9, 11, 3), "float32", [("u", (4, 1), 0), ("u2", (1, 5), 1)], (4, 5, 3)),
    put_case("int32-index", "check", (300, 33), "float32", [("i32u", (129,), 0)], (129, 33)),
    put_case("transposed-self", "check", (37, 19), "float16", [("u", (21,), 0)], (21, 19), transpose=True),
    put_case("mask-fill-f32", "check", (33, 65), "float32", [("bool", (33, 65), 0.5)], ()),
    put_case("mask-rows-bf16", "check", (16, 10), "bfloat16", [("bool", (16,), 0.5)], (10,)),
    put_case("mask-none", "check", (5, 6), "float32", [None, ("bool", (6,), 0.0)], ()),
    put_case("bool-data", "check", (40, 3), "bool", [("u", (17,), 0)], (17, 3)),
    put_case("acc-f32", "check", (100, 64), "float32", [("r", (1000,), 0, True)], (1000, 64), accumulate=True, reduction=30),
    put_case("acc-bf16", "check", (50, 16), "bfloat16", [("r", (120,), 0, False)], (120, 16), accumulate=True, reduction=10),
    put_case("acc-i64", "check", (50,), "int64", [("r", (200,), 0, True)], (200,), accumulate=True),
    put_case("acc-i32-2d", "check", (7, 9), "int32", [("r", (300,), 0, False), ("r", (300,), 1, False)], (), accumulate=True),
    put_case("acc-f32-middle", "check", (3, 40, 5), "float32", [None, ("r", (64,), 1, True)], (3, 64, 5), accumulate=True, reduction=10),
    put_case("bench-rows-f16", "bench", (32000, 4096), "float16", [("u", (8192,), 0)], (8192, 4096)),
    put_case("bench-acc-f32", "bench", (32000, 1024), "float32", [("r", (16384,), 0, False)], (16384, 1024), accumulate=True, reduction=8),
    put_case("bench-mask-f32", "bench", (4096, 4096), "float32", [("bool", (4096, 4096), 0.5)], ()),
]

# _index_put_impl_ runs the same cases; odd seeds call it with unsafe=True
IMPL_SEEDS = {"smoke-rows-f32": 2, "kv-rows-bf16": 3, "acc-f32": 5}
IMPL_CASES = [dataclasses.replace(c, seed=IMPL_SEEDS.get(c.name, c.seed)) for c in PUT_CASES]


# member -> its cases
CASES = {"index": INDEX_CASES, "index_put_": PUT_CASES, "_index_put_impl_": IMPL_CASES}
