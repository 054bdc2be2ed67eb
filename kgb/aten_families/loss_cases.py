"""The loss family's cases (loss.py reads them through `cases(name)`), kept out of
the processes that run candidate code: see kgb.operators.import_spec_libraries."""

from __future__ import annotations

import math

from kgb.operators import Case


def _case(name, tag, params, n, seed):
    # mean and sum add every element: reduction = the count, capped so that atol
    # (1e-4 x reduction x RMS) stays below the result and a zero answer fails
    red = max(1, min(n, 1024)) if params["reduction"] else 1
    return Case(name, tag, params, seed=seed, reduction=red)


def _bce(name, tag, shape, dtype, reduction=1, weight=None, pos_weight=None, labels=False, transpose=False, seed=0):
    # weight / pos_weight: the shape to draw (broadcast against self), or None
    params = dict(shape=shape, dtype=dtype, reduction=reduction, weight=weight, pos_weight=pos_weight,
                  labels=labels, transpose=transpose)
    return _case(name, tag, params, math.prod(shape), seed)


def _huber(name, tag, s1, s2, dtype, reduction=1, delta=1.0, transpose=False, seed=0):
    params = dict(s1=s1, s2=s2, dtype=dtype, reduction=reduction, delta=delta, transpose=transpose)
    n = 1  # the broadcast shape's element count
    for a, b in zip((1,) * (len(s2) - len(s1)) + tuple(s1), (1,) * (len(s1) - len(s2)) + tuple(s2), strict=False):
        n *= max(a, b) if min(a, b) else 0
    return _case(name, tag, params, n, seed)


def _margin(name, tag, s1, s2, st, dtype, margin=0.0, reduction=1, transpose=False, seed=0):
    params = dict(s1=s1, s2=s2, st=st, dtype=dtype, margin=margin, reduction=reduction, transpose=transpose)
    return _case(name, tag, params, math.prod(s1), seed)


def _soft(name, tag, s1, s2, dtype, reduction=1, transpose=False, seed=0):
    params = dict(s1=s1, s2=s2, dtype=dtype, reduction=reduction, transpose=transpose)
    return _case(name, tag, params, math.prod(s1), seed)


BIG = (64 * 1024 * 1024,)

CASES = {
    "binary_cross_entropy_with_logits": [
        _bce("smoke-mean-f32", "smoke", (5, 37), "float32", labels=True),
        _bce("smoke-none-weights-f32", "smoke", (4, 33), "float32", reduction=0, weight=(4, 33),
             pos_weight=(33,), seed=1),
        _bce("smoke-mean-bf16", "smoke", (3, 50), "bfloat16", pos_weight=(50,), seed=2),
        _bce("none-f32", "check", (1823, 781), "float32", reduction=0),
        _bce("none-labels-f32", "check", (256, 1000), "float32", reduction=0, labels=True, pos_weight=(1000,)),
        _bce("mean-pos-weight-f32", "check", (64, 1000), "float32", pos_weight=(1000,), labels=True),
        _bce("sum-weight-f32", "check", (8, 129, 33), "float32", reduction=2, weight=(129, 1)),
        _bce("mean-f16", "check", (300, 512), "float16", labels=True),
        _bce("mean-weights-f16", "check", (64, 80), "float16", weight=(64, 80), pos_weight=(80,)),
        _bce("sum-f16", "check", (100, 64), "float16", reduction=2),
        _bce("mean-bf16", "check", (64, 1000), "bfloat16", pos_weight=(1000,), labels=True),
        _bce("sum-bf16", "check", (40, 77), "bfloat16", reduction=2, weight=(40, 1)),
        _bce("transposed", "check", (300, 257), "float32", reduction=0, transpose=True),
        _bce("vector-mean", "check", (70001,), "float32"),
        _bce("scalar", "check", (), "float32", reduction=0),
        _bce("empty-mean", "check", (0, 4), "float32"),
        _bce("empty-none", "check", (0, 4), "float32", reduction=0),
        _bce("bench-none-f32", "bench", (8192, 8192), "float32", reduction=0),
        _bce("bench-mean-f32", "bench", (16384, 4096), "float32", pos_weight=(4096,), labels=True),
        _bce("bench-mean-bf16", "bench", (16384, 4096), "bfloat16"),
    ],
    "huber_loss": [
        _huber("smoke-mean-f32", "smoke", (5, 37), (5, 37), "float32"),
        _huber("smoke-none-f16", "smoke", (4, 33), (4, 33), "float16", reduction=0, delta=0.5, seed=1),
        _huber("smoke-sum-bf16", "smoke", (3, 1, 16), (4, 16), "bfloat16", reduction=2, delta=2.0, seed=2),
        _huber("none-f32", "check", (1823, 781), (1823, 781), "float32", reduction=0, delta=1.35),
        _huber("mean-f32", "check", (1000, 999), (1000, 999), "float32"),
        _huber("sum-f32", "check", (64, 4099), (64, 4099), "float32", reduction=2, delta=0.7),
        _huber("none-f16", "check", (300, 512), (300, 512), "float16", reduction=0),
        _huber("mean-f16", "check", (300, 512), (300, 512), "float16", delta=0.5),
        _huber("none-bf16", "check", (64, 1000), (64, 1000), "bfloat16", reduction=0, delta=2.0),
        _huber("mean-bf16", "check", (8, 129, 33), (8, 129, 33), "bfloat16"),
        _huber("broadcast-none", "check", (16, 1, 64), (8, 64), "float32", reduction=0),
        _huber("broadcast-mean-f16", "check", (100, 64), (64,), "float16"),
        _huber("transposed", "check", (300, 257), (300, 257), "float32", reduction=0, transpose=True),
        _huber("scalars", "check", (), (), "float32", reduction=0),
        _huber("empty-mean", "check", (0, 4), (0, 4), "float32"),
        _huber("empty-sum", "check", (0, 4), (0, 4), "float32", reduction=2),
        _huber("empty-none", "check", (0, 4), (0, 4), "float16", reduction=0),
        _huber("bench-none-f32", "bench", (8192, 8192), (8192, 8192), "float32", reduction=0),
        _huber("bench-mean-bf16", "bench", (16384, 4096), (16384, 4096), "bfloat16"),
        _huber("bench-sum-f16", "bench", (4096, 8192), (4096, 8192), "float16", reduction=2, delta=0.5),
    ],
    "margin_ranking_loss": [
        _margin("smoke-mean-f32", "smoke", (37,), (37,), (37,), "float32", margin=0.5),
        _margin("smoke-none-f16", "smoke", (4, 33), (4, 33), (4, 33), "float16", margin=0.1, reduction=0, seed=1),
        _margin("smoke-sum-bf16", "smoke", (3, 16), (3, 16), (16,), "bfloat16", margin=1.0, reduction=2, seed=2),
        _margin("pairs-mean-f32", "check", (100003,), (100003,), (100003,), "float32", margin=0.2),
        _margin("none-f32", "check", (1000, 999), (1000, 999), (1000, 999), "float32", margin=0.3, reduction=0),
        _margin("sum-f32", "check", (64, 4099), (64, 4099), (64, 4099), "float32", reduction=2),
        _margin("none-f16", "check", (300, 512), (300, 512), (300, 512), "float16", margin=0.25, reduction=0),
        _margin("mean-f16", "check", (300, 512), (300, 512), (300, 512), "float16", margin=0.5),
        _margin("none-bf16", "check", (64, 1000), (64, 1000), (64, 1000), "bfloat16", margin=0.1, reduction=0),
        _margin("mean-bf16", "check", (8, 129, 33), (8, 129, 33), (8, 129, 33), "bfloat16", margin=1.0),
        _margin("broadcast-none", "check", (16, 1, 64), (8, 64), (64,), "float32", margin=0.1, reduction=0),
        _margin("broadcast-target-mean", "check", (256, 128), (256, 128), (256, 1), "float16", margin=0.3),
        _margin("transposed", "check", (300, 257), (300, 257), (300, 257), "float32", reduction=0, transpose=True),
        _margin("scalars", "check", (), (), (), "float32", margin=2.0, reduction=0),
        _margin("empty-mean", "check", (0,), (0,), (0,), "float32"),
        _margin("empty-none", "check", (0, 4), (0, 4), (0, 4), "float32", reduction=0),
        _margin("bench-none-f32", "bench", (8192, 8192), (8192, 8192), (8192, 8192), "float32", margin=0.1,
                reduction=0),
        _margin("bench-mean-bf16", "bench", BIG, BIG, BIG, "bfloat16", margin=0.5),
    ],
    "soft_margin_loss": [
        _soft("smoke-mean-f32", "smoke", (5, 37), (5, 37), "float32"),
        _soft("smoke-none-f32-bcast", "smoke", (4, 33), (33,), "float32", reduction=0, seed=1),
        _soft("smoke-sum-bf16", "smoke", (3, 16), (3, 16), "bfloat16", reduction=2, seed=2),
        _soft("none-f32", "check", (1000, 999), (1000, 999), "float32", reduction=0),
        _soft("mean-f32", "check", (64, 4099), (64, 4099), "float32"),
        _soft("sum-f32", "check", (8, 129, 33), (8, 129, 33), "float32", reduction=2),
        _soft("mean-f16", "check", (300, 512), (300, 512), "float16"),
        _soft("sum-f16", "check", (100, 64), (100, 64), "float16", reduction=2),
        _soft("mean-bf16", "check", (64, 1000), (64, 1000), "bfloat16"),
        _soft("sum-bf16", "check", (40, 77), (40, 77), "bfloat16", reduction=2),
        _soft("broadcast-none", "check", (16, 8, 64), (8, 1), "float32", reduction=0),
        _soft("transposed", "check", (300, 257), (300, 257), "float32", reduction=0, transpose=True),
        _soft("vector-mean", "check", (70001,), (70001,), "float32"),
        _soft("scalars", "check", (), (), "float32", reduction=0),
        _soft("empty-mean", "check", (0, 4), (0, 4), "float32"),
        _soft("empty-sum", "check", (0, 4), (0, 4), "float16", reduction=2),
        _soft("bench-none-f32", "bench", (8192, 8192), (8192, 8192), "float32", reduction=0),
        _soft("bench-mean-bf16", "bench", (16384, 4096), (16384, 4096), "bfloat16"),
    ],
}
