"""The comparison family's cases (comparison.py): one table for eq, gt and le.
Kept out of the processes that run candidate code (kgb.operators.import_spec_libraries):
comparison.cases imports this module when a judge loads a spec."""

from __future__ import annotations

from kgb.operators import Case


def _case(op, name, tag, shape, other, dtype, other_dtype=None, layout=None, other_layout=None, seed=0):
    """`other` is a shape (Tensor entry) or a Python number (Scalar entry). Layouts: `t` is a
    transposed view, `slice` a view of every other column."""
    entry = f"{op}_Tensor" if isinstance(other, tuple) else f"{op}_Scalar"
    params = dict(shape=shape, other=other, dtype=dtype, other_dtype=other_dtype or dtype,
                  layout=layout, other_layout=other_layout)
    return Case(name, tag, params, seed=seed, entry=entry)


def cases(op: str) -> list[Case]:
    rows = [
        ("smoke-f32", "smoke", (5, 37), (37,), "float32"),
        ("smoke-t-f16-bf16", "smoke", (9, 6), (6,), "float16", "bfloat16", "t", None, 1),
        ("smoke-scalar-i32", "smoke", (3, 7), 2, "int32", None, None, None, 2),
        ("bf16", "check", (4, 512, 768), (4, 512, 768), "bfloat16"),
        ("f16-rows", "check", (2, 1024, 1024), (1024,), "float16"),
        ("f32-column", "check", (1823, 781), (1823, 1), "float32"),
        ("f32-outer", "check", (64, 1, 33), (1, 47, 33), "float32"),
        ("f32-t-slice", "check", (300, 257), (300, 257), "float32", None, "t", "slice"),
        ("f16-bf16", "check", (1000, 130), (1000, 130), "float16", "bfloat16"),
        ("bf16-0d-f32", "check", (1000, 33), (), "bfloat16", "float32"),
        ("i32-f32", "check", (300, 300), (300,), "int32", "float32"),
        ("i64", "check", (1000, 1000), (1000, 1000), "int64"),
        ("i8-i64", "check", (64, 1000), (1000,), "int8", "int64"),
        ("u8", "check", (64, 1000), (64, 1000), "uint8"),
        ("bool", "check", (100, 77), (100, 77), "bool"),
        ("bool-f16", "check", (100, 77), (77,), "bool", "float16"),
        ("empty", "check", (0, 5), (5,), "float32"),
        ("zero-dim", "check", (), (), "float32"),
        ("scalar-f32", "check", (1000, 1000), 0.5, "float32"),
        ("scalar-bf16-t", "check", (512, 1000), -1.5, "bfloat16", None, "t"),
        ("scalar-int-f16", "check", (512, 1000), 1, "float16"),
        ("scalar-float-i64", "check", (1000, 100), 1.5, "int64"),
        ("scalar-i64", "check", (1000, 100), -2, "int64"),
        ("scalar-bool", "check", (100, 77), True, "bool"),
        ("scalar-nan", "check", (100, 77), float("nan"), "float32"),
        (f"{op}-f32", "bench", (8192, 8192), (8192, 8192), "float32"),
        (f"{op}-bf16", "bench", (16, 2048, 4096), (16, 2048, 4096), "bfloat16"),
        (f"{op}-i64-rows", "bench", (8192, 8192), (8192,), "int64"),
        (f"{op}-scalar-f16", "bench", (8192, 8192), 0.0, "float16"),
    ]
    return [_case(op, *row) for row in rows]
