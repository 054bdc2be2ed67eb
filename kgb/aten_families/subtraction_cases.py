"""The subtraction family's cases (subtraction.py): one table for sub and rsub.
Kept out of the processes that run candidate code (kgb.operators.import_spec_libraries):
subtraction.cases imports this module when a judge loads a spec."""

from __future__ import annotations

from kgb.operators import Case


def _case(op, name, tag, shape, other, dtype, other_dtype=None, alpha=1, layout=None, other_layout=None, seed=0):
    """`other` is a shape (Tensor entry) or a Python number (Scalar entry). Layouts: `t` is a
    transposed view, `slice` a view of every other column."""
    entry = f"{op}_Tensor" if isinstance(other, tuple) else f"{op}_Scalar"
    params = dict(shape=shape, other=other, dtype=dtype, other_dtype=other_dtype or dtype,
                  alpha=alpha, layout=layout, other_layout=other_layout)
    return Case(name, tag, params, seed=seed, entry=entry)


def cases(op: str) -> list[Case]:
    def case(*args, **kwargs):
        return _case(op, *args, **kwargs)

    common = [
        case("smoke-bias-f32", "smoke", (5, 37), (37,), "float32", alpha=2),
        case("smoke-t-f16-bf16", "smoke", (9, 6), (6,), "float16", "bfloat16", layout="t", seed=1),
        case("smoke-scalar-i32", "smoke", (3, 7), 5, "int32", alpha=3, seed=2),
        case("resid-bf16", "check", (4, 512, 768), (4, 512, 768), "bfloat16"),
        case("alpha-f16", "check", (2, 1024, 1024), (2, 1024, 1024), "float16", alpha=0.5),
        case("bias-f32", "check", (1024, 3072), (3072,), "float32"),
        case("column-f32", "check", (1823, 781), (1823, 1), "float32", alpha=-1.5),
        case("outer-f32", "check", (64, 1, 33), (1, 47, 33), "float32"),
        case("t-other-bf16", "check", (300, 257), (300, 257), "bfloat16", other_layout="t"),
        case("slice-f16", "check", (128, 513), (128, 513), "float16", layout="slice", other_layout="t"),
        case("f16-bf16", "check", (1000, 130), (1000, 130), "float16", "bfloat16"),
        case("bf16-0d-f32", "check", (1000, 33), (), "bfloat16", "float32"),
        case("0d-minus-vector", "check", (), (70001,), "float32", alpha=3),
        case("i32-f32", "check", (300, 300), (300,), "int32", "float32"),
        case("i64-alpha", "check", (1000, 1000), (1000, 1000), "int64", alpha=-3),
        case("i8-i64", "check", (64, 1000), (1000,), "int8", "int64"),
        case("i16-wrap", "check", (64, 1000), (64, 1000), "int16", alpha=300),
        case("empty", "check", (0, 5), (5,), "float32"),
        case("zero-dim", "check", (), (), "float32", alpha=2),
        case("scalar-f32", "check", (1000, 1000), 2.5, "float32", alpha=-1.5),
        case("scalar-bf16-t", "check", (512, 1000), 0.125, "bfloat16", alpha=2, layout="t"),
        case("scalar-int-f16", "check", (512, 1000), 3, "float16"),
        case("scalar-float-i64", "check", (1000, 100), 2.5, "int64"),
        case("scalar-i8", "check", (1000, 100), 7, "int8", alpha=-2),
    ]
    if op == "sub":
        return [
            *common,
            case("sub-f32", "bench", (8192, 8192), (8192, 8192), "float32"),
            case("sub-bf16", "bench", (16, 2048, 4096), (16, 2048, 4096), "bfloat16"),
            case("bias-f16", "bench", (16384, 4096), (4096,), "float16"),
            case("scalar-f32-bench", "bench", (8192, 8192), 1.0, "float32"),
        ]
    return [
        *common,
        case("one-minus-f32", "check", (4, 1, 1, 2048), 1.0, "float32"),
        case("rsub-f32", "bench", (8192, 8192), (8192, 8192), "float32"),
        case("rsub-bf16", "bench", (16, 2048, 4096), (16, 2048, 4096), "bfloat16"),
        case("bias-f16", "bench", (16384, 4096), (4096,), "float16"),
        case("one-minus-bf16", "bench", (8192, 8192), 1.0, "bfloat16"),
    ]
