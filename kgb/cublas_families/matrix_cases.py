"""The elementwise matrix family's cases: each kind's shapes, increments and scalars.
Only the generator imports this module (through matrix.routines), so that no engine,
judge or candidate process holds the hidden ones (kgb.operators.import_spec_libraries)."""

from __future__ import annotations

from kgb.cublas_families.matrix import Variant
from kgb.cublas_families.routine import case
from kgb.operators import Case


def cases(v: Variant) -> list[Case]:
    cplx = v.prefix in "CZ"

    def alpha(a):
        return complex(a, 0.5 * a) if cplx else a

    if v.kind == "geam":
        def g(name, tag, ta, tb, m, n, a=1.0, b=1.0, pad=0, seed=0):
            return case(name, tag, seed=seed, ta=ta, tb=tb, m=m, n=n, alpha=a, beta=b, pad=pad)

        return [
            g("smoke-nt", "smoke", "N", "T", 7, 5, a=1.5, b=-0.5, pad=2),
            g("smoke-transpose-only", "smoke", "T", "N", 6, 9, b=0.0, seed=1),
            g("nn", "check", "N", "N", 1000, 300, a=0.5, b=2.0),
            g("tt-padded", "check", "T", "T", 257, 129, a=-1.0, pad=7),
            g("cn", "check", "C", "N", 100, 333, a=2.0, b=-0.5, pad=1),
            g("copy-b", "check", "N", "C", 65, 4099, a=0.0, b=1.0),
            g("bench-transpose", "bench", "T", "N", 8192, 8192, b=0.0),
            g("bench-add", "bench", "N", "N", 8192, 8192, a=0.5, b=0.5),
            g("bench-add-t", "bench", "N", "T", 8192, 8192, b=-1.0),
        ]
    if v.kind == "dgmm":
        def g(name, tag, mode, m, n, incx=1, pad=0, seed=0):
            return case(name, tag, seed=seed, mode=mode, m=m, n=n, incx=incx, pad=pad)

        return [
            g("smoke-right", "smoke", "R", 7, 5, incx=2, pad=1),
            g("smoke-left-negative", "smoke", "L", 6, 9, incx=-3, seed=1),
            g("right", "check", "R", 1000, 300),
            g("left-padded", "check", "L", 257, 129, incx=-1, pad=7),
            g("right-strided", "check", "R", 100, 333, incx=5, pad=3),
            g("left-one-column", "check", "L", 4099, 1, incx=2),
            g("bench-right", "bench", "R", 8192, 8192),
            g("bench-left", "bench", "L", 8192, 8192, incx=2),
        ]

    def g(name, tag, m, n, a=1.0, incx=1, incy=1, pad=0, seed=0, uplo=None):
        extra = dict(uplo=uplo) if v.kind == "syr2" else {}
        return case(name, tag, reduction=2 if v.kind == "syr2" else 1, seed=seed, m=m,
                    n=m if v.kind == "syr2" else n, alpha=alpha(a), incx=incx, incy=incy,
                    pad=pad, **extra)  # fmt: skip

    return [
        g("smoke-unit", "smoke", 7, 5, a=1.5, uplo="U"),
        g("smoke-strided-negative", "smoke", 6, 9, a=-0.5, incx=-2, incy=3, pad=2, seed=1,
          uplo="L"),  # fmt: skip
        g("large", "check", 1000, 300, a=0.5, uplo="L"),
        g("padded", "check", 257, 129, a=-1.0, incx=3, incy=-2, pad=7, uplo="U"),
        g("reversed", "check", 100, 333, a=2.0, incx=-1, incy=-1, uplo="L"),
        g("tall", "check", 4099, 17, incx=2, incy=5, pad=1, uplo="U"),
        g("one", "check", 1, 1, a=3.0, incx=-4, incy=2, uplo="U"),
        g("bench-8192", "bench", 8192, 8192, a=0.5, uplo="U"),
        g("bench-strided", "bench", 8192, 4096, incx=2, incy=-2, uplo="L"),
    ]
