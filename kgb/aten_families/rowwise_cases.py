"""The rowwise family's cases (rowwise.py reads them through `cases(name)`), kept out of
the processes that run candidate code: see kgb.operators.import_spec_libraries."""

from __future__ import annotations

import math

from kgb.operators import Case


def _capped(n):
    # reduction = the length of the row an output depends on, capped so that atol
    # (1e-4 x reduction x RMS) stays below the output's RMS and an all-zero answer fails
    return max(1, min(n, 1024))


def _softmax(name, tag, shape, dim, dtype, half_to_float=False, transpose=False, seed=0, neg_inf=False):
    params = dict(shape=shape, dim=dim, dtype=dtype, half_to_float=half_to_float, transpose=transpose)
    if neg_inf:  # scattered -inf and a row of them (rowwise.softmax_inputs)
        params["neg_inf"] = True
    return Case(name, tag, params, seed=seed, reduction=_capped(shape[dim] if shape else 1))


def _cumsum(name, tag, shape, dim, dtype, out_dtype=None, transpose=False, seed=0):
    params = dict(shape=shape, dim=dim, dtype=dtype, out_dtype=out_dtype, transpose=transpose)
    return Case(name, tag, params, seed=seed, reduction=_capped(shape[dim] if shape else 1))


def _diff(name, tag, shape, dtype, n=1, dim=-1, prepend=0, append=0, transpose=False, seed=0):
    params = dict(shape=shape, dtype=dtype, n=n, dim=dim, prepend=prepend, append=append, transpose=transpose)
    # each output combines n + 1 inputs; ulp-level differences stay far below rtol
    return Case(name, tag, params, seed=seed)


def _pdist(name, tag, s1, s2, dtype, p=2.0, keepdim=False, transpose=False, seed=0):
    params = dict(s1=s1, s2=s2, dtype=dtype, p=p, keepdim=keepdim, transpose=transpose)
    return Case(name, tag, params, seed=seed, reduction=_capped(max(s1[-1] if s1 else 1, s2[-1] if s2 else 1)))


def _renorm(name, tag, shape, dtype, p, dim, maxnorm, transpose=False, seed=0):
    params = dict(shape=shape, dtype=dtype, p=p, dim=dim, maxnorm=maxnorm, transpose=transpose)
    # each output depends on its slice's norm: a reduction over the slice
    n = math.prod(s for d, s in enumerate(shape) if d != dim % len(shape))
    return Case(name, tag, params, seed=seed, reduction=_capped(n))


INF = float("inf")

CASES = {
    "_softmax": [
        _softmax("smoke-f32", "smoke", (5, 37), -1, "float32"),
        _softmax("smoke-f16-dim0-h2f", "smoke", (19, 6), 0, "float16", half_to_float=True, seed=1),
        _softmax("rows-f32", "check", (1823, 781), -1, "float32"),
        _softmax("rows-f16", "check", (64, 4099), 1, "float16"),
        _softmax("rows-bf16", "check", (3, 17, 1000), -1, "bfloat16"),
        _softmax("h2f-f16", "check", (128, 513), -1, "float16", half_to_float=True),
        _softmax("h2f-f16-middle", "check", (4, 300, 7), 1, "float16", half_to_float=True),
        _softmax("transposed", "check", (300, 257), -1, "float32", transpose=True),
        _softmax("middle-dim", "check", (8, 129, 33), 1, "float32"),
        _softmax("first-dim", "check", (65, 3, 40), 0, "float16"),
        _softmax("attn-4d", "check", (2, 12, 77, 77), -1, "float32"),
        _softmax("vector", "check", (70001,), 0, "float32"),
        _softmax("with-inf", "check", (33, 100), -1, "float32", seed=5, neg_inf=True),
        _softmax("scalar", "check", (), 0, "float32"),
        _softmax("empty", "check", (0, 16), -1, "float32"),
        _softmax("attn-f16", "bench", (32 * 16, 2048), -1, "float16"),
        _softmax("vocab-f16-h2f", "bench", (256, 32000), -1, "float16", half_to_float=True),
        _softmax("wide-f32", "bench", (4096, 4096), -1, "float32"),
        _softmax("channels-f32", "bench", (64, 1024, 512), 1, "float32"),
    ],
    "cumsum": [
        _cumsum("smoke-rows-f32", "smoke", (5, 37), -1, "float32"),
        _cumsum("smoke-dim0-f16", "smoke", (19, 6), 0, "float16", seed=1),
        _cumsum("smoke-bool", "smoke", (3, 50), 1, "bool", seed=2),
        _cumsum("rows-f32", "check", (1823, 781), -1, "float32"),
        _cumsum("rows-bf16", "check", (64, 4099), 1, "bfloat16"),
        _cumsum("rows-f16-to-f32", "check", (33, 2000), 1, "float16", out_dtype="float32"),
        _cumsum("cols-f32", "check", (3000, 100), 0, "float32"),
        _cumsum("middle-f16", "check", (8, 129, 33), 1, "float16"),
        _cumsum("transposed", "check", (300, 257), 1, "float32", transpose=True),
        _cumsum("vector-f32", "check", (70001,), 0, "float32"),
        _cumsum("int32", "check", (40, 1000), -1, "int32"),
        _cumsum("int64-dim0", "check", (1000, 30), 0, "int64"),
        _cumsum("uint8", "check", (10, 3000), 1, "uint8"),
        _cumsum("bool-mask", "check", (16, 4096), 1, "bool"),
        _cumsum("int-to-f32", "check", (20, 500), 1, "int32", out_dtype="float32"),
        _cumsum("f32-to-int64", "check", (20, 500), 1, "float32", out_dtype="int64"),
        _cumsum("scalar", "check", (), 0, "float32"),
        _cumsum("empty", "check", (0, 16), 1, "float32"),
        _cumsum("bench-rows-f32", "bench", (4096, 8192), -1, "float32"),
        _cumsum("bench-mask-i64", "bench", (64, 131072), 1, "bool"),
        _cumsum("bench-cols-bf16", "bench", (8192, 4096), 0, "bfloat16"),
    ],
    "diff": [
        _diff("smoke-f32", "smoke", (5, 37), "float32"),
        _diff("smoke-f16-n2-dim0-pre", "smoke", (19, 6), "float16", n=2, dim=0, prepend=2, seed=1),
        _diff("smoke-int32-app", "smoke", (4, 9), "int32", append=3, seed=2),
        _diff("rows-f32", "check", (1823, 781), "float32"),
        _diff("rows-bf16-n3", "check", (64, 4099), "bfloat16", n=3),
        _diff("cols-f16", "check", (3000, 100), "float16", dim=0),
        _diff("middle-f32-pre-app", "check", (8, 129, 33), "float32", dim=1, prepend=3, append=5),
        _diff("transposed", "check", (300, 257), "float32", transpose=True),
        _diff("transposed-dim0", "check", (300, 257), "float32", dim=0, transpose=True),
        _diff("vector-f32-n2", "check", (70001,), "float32", n=2),
        _diff("int64", "check", (40, 1000), "int64", n=2),
        _diff("uint8-wrap", "check", (10, 3000), "uint8"),
        _diff("int8-n4", "check", (7, 300), "int8", n=4),
        _diff("bool", "check", (16, 4096), "bool", n=2, prepend=1),
        _diff("n-too-large", "check", (6, 4), "float32", n=5),
        _diff("n0-copy", "check", (6, 40), "float32", n=0, append=2),
        _diff("length-one", "check", (30, 1), "float32"),
        _diff("empty-batch", "check", (0, 16), "float32"),
        _diff("bench-f32", "bench", (8192, 8192), "float32"),
        _diff("bench-bf16-dim0", "bench", (8192, 8192), "bfloat16", dim=0),
        _diff("bench-i64-n2", "bench", (64 * 1024 * 1024,), "int64", n=2, prepend=1),
    ],
    "pairwise_distance": [
        _pdist("smoke-f32", "smoke", (5, 37), (5, 37), "float32"),
        _pdist("smoke-f16-bcast-p1", "smoke", (3, 1, 16), (4, 16), "float16", p=1.0, keepdim=True, seed=1),
        _pdist("embeddings-f32", "check", (1024, 512), (1024, 512), "float32"),
        _pdist("embeddings-bf16", "check", (300, 768), (300, 768), "bfloat16"),
        _pdist("anchor-f16", "check", (1000, 128), (128,), "float16"),
        _pdist("triplet-3d-f32", "check", (8, 50, 64), (8, 1, 64), "float32", keepdim=True),
        _pdist("p1-f32", "check", (200, 300), (200, 300), "float32", p=1.0),
        _pdist("pinf-bf16", "check", (200, 300), (200, 300), "bfloat16", p=INF),
        _pdist("p0-f32", "check", (64, 33), (64, 33), "float32", p=0.0),
        _pdist("p3-f16", "check", (100, 65), (100, 65), "float16", p=3.0),
        _pdist("transposed", "check", (300, 129), (300, 129), "float32", transpose=True),
        _pdist("vectors", "check", (4099,), (4099,), "float32"),
        _pdist("scalars", "check", (), (), "float32"),
        _pdist("empty-rows", "check", (0, 16), (0, 16), "float32"),
        _pdist("empty-dim", "check", (5, 0), (5, 0), "float32"),
        _pdist("bench-f32", "bench", (65536, 512), (65536, 512), "float32"),
        _pdist("bench-bf16", "bench", (16384, 4096), (16384, 4096), "bfloat16"),
        _pdist("bench-anchor-f16", "bench", (1048576, 128), (128,), "float16"),
    ],
    "renorm": [
        _renorm("smoke-rows-f32", "smoke", (5, 7), "float32", 2.0, 0, 2.5),
        _renorm("smoke-middle-f16-p1", "smoke", (4, 6, 3), "float16", 1.0, 1, 9.0, seed=1),
        _renorm("embedding-f32", "check", (1000, 64), "float32", 2.0, 0, 8.0),
        _renorm("cols-inf-bf16", "check", (64, 300), "bfloat16", INF, 1, 2.5),
        _renorm("conv-weight-f32", "check", (16, 8, 3, 3), "float32", 2.0, 0, 8.0),
        _renorm("p3-f32", "check", (200, 50), "float32", 3.0, 0, 4.0),
        _renorm("p-half-f16", "check", (40, 30), "float16", 0.5, 1, 1000.0),
        _renorm("rows-f16", "check", (50, 128), "float16", 2.0, -2, 11.0),
        _renorm("last-dim-bf16", "check", (6, 7, 40), "bfloat16", 2.0, -1, 6.0),
        _renorm("transposed", "check", (300, 129), "float32", 2.0, 0, 11.0, transpose=True),
        _renorm("few-slices", "check", (3, 30000), "float32", 1.5, 0, 900.0),
        _renorm("empty", "check", (0, 16), "float32", 2.0, 0, 1.0),
        _renorm("bench-embedding-bf16", "bench", (32000, 4096), "bfloat16", 2.0, 0, 60.0),
        _renorm("bench-embedding-f32", "bench", (50257, 768), "float32", 2.0, 0, 25.0),
        _renorm("bench-cols-f16", "bench", (4096, 4096), "float16", 2.0, 1, 60.0),
    ],
}
