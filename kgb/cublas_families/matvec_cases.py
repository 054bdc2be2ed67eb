"""The matrix-vector family's cases: each kind's shapes, increments, bands and scalars.
Only the generator imports this module (through matvec.routines), so that no engine,
judge or candidate process holds the hidden ones (kgb.operators.import_spec_libraries)."""

from __future__ import annotations

from kgb.cublas_families.layout import Batch
from kgb.cublas_families.matvec import Variant
from kgb.cublas_families.routine import case
from kgb.operators import Case


def cases(v: Variant) -> list[Case]:
    return _gemv_cases(v) if v.kind == "gemv" else _symmetric_cases(v)


def _scalar(v: Variant, x: float) -> float | complex:
    return complex(x, -0.5 * x) if v.prefix in "CZ" else x


def _gemv_cases(v: Variant) -> list[Case]:
    many = v.form != Batch.SINGLE
    c_ = "C" if v.prefix in "CZ" else "T"

    def g(name, tag, trans, m, n, alpha=1.0, beta=0.0, incx=1, incy=1, pad=0, batch=3, seed=0):
        extra = dict(batch=batch) if many else {}
        return case(name, tag, reduction=n if trans == "N" else m, seed=seed, trans=trans, m=m,
                    n=n, alpha=_scalar(v, alpha), beta=_scalar(v, beta), incx=incx, incy=incy,
                    pad=pad, **extra)  # fmt: skip

    out = [
        g("smoke-n", "smoke", "N", 7, 5, alpha=1.5, beta=0.5, incx=2, incy=-1),
        g(f"smoke-{c_.lower()}-padded-nan", "smoke", c_, 6, 9, incx=-2, incy=3, pad=2,
          batch=2, seed=1),  # fmt: skip
        g("n", "check", "N", 1000, 300, alpha=0.5, beta=2.0),
        g("t", "check", "T", 513, 257, alpha=-1.0, beta=1.0, incx=3, incy=-2),
        g("c", "check", "C", 100, 333, alpha=2.0, beta=-0.5, incx=-1, incy=-1),
        g("n-padded-nan", "check", "N", 65, 129, pad=7, incx=-3, incy=2),
        g("t-nan", "check", "T", 4099, 17),
        g("m1", "check", "N", 1, 300, beta=1.0),
        g("n1", "check", "T", 300, 1, alpha=3.0, incy=5),
    ]
    if many:
        out += [
            g("batch-1", "check", "N", 64, 65, beta=1.0, batch=1),
            g("batch-200-tiny", "check", "T", 16, 8, alpha=0.5, beta=0.5, batch=200),
            g("bench-n-batch64", "bench", "N", 1024, 1024, batch=64),
            g("bench-t-batch512", "bench", "T", 128, 128, beta=1.0, batch=512),
        ]
    else:
        out += [
            g("bench-n-8192", "bench", "N", 8192, 8192),
            g("bench-t-8192", "bench", "T", 8192, 8192, beta=1.0),
            g("bench-t-tall", "bench", "T", 100_000, 256, incx=2),
        ]
    return out


def _symmetric_cases(v: Variant) -> list[Case]:
    def g(name, tag, uplo, n, k=None, alpha=1.0, beta=0.0, incx=1, incy=1, pad=0, seed=0, **kw):
        band = {} if k is None else dict(k=k)
        scal = {} if v.kind == "tbmv" else dict(alpha=_scalar(v, alpha), beta=_scalar(v, beta))
        return case(name, tag, reduction=n if k is None else 2 * k + 1, seed=seed, uplo=uplo,
                    n=n, **band, **scal, incx=incx, incy=incy, pad=pad, **kw)  # fmt: skip

    def tb(*args, trans="N", diag="N", **kw):
        return g(*args, trans=trans, diag=diag, **kw) if v.kind == "tbmv" else g(*args, **kw)

    k = (lambda x: x) if v.kind != "symv" else (lambda x: None)
    out = [
        tb("smoke-u", "smoke", "U", 7, k(2), alpha=1.5, beta=0.5, incx=2, incy=-1),
        tb("smoke-l-nan", "smoke", "L", 9, k(3), incx=-2, incy=3, pad=2, seed=1, trans="T",
           diag="U"),  # fmt: skip
        tb("u", "check", "U", 1000, k(30), alpha=0.5, beta=2.0, diag="U"),
        tb("l", "check", "L", 513, k(1), alpha=-1.0, beta=1.0, incx=3, incy=-2, trans="T"),
        tb("u-t-padded", "check", "U", 129, k(64), incx=-1, incy=-1, pad=5, trans="T"),
        tb("l-wide-band", "check", "L", 65, k(100), beta=-0.5, pad=3, trans="C", diag="U"),
        tb("one", "check", "U", 1, k(0), alpha=2.0, beta=1.0, incx=-4),
        tb("bench-u", "bench", "U", 8192, k(64)),
        tb("bench-l", "bench", "L", 16384, k(16), beta=1.0, trans="T"),
    ]
    return out
