"""The gemm family's cases: the shapes, transposes and scalars of each batch form, and
the type pairs of cublasSgemmEx.
Only the generator imports this module (through gemm.routines), so that no engine,
judge or candidate process holds the hidden ones (kgb.operators.import_spec_libraries)."""

from __future__ import annotations

from kgb.cublas_families.gemm import Variant
from kgb.cublas_families.layout import Batch
from kgb.cublas_families.routine import case
from kgb.operators import Case

# (Atype = Btype, Ctype) pairs cublasSgemmEx supports
EX_PAIRS = [
    ("CUDA_R_32F", "CUDA_R_32F"), ("CUDA_R_16F", "CUDA_R_16F"), ("CUDA_R_16F", "CUDA_R_32F"),
    ("CUDA_R_16BF", "CUDA_R_16BF"), ("CUDA_R_16BF", "CUDA_R_32F"), ("CUDA_R_8I", "CUDA_R_32F"),
]  # fmt: skip


def cases(v: Variant) -> list[Case]:
    return _ex_cases() if v.ex else _gemm_cases(v)


def _gemm_cases(v: Variant) -> list[Case]:
    cplx = v.prefix in "CZ"
    many = v.form != Batch.SINGLE

    def g(name, tag, ta, tb, m, n, k, alpha=1.0, beta=0.0, pad=(0, 0, 0), batch=3, seed=0, **kw):
        if cplx:  # complex scalars with both parts
            alpha = complex(alpha, -0.5 * alpha)
            beta = complex(beta, 0.25 * beta) if beta else 0j
        extra = dict(batch=batch) if many else {}
        return case(name, tag, reduction=k, seed=seed, ta=ta, tb=tb, m=m, n=n, k=k,
                    alpha=alpha, beta=beta, pad=pad, **extra, **kw)  # fmt: skip

    c_ = "C" if cplx else "T"
    out = [
        g("smoke-nn", "smoke", "N", "N", 5, 7, 9, alpha=1.5, beta=0.5),
        g("smoke-" + ("tc" if cplx else "tt") + "-padded-nan", "smoke", "T", c_, 6, 3, 11,
          pad=(2, 1, 3), batch=2, seed=1),  # fmt: skip
        g("nn", "check", "N", "N", 257, 129, 300, alpha=0.5, beta=2.0),
        g("nt", "check", "N", "T", 100, 333, 65, alpha=-1.0, beta=1.0),
        g("tn", "check", "T", "N", 130, 64, 127),
        g("tt", "check", "T", "T", 77, 200, 33, beta=-0.5),
        g("cn", "check", "C", "N", 96, 80, 257, alpha=2.0, beta=0.25),
        g("nc", "check", "N", "C", 31, 47, 200),
        g("cc", "check", "C", "C", 45, 61, 70, alpha=-0.5, beta=1.5),
        g("padded-tt-nan", "check", "T", "T", 65, 33, 129, alpha=-0.75, pad=(3, 7, 1)),
        g("m1", "check", "T", "N", 1, 300, 512, beta=1.0),
        g("n1", "check", "N", "N", 300, 1, 200, alpha=3.0),
        g("k0", "check", "N", "N", 40, 30, 0, beta=0.5),
        g("long-k", "check", "T", "N", 32, 48, 4099, alpha=0.5),
    ]
    if many:
        out += [
            g("batch-1", "check", "N", "T", 64, 65, 66, beta=1.0, batch=1),
            g("batch-100-tiny", "check", "T", "N", 8, 4, 16, alpha=0.5, beta=0.5, batch=100),
            g("bench-256-batch64", "bench", "N", "N", 256, 256, 256, batch=64),
            g("bench-attention", "bench", "T", "N", 128, 1024, 64, beta=1.0, batch=256),
            g("bench-1024-batch8", "bench", "N", "T", 1024, 1024, 1024, batch=8),
        ]
    else:
        out += [
            g("square-4096", "bench", "N", "N", 4096, 4096, 4096),
            g("mlp-tn", "bench", "T", "N", 8192, 4096, 4096, beta=1.0),
            g("skinny-nt", "bench", "N", "T", 16384, 128, 8192, alpha=0.5, beta=0.5),
        ]
    return out


def _ex_cases() -> list[Case]:
    out = []
    for i, (at, ct) in enumerate(EX_PAIRS):
        tag = "smoke" if at in ("CUDA_R_16F", "CUDA_R_8I") and ct == "CUDA_R_32F" else "check"
        short = f"{at[7:].lower()}-{ct[7:].lower()}"
        out += [
            case(f"{tag}-{short}-tn", tag, reduction=19, seed=i, ta="T", tb="N", m=6, n=5, k=19,
                 alpha=1.5, beta=0.5, pad=(1, 0, 2), atype=at, ctype=ct),  # fmt: skip
            case(f"{short}-nt-nan", "check", reduction=300, seed=i, ta="N", tb="T", m=129, n=70,
                 k=300, alpha=-1.0, beta=0.0, pad=(3, 1, 0), atype=at, ctype=ct),  # fmt: skip
            case(f"bench-{short}", "bench", reduction=4096, ta="N", tb="N", m=4096, n=4096,
                 k=4096, alpha=1.0, beta=0.0, pad=(0, 0, 0), atype=at, ctype=ct),  # fmt: skip
        ]
    return out
