"""The reduction family's cases (reduction.py): the case builder and the cases of mean and
sum. This module holds hidden cases and is kept out of the processes that run candidate
code (see kgb.operators.import_spec_libraries): only `reduction.cases` and the generator
import it."""

from __future__ import annotations

from kgb.aten_families.reduction import REDUCTIONS
from kgb.operators import Case


def _case(op, name, tag, shape, dtype, dim="all", keepdim=False, out_dtype=None, transpose=False, seed=0):
    entry = op.name if dim == "all" else f"{op.name}_{op.dim}"
    dims = range(len(shape)) if dim in ("all", None) or dim == [] else dim
    n = 1
    for d in dims:
        n *= shape[d] if shape else 1
    params = dict(shape=shape, dtype=dtype, dim=dim, keepdim=keepdim, out_dtype=out_dtype, transpose=transpose)
    # reduction = elements averaged (or added) per output, capped so that atol (1e-4 x
    # reduction x RMS) stays well below the output's RMS: an all-zero answer must fail.
    return Case(name, tag, params, seed=seed, reduction=max(1, min(n, 1024)), entry=entry)


def cases(name: str) -> list[Case]:
    op = next(r for r in REDUCTIONS if r.name == name)

    def case(*args, **kwargs):
        return _case(op, *args, **kwargs)

    def layouts() -> list[Case]:  # the rows, columns and dims cases both members check
        return [
            case("rows-f32", "check", (1823, 781), "float32", dim=[-1]),
            case("rows-bf16", "check", (64, 4099), "bfloat16", dim=[1], keepdim=True),
            case("cols-f32", "check", (2000, 300), "float32", dim=[0]),
            case("middle-f16", "check", (8, 129, 33), "float16", dim=[1]),
            case("spatial-f32", "check", (4, 16, 14, 14), "float32", dim=[2, 3], keepdim=True),
            case("outer-inner-f32", "check", (6, 7, 8, 9), "float32", dim=[0, 3]),
            case("transposed-rows", "check", (257, 300), "float32", dim=[1], transpose=True),
            case("dim-none", "check", (33, 44), "float32", dim=None, keepdim=True),
        ]

    def empty_and_bench() -> list[Case]:  # both members' last cases
        return [
            case("empty-reduced", "check", (5, 0), "float32", dim=[1]),
            case("empty-all", "check", (0, 3), "float32"),
            case("empty-kept", "check", (0, 7), "float32", dim=[1]),
            case("bench-all-f32", "bench", (64 * 1024 * 1024,), "float32"),
            case("bench-rows-bf16", "bench", (8192, 8192), "bfloat16", dim=[-1]),
            case("bench-cols-f16", "bench", (8192, 8192), "float16", dim=[0]),
            case("bench-spatial-f32", "bench", (64, 256, 56, 56), "float32", dim=[2, 3]),
        ]

    if name == "mean":
        return [
            case("smoke-all-f32", "smoke", (7, 33), "float32"),
            case("smoke-dim-f16", "smoke", (5, 9, 6), "float16", dim=[1], keepdim=True, seed=1),
            case("smoke-dims-bf16", "smoke", (4, 5, 6), "bfloat16", dim=[0, 2], seed=2),
            case("all-f16", "check", (1000, 999), "float16"),
            case("all-bf16-to-f32", "check", (3, 5000), "bfloat16", out_dtype="float32"),
            case("all-int-to-f32", "check", (100, 77), "int32", out_dtype="float32"),
            case("all-transposed", "check", (300, 129), "float32", transpose=True),
            *layouts(),
            case("dim-empty-list", "check", (33, 44), "float16", dim=[]),
            case("f16-to-f32", "check", (64, 512), "float16", dim=[1], out_dtype="float32"),
            case("tokens-f32", "check", (4, 77, 768), "float32", dim=[1]),
            case("scalar", "check", (), "float32"),
            case("scalar-dim", "check", (), "float32", dim=[-1], keepdim=True),
            *empty_and_bench(),
        ]
    return [
        case("smoke-all-f32", "smoke", (7, 33), "float32"),
        case("smoke-dim-f16", "smoke", (5, 9, 6), "float16", dim=[1], keepdim=True, seed=1),
        case("smoke-dims-int32", "smoke", (4, 5, 6), "int32", dim=[0, 2], seed=2),
        case("all-f16", "check", (1000, 999), "float16"),
        case("all-bf16-to-f32", "check", (3, 5000), "bfloat16", out_dtype="float32"),
        case("all-bool", "check", (100, 77), "bool"),
        case("all-int64", "check", (12345,), "int64"),
        case("all-transposed", "check", (300, 129), "float32", transpose=True),
        *layouts(),
        case("dim-empty-list", "check", (33, 44), "int32", dim=[]),
        case("int8-to-int64", "check", (50, 60), "int8", dim=[1]),
        case("uint8-rows", "check", (50, 600), "uint8", dim=[-1]),
        case("bool-cols", "check", (300, 50), "bool", dim=[0]),
        case("f32-to-int64", "check", (40, 50), "float32", dim=[1], out_dtype="int64"),
        case("f16-to-f32", "check", (64, 512), "float16", dim=[1], out_dtype="float32"),
        case("scalar", "check", (), "float32"),
        case("scalar-dim", "check", (), "float32", dim=[0], keepdim=True),
        *empty_and_bench(),
    ]
