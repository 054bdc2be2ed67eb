"""The copies family's cases (copies.py reads them through `cases(name)`), kept out of
the processes that run candidate code: see kgb.operators.import_spec_libraries. The
layout copies (clone, contiguous, _to_copy, to, copy_) draw their inputs in
copies_layout.py, the index copies (cat, stack, scatter, gather, index_select, rot90,
select_backward) in copies_index.py."""

from __future__ import annotations

from kgb.operators import Case

# ---- clone and contiguous: one tensor in some layout, copied exactly -----------------------


def _format_case(name, tag, shape, dtype="float32", layout="plain", memory_format=None, seed=0):
    return Case(name, tag, dict(shape=shape, dtype=dtype, layout=layout, memory_format=memory_format), seed=seed)


CLONE_CASES = [
    _format_case("smoke-f32", "smoke", (5, 7)),
    _format_case("smoke-t-f16", "smoke", (6, 3), "float16", layout="t", seed=1),
    _format_case("hidden-bf16", "check", (4, 77, 768), "bfloat16"),
    _format_case("transposed-f32", "check", (129, 65), layout="t"),
    _format_case("permuted-f16", "check", (8, 33, 17), "float16", layout="perm"),
    _format_case("gaps-to-contiguous", "check", (20, 30), layout="gaps"),
    _format_case("expanded", "check", (50, 31), layout="expand"),
    _format_case("cl-preserved", "check", (2, 8, 5, 6), layout="cl"),
    _format_case("cl-to-contiguous", "check", (2, 8, 5, 6), "bfloat16", layout="cl", memory_format="contiguous"),
    _format_case("to-channels-last", "check", (2, 3, 7, 7), memory_format="channels_last"),
    _format_case("nan-inf-f32", "check", (1000,), "special"),
    _format_case("int64", "check", (37, 41), "int64"),
    _format_case("uint8", "check", (3, 32, 32), "uint8"),
    _format_case("bool", "check", (64, 65), "bool"),
    _format_case("float64", "check", (17, 19), "float64", layout="t"),
    _format_case("zero-dim", "check", ()),
    _format_case("empty", "check", (0, 5)),
    _format_case("bench-f32", "bench", (8192, 8192)),
    _format_case("bench-t-bf16", "bench", (8192, 8192), "bfloat16", layout="t"),
    _format_case("bench-cl-f16", "bench", (64, 256, 56, 56), "float16", memory_format="channels_last"),
]

CONTIGUOUS_CASES = [
    _format_case("smoke-t-f32", "smoke", (5, 7), layout="t"),
    _format_case("smoke-already-f16", "smoke", (6, 3), "float16", seed=1),
    _format_case("heads-bf16", "check", (8, 33, 17), "bfloat16", layout="perm"),
    _format_case("transposed-f32", "check", (129, 65), layout="t"),
    _format_case("gaps", "check", (20, 30), layout="gaps"),
    _format_case("expanded", "check", (50, 31), layout="expand"),
    _format_case("cl-to-contiguous", "check", (2, 8, 5, 6), layout="cl"),
    _format_case("cl-already", "check", (2, 8, 5, 6), "float16", layout="cl", memory_format="channels_last"),
    _format_case("to-channels-last", "check", (2, 3, 7, 7), memory_format="channels_last"),
    _format_case("already-contiguous", "check", (4, 77, 768), "bfloat16"),
    _format_case("nan-inf-f32", "check", (1000,), "special"),
    _format_case("int64-t", "check", (37, 41), "int64", layout="t"),
    _format_case("bool-gaps", "check", (64, 65), "bool", layout="gaps"),
    _format_case("float64-t", "check", (17, 19), "float64", layout="t"),
    _format_case("zero-dim", "check", ()),
    _format_case("empty-t", "check", (0, 5), layout="t"),
    _format_case("bench-t-f32", "bench", (8192, 8192), layout="t"),
    _format_case("bench-heads-bf16", "bench", (64, 2048, 128), "bfloat16", layout="perm"),
    _format_case("bench-cl-f16", "bench", (64, 256, 56, 56), "float16", memory_format="channels_last"),
]

# ---- _to_copy and to: one tensor converted to another dtype and/or layout ------------------


def _to_copy_case(name, tag, shape, src, dst, layout="plain", memory_format=None, same_device=False, seed=0):
    params = dict(shape=shape, src=src, dst=dst, layout=layout, memory_format=memory_format, same_device=same_device)
    return Case(name, tag, params, seed=seed)


TO_COPY_CASES = [
    _to_copy_case("smoke-f32-f16", "smoke", (5, 7), "float32", "float16"),
    _to_copy_case("smoke-t-bf16-f32", "smoke", (6, 3), "bfloat16", "float32", layout="t", seed=1),
    _to_copy_case("f32-bf16", "check", (333, 257), "float32", "bfloat16"),
    _to_copy_case("bf16-f32-hidden", "check", (4, 77, 768), "bfloat16", "float32"),
    _to_copy_case("f16-f32-transposed", "check", (129, 65), "float16", "float32", layout="t"),
    _to_copy_case("f32-i64", "check", (1000,), "float32", "int64"),
    _to_copy_case("i64-f32", "check", (37, 41), "int64", "float32"),
    _to_copy_case("i64-f16", "check", (37, 41), "int64", "float16"),
    _to_copy_case("i32-bf16", "check", (100, 10), "int32", "bfloat16"),
    _to_copy_case("bool-f32", "check", (64, 65), "bool", "float32"),
    _to_copy_case("f32-bool", "check", (64, 65), "float32", "bool"),
    _to_copy_case("u8-f32-images", "check", (2, 3, 32, 32), "uint8", "float32"),
    _to_copy_case("i64-i32", "check", (513,), "int64", "int32"),
    _to_copy_case("f32-i8", "check", (513,), "float32", "int8"),
    _to_copy_case("f64-f32", "check", (17, 19), "float64", "float32"),
    _to_copy_case("f32-f64", "check", (17, 19), "float32", "float64"),
    _to_copy_case("f64-bf16", "check", (300,), "float64", "bfloat16"),
    _to_copy_case("same-dtype-gaps", "check", (20, 30), "float32", None, layout="gaps"),
    _to_copy_case("cl-preserved-f16", "check", (2, 8, 5, 6), "float32", "float16", layout="cl"),
    _to_copy_case("cl-to-contiguous", "check", (2, 8, 5, 6), "float16", None, layout="cl", memory_format="contiguous"),
    _to_copy_case("to-channels-last", "check", (2, 3, 7, 7), "float32", "bfloat16", memory_format="channels_last"),
    _to_copy_case("same-device-arg", "check", (10, 10), "float16", "float32", same_device=True),
    _to_copy_case("zero-dim", "check", (), "float32", "float16"),
    _to_copy_case("empty", "check", (0, 5), "float32", "float16"),
    _to_copy_case("bench-f32-bf16", "bench", (8192, 8192), "float32", "bfloat16"),
    _to_copy_case("bench-f16-f32", "bench", (64, 2048, 1024), "float16", "float32"),
    _to_copy_case("bench-cl-u8-f32", "bench", (64, 3, 512, 512), "uint8", "float32", layout="cl"),
]


def _to_case(name, tag, entry, shape, src, dst, layout="plain", memory_format=None, copy=False, seed=0):
    params = dict(shape=shape, src=src, dst=dst, layout=layout, memory_format=memory_format, copy=copy)
    return Case(name, tag, params, seed=seed, entry=entry)


TO_CASES = [
    _to_case("smoke-f32-f16", "smoke", "to_dtype", (5, 7), "float32", "float16"),
    _to_case("smoke-same-alias", "smoke", "to_dtype", (4, 3), "float32", "float32", seed=1),
    _to_case("bf16-f32-hidden", "check", "to_dtype", (4, 77, 768), "bfloat16", "float32"),
    _to_case("f16-f32-transposed", "check", "to_dtype", (129, 65), "float16", "float32", layout="t"),
    _to_case("i64-f32", "check", "to_dtype", (37, 41), "int64", "float32"),
    _to_case("f32-bool", "check", "to_dtype", (64, 65), "float32", "bool"),
    _to_case("u8-f16", "check", "to_dtype", (3, 32, 32), "uint8", "float16"),
    _to_case("copy-flag-transposed", "check", "to_dtype", (30, 20), "float32", "float32", layout="t", copy=True),
    _to_case("transposed-contiguous-alias", "check", "to_dtype", (30, 20), "float32", "float32", layout="t",
          memory_format="contiguous"),
    _to_case("cl-to-contiguous", "check", "to_dtype", (2, 8, 5, 6), "float16", "float16", layout="cl",
          memory_format="contiguous"),
    _to_case("cl-same-format-alias", "check", "to_dtype", (2, 8, 5, 6), "float16", "float16", layout="cl",
          memory_format="channels_last"),
    _to_case("to-channels-last", "check", "to_dtype", (2, 3, 7, 7), "float32", "bfloat16", memory_format="channels_last"),
    _to_case("gaps-alias", "check", "to_dtype", (20, 30), "float32", "float32", layout="gaps"),
    _to_case("gaps-convert", "check", "to_dtype", (20, 30), "float32", "float64", layout="gaps"),
    _to_case("device-f16-f32", "check", "to_device", (33, 17), "float16", "float32"),
    _to_case("device-alias", "check", "to_device", (33, 17), "int64", "int64"),
    _to_case("other-f64", "check", "to_other", (17, 19), "float32", "float64"),
    _to_case("other-alias", "check", "to_other", (17, 19), "bfloat16", "bfloat16"),
    _to_case("layout-bf16", "check", "to_dtype_layout", (100, 10), "float32", "bfloat16"),
    _to_case("layout-copy", "check", "to_dtype_layout", (2, 3, 4, 5), "int32", None, layout="cl", copy=True),
    _to_case("layout-cl", "check", "to_dtype_layout", (2, 3, 4, 5), "float32", None, memory_format="channels_last"),
    _to_case("zero-dim", "check", "to_dtype", (), "float32", "float16"),
    _to_case("empty", "check", "to_dtype", (0, 5), "float32", "float16"),
    _to_case("bench-f32-bf16", "bench", "to_dtype", (8192, 8192), "float32", "bfloat16"),
    _to_case("bench-other-f16-f32", "bench", "to_other", (64, 2048, 1024), "float16", "float32"),
]

# ---- copy_: src converted into an existing self ----------------------------------------------


def _copy_case(name, tag, shape, dst, src, src_shape=None, dst_layout="plain", src_layout="plain", seed=0):
    params = dict(shape=shape, dst=dst, src=src, src_shape=shape if src_shape is None else src_shape,
                  dst_layout=dst_layout, src_layout=src_layout)
    return Case(name, tag, params, seed=seed)


COPY_CASES = [
    _copy_case("smoke-f32", "smoke", (5, 7), "float32", "float32"),
    _copy_case("smoke-row-into-t-f16", "smoke", (6, 3), "float16", "float32", src_shape=(3,), dst_layout="t", seed=1),
    _copy_case("f32-into-bf16", "check", (4, 77, 768), "bfloat16", "float32"),
    _copy_case("t-f16-into-f32", "check", (129, 65), "float32", "float16", src_layout="t"),
    _copy_case("into-gaps", "check", (20, 30), "float32", "float32", dst_layout="gaps", src_layout="t"),
    _copy_case("into-channels-last", "check", (2, 8, 5, 6), "float16", "float16", dst_layout="cl"),
    _copy_case("from-channels-last", "check", (2, 8, 5, 6), "bfloat16", "float32", src_layout="cl"),
    _copy_case("f32-into-i64", "check", (37, 41), "int64", "float32"),
    _copy_case("i64-into-f32", "check", (37, 41), "float32", "int64"),
    _copy_case("i32-into-bf16", "check", (100, 10), "bfloat16", "int32"),
    _copy_case("f32-into-bool", "check", (64, 65), "bool", "float32"),
    _copy_case("bool-into-f32", "check", (64, 65), "float32", "bool"),
    _copy_case("i64-into-u8", "check", (3, 32, 32), "uint8", "int64"),
    _copy_case("f32-into-f64", "check", (17, 19), "float64", "float32", src_layout="t"),
    _copy_case("scalar-broadcast", "check", (33, 17), "float32", "float32", src_shape=()),
    _copy_case("column-broadcast", "check", (33, 17), "float16", "float16", src_shape=(33, 1)),
    _copy_case("zero-dim", "check", (), "float16", "float32"),
    _copy_case("empty", "check", (0, 5), "float32", "float32"),
    _copy_case("bench-bf16-into-f32", "bench", (8192, 8192), "float32", "bfloat16"),
    _copy_case("bench-transpose-f32", "bench", (8192, 8192), "float32", "float32", src_layout="t"),
    _copy_case("bench-into-cl-f16", "bench", (64, 256, 56, 56), "float16", "float16", dst_layout="cl"),
]

# ---- cat and stack: several tensors joined, their dtypes promoted ---------------------------

# Each part: (shape, dtype) or (shape, dtype, "t") for a transposed view of that shape.


def _cat_case(name, tag, parts, dim, seed=0):
    return Case(name, tag, dict(parts=parts, dim=dim), seed=seed)


CAT_CASES = [
    _cat_case("smoke-f32", "smoke", [((3, 5), "float32"), ((2, 5), "float32")], 0),
    _cat_case("smoke-mixed", "smoke", [((4, 3), "float16"), ((4, 6), "float32"), ((0,), "float32")], 1, seed=1),
    _cat_case("kv-append-bf16", "check", [((2, 8, 100, 64), "bfloat16"), ((2, 8, 1, 64), "bfloat16")], 2),
    _cat_case("channels-f16", "check", [((2, 64, 13, 13), "float16"), ((2, 32, 13, 13), "float16"), ((2, 3, 13, 13), "float16")], 1),
    _cat_case("last-dim-f32", "check", [((5, 7, 33), "float32"), ((5, 7, 1), "float32"), ((5, 7, 100), "float32")], -1),
    _cat_case("many-parts", "check", [((3, 17), "float32")] * 12, 0),
    _cat_case("transposed", "check", [((40, 30), "float32", "t"), ((40, 50), "float32"), ((40, 7), "float32", "t")], 1),
    _cat_case("empty-part", "check", [((4, 0, 6), "float32"), ((4, 3, 6), "float32")], 1),
    _cat_case("all-empty", "check", [((0, 5), "float16"), ((0, 5), "float16")], 0),
    _cat_case("int-float", "check", [((10, 4), "int64"), ((10, 4), "bfloat16")], 0),
    _cat_case("int-bool", "check", [((9,), "bool"), ((7,), "int32")], 0),
    _cat_case("int64-only", "check", [((300,), "int64"), ((1025,), "int64")], 0),
    _cat_case("bench-kv-bf16", "bench", [((16, 32, 2000, 128), "bfloat16"), ((16, 32, 48, 128), "bfloat16")], 2),
    _cat_case("bench-channels-f16", "bench", [((32, 256, 56, 56), "float16"), ((32, 256, 56, 56), "float16")], 1),
    _cat_case("bench-rows-f32", "bench", [((8192, 4096), "float32")] * 4, 0),
]

def _stack_case(name, tag, shape, count, dim, dtypes=("float32",), transpose=False, seed=0):
    return Case(name, tag, dict(shape=shape, count=count, dim=dim, dtypes=dtypes, transpose=transpose), seed=seed)


STACK_CASES = [
    _stack_case("smoke-f32", "smoke", (3, 5), 2, 0),
    _stack_case("smoke-last-mixed", "smoke", (4, 3), 3, -1, ("float16", "float32"), seed=1),
    _stack_case("heads-bf16", "check", (2, 77, 64), 12, 1, ("bfloat16",)),
    _stack_case("last-dim-f32", "check", (33, 65), 4, 2),
    _stack_case("middle-f16", "check", (5, 7, 9), 3, -2, ("float16",)),
    _stack_case("scalars", "check", (), 7, 0),
    _stack_case("empty", "check", (0, 4), 3, 1),
    _stack_case("transposed", "check", (40, 30), 3, 0, transpose=True),
    _stack_case("int-float", "check", (10, 4), 2, 0, ("int64", "float16")),
    _stack_case("bool", "check", (100,), 5, 1, ("bool",)),
    _stack_case("bench-heads-bf16", "bench", (8, 4096, 128), 32, 1, ("bfloat16",)),
    _stack_case("bench-pair-f32", "bench", (4096, 4096), 2, -1),
]

# ---- scatter and gather: an index tensor picks positions along one dim ---------------------


def _scatter_case(name, tag, entry, shape, dim, ishape, dtype="float32", sshape=None, layout="plain", value=None,
                  seed=0):
    params = dict(shape=shape, dim=dim, ishape=ishape, sshape=sshape or ishape, dtype=dtype, layout=layout, value=value)
    return Case(name, tag, params, seed=seed, entry=entry)


SCATTER_CASES = [
    _scatter_case("smoke-src-f32", "smoke", "scatter_src", (6, 9), 1, (6, 4)),
    _scatter_case("smoke-value-f16", "smoke", "scatter_value", (7, 5), 0, (3, 5), "float16", value=-1.5, seed=1),
    _scatter_case("onehot-f32", "check", "scatter_value", (64, 1000), 1, (64, 1), value=1.0),
    _scatter_case("labels-bf16", "check", "scatter_src", (33, 500), 1, (33, 50), "bfloat16"),
    _scatter_case("dim0-larger-src", "check", "scatter_src", (100, 20), 0, (70, 13), sshape=(80, 19)),
    _scatter_case("3d-middle-f16", "check", "scatter_src", (4, 129, 17), 1, (4, 100, 17), "float16"),
    _scatter_case("4d-last", "check", "scatter_src", (2, 3, 5, 40), -1, (2, 3, 5, 7)),
    _scatter_case("transposed", "check", "scatter_src", (50, 60), 1, (50, 9), layout="transposed"),
    _scatter_case("zero-dim", "check", "scatter_src", (), 0, ()),
    _scatter_case("empty-index", "check", "scatter_src", (10, 4), 1, (10, 0)),
    _scatter_case("int64-value", "check", "scatter_value", (30, 40), 1, (30, 11), "int64", value=-7),
    _scatter_case("int32-src", "check", "scatter_src", (30, 40), 0, (20, 40), "int32"),
    _scatter_case("bool-value", "check", "scatter_value", (30, 40), 1, (30, 5), "bool", value=True),
    _scatter_case("bench-onehot-f32", "bench", "scatter_value", (8192, 32000), 1, (8192, 1), value=1.0),
    _scatter_case("bench-src-bf16", "bench", "scatter_src", (4096, 8192), 1, (4096, 4096), "bfloat16"),
]

def _gather_case(name, tag, shape, dim, ishape, dtype="float32", layout="plain", seed=0):
    return Case(name, tag, dict(shape=shape, dim=dim, ishape=ishape, dtype=dtype, layout=layout), seed=seed)


GATHER_CASES = [
    _gather_case("smoke-f32", "smoke", (6, 9), 1, (6, 4)),
    _gather_case("smoke-dim0-f16", "smoke", (7, 5), 0, (3, 5), "float16", seed=1),
    _gather_case("logprobs-f32", "check", (64, 32000), -1, (64, 1)),
    _gather_case("topk-bf16", "check", (33, 1000), 1, (33, 50), "bfloat16"),
    _gather_case("dim0-partial", "check", (100, 20), 0, (70, 13)),
    _gather_case("3d-middle-f16", "check", (4, 129, 17), 1, (4, 300, 17), "float16"),
    _gather_case("4d-last", "check", (2, 3, 5, 40), 3, (2, 3, 5, 7)),
    _gather_case("transposed-self", "check", (50, 60), 1, (50, 9), layout="tself"),
    _gather_case("expanded-index", "check", (8, 16, 32), 1, (8, 5, 32), layout="expand"),
    _gather_case("transposed-index", "check", (40, 30), 0, (25, 30), layout="tindex"),
    _gather_case("zero-dim", "check", (), 0, ()),
    _gather_case("empty-index", "check", (10, 4), 1, (10, 0)),
    _gather_case("int64-data", "check", (30, 40), 1, (30, 40), "int64"),
    _gather_case("bool-data", "check", (30, 40), 0, (20, 40), "bool"),
    _gather_case("bench-logprobs-f32", "bench", (4096, 32000), 1, (4096, 64)),
    _gather_case("bench-dense-bf16", "bench", (2048, 8192), 1, (2048, 8192), "bfloat16"),
]

# ---- index_select, rot90, select_backward ----------------------------------------------------


def _index_select_case(name, tag, shape, dim, count, dtype="float32", idx="int64", transpose=False, seed=0):
    params = dict(shape=shape, dim=dim, count=count, dtype=dtype, idx=idx, transpose=transpose)
    return Case(name, tag, params, seed=seed)


INDEX_SELECT_CASES = [
    _index_select_case("smoke-rows-f32", "smoke", (11, 7), 0, 5),
    _index_select_case("smoke-cols-f16", "smoke", (6, 9), -1, 4, "float16", seed=1),
    _index_select_case("embedding-rows-bf16", "check", (1000, 768), 0, 300, "bfloat16"),
    _index_select_case("middle-dim-f32", "check", (4, 77, 33), 1, 50),
    _index_select_case("last-dim-f16", "check", (3, 5, 129), 2, 200, "float16"),
    _index_select_case("int32-index", "check", (257, 31), 0, 100, idx="int32"),
    _index_select_case("strided-index", "check", (50, 13), 0, 20, idx="strided"),
    _index_select_case("scalar-index", "check", (20, 6), 1, None),
    _index_select_case("zero-dim-self", "check", (), 0, 1),
    _index_select_case("empty-index", "check", (8, 5), 0, 0),
    _index_select_case("transposed", "check", (64, 40), 0, 33, transpose=True),
    _index_select_case("int64-data", "check", (100, 3), 0, 64, "int64"),
    _index_select_case("bool-data", "check", (7, 100), 1, 20, "bool"),
    _index_select_case("bench-vocab-f16", "bench", (50257, 1024), 0, 16384, "float16"),
    _index_select_case("bench-cols-f32", "bench", (4096, 8192), 1, 2048),
]

def _rot90_case(name, tag, shape, k, dims, dtype="float32", transpose=False, seed=0):
    return Case(name, tag, dict(shape=shape, k=k, dims=dims, dtype=dtype, transpose=transpose), seed=seed)


ROT90_CASES = [
    _rot90_case("smoke-k1", "smoke", (5, 7), 1, [0, 1]),
    _rot90_case("smoke-k2-f16", "smoke", (2, 3, 4), 2, [1, 2], "float16", seed=1),
    _rot90_case("k3-f32", "check", (33, 65), 3, [0, 1]),
    _rot90_case("k0-copy", "check", (17, 9), 0, [0, 1]),
    _rot90_case("negative-k", "check", (6, 10, 12), -1, [1, 2]),
    _rot90_case("large-k", "check", (6, 10, 12), 7, [2, 0]),
    _rot90_case("images-bf16", "check", (4, 3, 32, 48), 1, [-2, -1], "bfloat16"),
    _rot90_case("batch-last", "check", (7, 8, 9, 3), 2, [0, 2]),
    _rot90_case("transposed", "check", (40, 30), 1, [0, 1], transpose=True),
    _rot90_case("int64", "check", (11, 13), 3, [1, 0], "int64"),
    _rot90_case("bool", "check", (11, 13), 1, [0, 1], "bool"),
    _rot90_case("empty", "check", (0, 5), 1, [0, 1]),
    _rot90_case("bench-images-f16", "bench", (64, 3, 512, 512), 1, [2, 3], "float16"),
    _rot90_case("bench-matrix-f32", "bench", (8192, 8192), 2, [0, 1]),
]

def _select_backward_case(name, tag, sizes, dim, index, dtype="float32", transpose=False, seed=0):
    return Case(name, tag, dict(sizes=sizes, dim=dim, index=index, dtype=dtype, transpose=transpose), seed=seed)


SELECT_BACKWARD_CASES = [
    _select_backward_case("smoke-f32", "smoke", (4, 5, 6), 1, 2),
    _select_backward_case("smoke-last-f16", "smoke", (3, 7), -1, -1, "float16", seed=1),
    _select_backward_case("cls-token-bf16", "check", (8, 197, 768), 1, 0, "bfloat16"),
    _select_backward_case("last-token-f32", "check", (4, 77, 512), 1, -1),
    _select_backward_case("first-dim", "check", (5, 33, 17), 0, 3, "float16"),
    _select_backward_case("inner-dim", "check", (2, 3, 4, 129), 3, 100),
    _select_backward_case("vector", "check", (1000,), 0, 999),
    _select_backward_case("transposed-grad", "check", (6, 40, 30), 0, 5, transpose=True),
    _select_backward_case("int64", "check", (10, 11), 1, 4, "int64"),
    _select_backward_case("bool", "check", (10, 11), 0, 9, "bool"),
    _select_backward_case("empty", "check", (0, 4, 3), 2, 1),
    _select_backward_case("bench-cls-f16", "bench", (256, 197, 1024), 1, 0, "float16"),
    _select_backward_case("bench-last-f32", "bench", (64, 2048, 1024), 1, -1),
]


# member -> its cases
CASES = {
    "_to_copy": TO_COPY_CASES,
    "clone": CLONE_CASES,
    "contiguous": CONTIGUOUS_CASES,
    "copy_": COPY_CASES,
    "to": TO_CASES,
    "cat": CAT_CASES,
    "stack": STACK_CASES,
    "scatter": SCATTER_CASES,
    "gather": GATHER_CASES,
    "index_select": INDEX_SELECT_CASES,
    "rot90": ROT90_CASES,
    "select_backward": SELECT_BACKWARD_CASES,
}
