"""The symmetric family's cases: each kind's shapes, triangles and scalars.
Only the generator imports this module (through symmetric.routines), so that no engine,
judge or candidate process holds the hidden ones (kgb.operators.import_spec_libraries)."""

from __future__ import annotations

from kgb.cublas_families.routine import case
from kgb.cublas_families.symmetric import Variant
from kgb.operators import Case


def cases(v: Variant) -> list[Case]:
    cplx = v.prefix in "CZ"

    def s(x):
        return complex(x, -0.5 * x) if cplx else x

    if v.kind == "symm":
        def g(name, tag, side, uplo, m, n, alpha=1.0, beta=0.0, pad=0, seed=0):
            return case(name, tag, reduction=m if side == "L" else n, seed=seed, side=side,
                        uplo=uplo, m=m, n=n, alpha=s(alpha), beta=s(beta), pad=pad)  # fmt: skip

        return [
            g("smoke-lu", "smoke", "L", "U", 7, 5, alpha=1.5, beta=0.5, pad=1),
            g("smoke-rl-nan", "smoke", "R", "L", 6, 9, seed=1),
            g("ll", "check", "L", "L", 257, 129, alpha=0.5, beta=2.0),
            g("ru-padded", "check", "R", "U", 100, 333, alpha=-1.0, beta=1.0, pad=7),
            g("lu-nan", "check", "L", "U", 65, 300, pad=3),
            g("rl", "check", "R", "L", 1000, 17, beta=-0.5),
            g("one", "check", "L", "L", 1, 1, alpha=2.0, beta=1.0),
            g("bench-l", "bench", "L", "U", 4096, 4096),
            g("bench-r", "bench", "R", "L", 8192, 1024, beta=1.0),
        ]
    transposes = ("N", "T") if v.kind == "syrk_ex" else ("N", "T", "C")
    atypes = ("CUDA_C_32F", "CUDA_C_8I") if v.kind == "syrk_ex" else (None,)

    def g(name, tag, uplo, trans, n, k, alpha=1.0, beta=0.0, pad=0, seed=0, atype=None):
        extra = dict(atype=atype) if atype else {}
        return case(name, tag, reduction=k, seed=seed, uplo=uplo, trans=trans, n=n, k=k,
                    alpha=s(alpha), beta=s(beta), pad=pad, **extra)  # fmt: skip

    out = []
    for atype in atypes:
        sfx = f"-{atype[7:].lower()}" if atype else ""
        out += [
            g(f"smoke-un{sfx}", "smoke", "U", "N", 7, 5, alpha=1.5, beta=0.5, pad=1, atype=atype),
            g(f"smoke-lt-nan{sfx}", "smoke", "L", "T", 6, 9, seed=1, atype=atype),
            g(f"ln{sfx}", "check", "L", "N", 257, 129, alpha=0.5, beta=2.0, atype=atype),
            g(f"ut-padded{sfx}", "check", "U", transposes[-1], 100, 333, alpha=-1.0, beta=1.0,
              pad=7, atype=atype),  # fmt: skip
            g(f"un-nan{sfx}", "check", "U", "N", 65, 300, pad=3, atype=atype),
            g(f"lt-long-k{sfx}", "check", "L", "T", 40, 4099, beta=-0.5, atype=atype),
            g(f"k0{sfx}", "check", "U", "N", 30, 0, beta=0.5, atype=atype),
            g(f"bench-un{sfx}", "bench", "U", "N", 4096, 4096, atype=atype),
            g(f"bench-lt{sfx}", "bench", "L", "T", 8192, 1024, beta=1.0, atype=atype),
        ]
    return out
