"""The triangular-solve family's cases: each kind's shapes and flag combinations.
Only the generator imports this module (through triangular.routines), so that no engine,
judge or candidate process holds the hidden ones (kgb.operators.import_spec_libraries)."""

from __future__ import annotations

from kgb.cublas_families.layout import Batch
from kgb.cublas_families.routine import case
from kgb.cublas_families.triangular import Variant
from kgb.operators import Case


def cases(v: Variant) -> list[Case]:
    cplx = v.prefix in "CZ"
    many = v.form != Batch.SINGLE
    c_ = "C" if cplx else "T"
    if v.kind == "trsv":
        def g(name, tag, uplo, trans, diag, n, incx=1, pad=0, seed=0):
            return case(name, tag, reduction=n, seed=seed, uplo=uplo, trans=trans, diag=diag,
                        n=n, incx=incx, pad=pad)  # fmt: skip

        out = [
            g("smoke-lnn", "smoke", "L", "N", "N", 7, incx=2, pad=1),
            g("smoke-utu-negative", "smoke", "U", "T", "U", 20, incx=-3, seed=1),
        ]
        for uplo in "LU":
            for trans in "NTC":
                for diag in "NU":
                    out.append(g(f"{uplo}{trans}{diag}".lower(), "check", uplo, trans, diag,
                                 67, incx=-1 if trans == "T" else 2, pad=3))  # fmt: skip
        return out + [
            g("large", "check", "L", "N", "N", 2049),
            g("one", "check", "U", "N", "N", 1, incx=-4),
            g("bench-l", "bench", "L", "N", "N", 8192),
            g("bench-ut", "bench", "U", "T", "U", 8192, incx=2),
        ]

    def g(name, tag, side, uplo, trans, diag, m, n, alpha=1.0, pad=0, batch=3, seed=0):
        if cplx:  # a bench case's of magnitude 1: each solve in place multiplies the values by it
            alpha = complex(0.8, -0.6) * alpha if tag == "bench" else complex(alpha, -0.5 * alpha)
        extra = dict(batch=batch) if many else {}
        return case(name, tag, reduction=m if side == "L" else n, seed=seed, side=side,
                    uplo=uplo, trans=trans, diag=diag, m=m, n=n, alpha=alpha, pad=pad, **extra)  # fmt: skip

    out = [
        g("smoke-llnn", "smoke", "L", "L", "N", "N", 7, 5, alpha=1.5, pad=1),
        g(f"smoke-ru{c_.lower()}u", "smoke", "R", "U", c_, "U", 6, 20, alpha=-0.5, batch=2,
          seed=1),  # fmt: skip
    ]
    for side in "LR":
        for uplo in "LU":
            for trans in "NTC":
                for diag in "NU":
                    out.append(g(f"{side}{uplo}{trans}{diag}".lower(), "check", side, uplo,
                                 trans, diag, 67, 45, alpha=2.0, pad=2))  # fmt: skip
    out += [
        g("left-large", "check", "L", "U", "N", "N", 1000, 300, alpha=0.5),
        g("right-large", "check", "R", "L", "T", "N", 300, 1000),
        g("one", "check", "L", "L", "N", "N", 1, 1, alpha=3.0),
    ]
    if many:
        out += [
            g("batch-1", "check", "L", "L", "T", "N", 64, 65, batch=1),
            g("batch-200-tiny", "check", "R", "U", "N", "U", 8, 4, batch=200),
            g("bench-batch64", "bench", "L", "L", "N", "N", 256, 256, batch=64),
            g("bench-batch1024-small", "bench", "R", "U", "T", "N", 32, 32, batch=1024),
        ]
    else:
        out += [
            g("bench-left", "bench", "L", "L", "N", "N", 4096, 4096),
            g("bench-right", "bench", "R", "U", "T", "N", 4096, 4096),
        ]
    return out
