"""The extremum family's cases (extremum.py reads them through `cases(name)`), kept out of
the processes that run candidate code: see kgb.operators.import_spec_libraries."""

from __future__ import annotations

from kgb.operators import Case


def _amin(name, tag, shape, dtype, dim=(), keepdim=False, transpose=False, nans=0.0, seed=0):
    params = dict(shape=shape, dtype=dtype, dim=list(dim), keepdim=keepdim, transpose=transpose, nans=nans)
    return Case(name, tag, params, seed=seed)


def _argmax(name, tag, shape, dtype, dim=None, keepdim=False, transpose=False, nans=0.0, ties=False, seed=0):
    params = dict(shape=shape, dtype=dtype, dim=dim, keepdim=keepdim, transpose=transpose, nans=nans, ties=ties)
    return Case(name, tag, params, seed=seed)


CASES = {
    "amin": [
        _amin("smoke-rows-f32", "smoke", (7, 33), "float32", dim=[-1]),
        _amin("smoke-dim-f16-nan", "smoke", (5, 9, 6), "float16", dim=[1], nans=0.03, seed=1),
        _amin("smoke-dims-int32", "smoke", (4, 5, 6), "int32", dim=[0, 2], keepdim=True, seed=2),
        _amin("all-f32", "check", (1000, 999), "float32"),
        _amin("all-bf16", "check", (3, 5000), "bfloat16"),
        _amin("rows-f16", "check", (1823, 781), "float16", dim=[1]),
        _amin("rows-nan", "check", (64, 4099), "float32", dim=[1], keepdim=True, nans=1e-4),
        _amin("cols-f32", "check", (2000, 300), "float32", dim=[0]),
        _amin("cols-nan-bf16", "check", (300, 200), "bfloat16", dim=[0], nans=0.002),
        _amin("middle-f32", "check", (8, 129, 33), "float32", dim=[-2]),
        _amin("spatial-f32", "check", (4, 16, 14, 14), "float32", dim=[2, 3], keepdim=True),
        _amin("outer-inner", "check", (6, 7, 8, 9), "float32", dim=[0, 3]),
        _amin("transposed", "check", (257, 300), "float32", dim=[1], transpose=True),
        _amin("int64-rows", "check", (50, 600), "int64", dim=[1]),
        _amin("int8-all", "check", (77, 33), "int8"),
        _amin("uint8-cols", "check", (300, 50), "uint8", dim=[0]),
        _amin("bool-rows", "check", (100, 7), "bool", dim=[1]),
        _amin("scalar", "check", (), "float32"),
        _amin("scalar-dim", "check", (), "float32", dim=[0], keepdim=True),
        _amin("empty-kept", "check", (0, 7), "float32", dim=[1]),
        _amin("bench-all-f32", "bench", (64 * 1024 * 1024,), "float32"),
        _amin("bench-rows-bf16", "bench", (8192, 8192), "bfloat16", dim=[-1]),
        _amin("bench-cols-f16", "bench", (8192, 8192), "float16", dim=[0]),
    ],
    "argmax": [
        _argmax("smoke-rows-f32", "smoke", (7, 33), "float32", dim=-1),
        _argmax("smoke-all-f16-ties", "smoke", (5, 9, 6), "float16", ties=True, seed=1),
        _argmax("smoke-dim0-int32", "smoke", (40, 6), "int32", dim=0, keepdim=True, seed=2),
        _argmax("all-f32", "check", (1000, 999), "float32"),
        _argmax("all-bf16-ties", "check", (3, 5000), "bfloat16", ties=True),
        _argmax("all-transposed", "check", (300, 129), "float32", transpose=True, keepdim=True),
        _argmax("all-nan", "check", (100, 1000), "float32", nans=2e-5),
        _argmax("rows-f16", "check", (1823, 781), "float16", dim=1),
        _argmax("rows-nan", "check", (64, 4099), "float32", dim=1, keepdim=True, nans=1e-4),
        _argmax("vocab-bf16", "check", (8, 32000), "bfloat16", dim=-1),
        _argmax("cols-f32", "check", (2000, 300), "float32", dim=0),
        _argmax("cols-ties-f16", "check", (300, 200), "float16", dim=0, ties=True),
        _argmax("middle-f32", "check", (8, 129, 33), "float32", dim=-2),
        _argmax("transposed-rows", "check", (257, 300), "float32", dim=1, transpose=True),
        _argmax("int64-rows", "check", (50, 600), "int64", dim=1),
        _argmax("int8-all", "check", (77, 33), "int8"),
        _argmax("uint8-cols", "check", (300, 50), "uint8", dim=0),
        _argmax("scalar", "check", (), "float32"),
        _argmax("scalar-dim", "check", (), "float32", dim=0, keepdim=True),
        _argmax("empty-kept", "check", (0, 7), "float32", dim=1),
        _argmax("bench-all-f32", "bench", (64 * 1024 * 1024,), "float32"),
        _argmax("bench-vocab-bf16", "bench", (1024, 128256), "bfloat16", dim=-1),
        _argmax("bench-cols-f16", "bench", (8192, 8192), "float16", dim=0),
    ],
}
