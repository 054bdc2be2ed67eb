"""cuBLAS `cublasSgemm_v2` (cuBLAS 12): C <- alpha * op(A) @ op(B) + beta * C, float32,
column-major.

    cublasSgemm_v2(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc) -> None

The BLAS routine without its handle. A, B and C are 1-D contiguous float32 tensors that
stand for the device pointers; they hold column-major matrices with leading dimensions
lda, ldb, ldc: element (i, j) of a matrix X with leading dimension ldx is X[i + j * ldx].
Rows i >= the matrix's row count (when ld exceeds it) are padding.

- `transa`, `transb`: the strings 'N' (op(X) = X), 'T' (op(X) = X transposed) or 'C'
  (conjugate transpose, the same as 'T' for real matrices).
- op(A) is m x k: A is m x k (lda >= m) for 'N', k x m (lda >= k) otherwise.
- op(B) is k x n: B is k x n (ldb >= k) for 'N', n x k (ldb >= n) otherwise.
- C is m x n with ldc >= m, updated in place; nothing is returned.
- `alpha`, `beta`: Python floats (host scalars, CUBLAS_POINTER_MODE_HOST).

Semantics: for every 0 <= i < m, 0 <= j < n,
    C(i, j) <- alpha * sum_p op(A)(i, p) * op(B)(p, j) + beta * C(i, j)
with float32 products accumulated in float32 (any order; TF32 or half-precision tensor-core
arithmetic is not accurate enough). When beta == 0, C is not read: it may hold NaN or
garbage, which must not leak into the result (0 * NaN is NaN). When k == 0 the product
term is 0. If m == 0 or n == 0 nothing is done. The padding rows of C (i >= m) and all of
A and B must keep their values.
"""

import torch

from kgb import cublas
from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def cublasSgemm_v2(
    transa: str, transb: str, m: int, n: int, k: int, alpha: float,
    A: torch.Tensor, lda: int, B: torch.Tensor, ldb: int, beta: float, C: torch.Tensor, ldc: int,
) -> None:
    """cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
    cublasOperation_t transb, int m, int n, int k, const float *alpha, const float *A, int lda,
    const float *B, int ldb, const float *beta, float *C, int ldc)  -- without the handle"""
'''

INOUT_ARGS = ("C",)


def _case(name, tag, ta, tb, m, n, k, alpha=1.0, beta=0.0, pad=(0, 0, 0), seed=0):
    """pad: extra rows (ld - rows) of A, B, C. With beta == 0, C starts as NaN."""
    params = dict(ta=ta, tb=tb, m=m, n=n, k=k, alpha=alpha, beta=beta, pad=pad)
    return Case(name, tag, params, seed=seed, reduction=max(k, 1))


CASES = [
    _case("smoke-nn", "smoke", "N", "N", 5, 7, 9, alpha=1.5, beta=0.5),
    _case("smoke-tn-padded-nan", "smoke", "T", "N", 6, 3, 11, pad=(2, 1, 3), seed=1),
    # every transpose pair, sizes that are not multiples of a tile
    _case("nn", "check", "N", "N", 257, 129, 300, alpha=0.5, beta=2.0),
    _case("nt", "check", "N", "T", 100, 333, 65, alpha=-1.0, beta=1.0),
    _case("tn", "check", "T", "N", 513, 64, 127),
    _case("tt", "check", "T", "T", 77, 1000, 33, beta=-0.5),
    _case("cn", "check", "C", "N", 96, 80, 1024, alpha=2.0, beta=0.25),
    _case("nc", "check", "N", "C", 31, 47, 200, alpha=1.0, beta=0.0),
    _case("padded", "check", "N", "N", 120, 90, 70, beta=1.0, pad=(8, 5, 13)),
    _case("padded-tt-nan", "check", "T", "T", 65, 33, 129, alpha=-0.75, pad=(3, 7, 1)),
    # degenerate shapes: gemv-like, rank-1, k == 0, large k
    _case("m1", "check", "T", "N", 1, 300, 512, beta=1.0),
    _case("n1", "check", "N", "N", 1000, 1, 700, alpha=3.0),
    _case("k1", "check", "N", "T", 200, 150, 1, beta=0.5),
    _case("k0", "check", "N", "N", 40, 30, 0, alpha=1.0, beta=0.5),
    _case("long-k", "check", "T", "N", 32, 48, 8193, alpha=0.1, beta=0.0),
    # column-major views of real linear layers: op(A) = W^T, B = activations
    _case("linear-4096", "check", "T", "N", 1024, 64, 4096, beta=1.0),
    # bench
    _case("square-4096", "bench", "N", "N", 4096, 4096, 4096),
    _case("square-8192-tn", "bench", "T", "N", 8192, 8192, 8192, beta=1.0),
    _case("mlp-up-tn", "bench", "T", "N", 14336, 4096, 4096),
    _case("skinny-nt", "bench", "N", "T", 16384, 128, 16384, alpha=0.5, beta=0.5),
]


def _shape(trans: str, rows: int, cols: int) -> tuple[int, int]:
    """Stored shape of a matrix whose op() is rows x cols."""
    return (rows, cols) if trans == "N" else (cols, rows)


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    m, n, k = p["m"], p["n"], p["k"]
    ra, ca = _shape(p["ta"], m, k)
    rb, cb = _shape(p["tb"], k, n)
    pa, pb, pc = p["pad"]
    lda, ldb, ldc = max(ra, 1) + pa, max(rb, 1) + pb, max(m, 1) + pc
    A = torch.randn(lda * ca, generator=gen)
    B = torch.randn(ldb * cb, generator=gen)
    if p["beta"] == 0:
        C = torch.full((ldc * n,), float("nan"))  # never to be read
    else:
        C = torch.randn(ldc * n, generator=gen)
    return dict(
        transa=p["ta"],
        transb=p["tb"],
        m=m,
        n=n,
        k=k,
        alpha=p["alpha"],
        A=A.to(device),
        lda=lda,
        B=B.to(device),
        ldb=ldb,
        beta=p["beta"],
        C=C.to(device),
        ldc=ldc,
    )


def _matrix(buf: torch.Tensor, rows: int, cols: int, ld: int) -> torch.Tensor:
    """The column-major rows x cols matrix with leading dimension ld, as a view of buf."""
    return buf.as_strided((rows, cols), (1, ld))


def reference(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc):
    if m <= 0 or n <= 0:
        return
    a = _matrix(A, m, k, lda) if transa == "N" else _matrix(A, k, m, lda).t()
    b = _matrix(B, k, n, ldb) if transb == "N" else _matrix(B, n, k, ldb).t()
    c = _matrix(C, m, n, ldc)
    product = alpha * (a @ b)
    # beta == 0: C is not read, so NaN or garbage in it does not propagate
    c.copy_(product if beta == 0 else product + beta * c)


def speed_baseline(entry, device):
    return cublas.baseline("cublasSgemm_v2", device)
