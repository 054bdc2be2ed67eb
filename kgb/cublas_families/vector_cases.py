"""The vector family's cases: each routine's sizes, increments and scalars.
Only the generator imports this module (through vector.routines), so that no engine,
judge or candidate process holds the hidden ones (kgb.operators.import_spec_libraries)."""

from __future__ import annotations

import math

from kgb.cublas_families.routine import case
from kgb.cublas_families.vector import REDUCTIONS, Variant
from kgb.operators import Case

# the magnitude of scal's bench alpha (vector.VERSIONS says why)
BENCH_SCALE = 1.0 + 2.0**-10


def cases(v: Variant) -> list[Case]:
    one_vector = v.kind in ("scal", "asum")  # BLAS: incx <= 0 does nothing for these

    def g(name, tag, n, incx=1, incy=1, alpha=0.75, mean=0.0, seed=0):
        params = dict(n=n, incx=abs(incx) if one_vector else incx)
        if not one_vector:
            params["incy"] = incy
        if v.kind in ("axpy", "scal"):
            params["alpha"] = math.copysign(BENCH_SCALE, alpha) if v.kind == "scal" and tag == "bench" else alpha
        if v.kind in REDUCTIONS:
            params["mean"] = mean
        return case(name, tag, reduction=n if v.kind in REDUCTIONS else 1, seed=seed, **params)

    return [
        g("smoke-unit", "smoke", 1000, mean=0.5),
        g("smoke-strided-negative", "smoke", 37, incx=-2, incy=3, alpha=-2.5, seed=1),
        g("large", "check", 1_000_003, alpha=1.5, mean=0.3),
        g("large-cancelling", "check", 1_000_003),
        g("odd-block", "check", 4097, incx=2, incy=-1, alpha=-0.3, mean=1.0),
        g("both-negative", "check", 10_001, incx=-3, incy=-2, alpha=2.0, mean=0.5),
        g("x-reversed", "check", 65_537, incx=-1, incy=1),
        g("wide-stride", "check", 999, incx=7, incy=5, alpha=3.25, mean=0.2),
        g("one", "check", 1, incx=-5, incy=-7, alpha=-4.0),
        g("zero-length", "check", 0, incx=2, incy=-3),
        g("bench-64m", "bench", 1 << 26, alpha=0.5, mean=0.5),
        g("bench-16m", "bench", 1 << 24, alpha=-1.25),
        g("bench-strided", "bench", 1 << 24, incx=2, incy=-2, alpha=2.0, mean=0.5),
    ]
