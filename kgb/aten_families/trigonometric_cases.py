"""The trigonometric family's cases (trigonometric.py), the same for cos and sin. This
module holds hidden cases and is kept out of the processes that run candidate code (see
kgb.operators.import_spec_libraries): only `trigonometric.cases` and the generator import
it."""

from __future__ import annotations

from kgb.operators import Case


def _case(name, tag, shape, dtype="float32", layout="contiguous", dist="normal", seed=0):
    return Case(name, tag, dict(shape=tuple(shape), dtype=dtype, layout=layout, dist=dist), seed=seed)


CASES = [
    _case("smoke-f32", "smoke", [7, 33]),
    _case("smoke-edge-f16", "smoke", [5, 17], "float16", dist="edge"),
    _case("f32-hidden", "check", [8, 128, 768]),
    _case("f16-rope", "check", [4096, 257], "float16"),
    _case("bf16", "check", [3, 1000, 129], "bfloat16"),
    _case("wide-range-f32", "check", [65537], dist="wide"),
    _case("edge-f32", "check", [34, 9], dist="edge"),
    _case("edge-bf16", "check", [17, 5], "bfloat16", dist="edge"),
    _case("transposed-f32", "check", [1023, 513], layout="transposed"),
    _case("strided-f16", "check", [300, 257], "float16", layout="strided"),
    _case("expanded-f32", "check", [64, 1000], layout="expanded"),
    _case("scalar-f32", "check", []),
    _case("empty-f32", "check", [0, 16]),
    _case("int64", "check", [1000, 37], "int64", dist="int"),
    _case("int32", "check", [4099], "int32", dist="int"),
    _case("bool", "check", [129, 7], "bool", dist="int"),
    _case("bench-f32", "bench", [8192, 8192]),
    _case("bench-bf16", "bench", [16, 2048, 4096], "bfloat16"),
    _case("bench-f16", "bench", [32, 1024, 1024], "float16"),
]
