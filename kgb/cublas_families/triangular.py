"""The triangular-solve families: op(A) x = b in place of x (trsv), and op(A) X = alpha B
or X op(A) = alpha B in place of B (trsm, single and pointer-array batched). One blocked
Triton solve serves them all."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from kgb.cublas_families import text
from kgb.cublas_families.layout import (
    C_TYPE,
    PREFIX_DTYPE,
    PY_SCALAR,
    Batch,
    batched,
    matrix,
    op,
    random,
    set_vector,
    span,
    vector,
    wide,
)
from kgb.cublas_families.routine import Routine
from kgb.operators import Case

# 2: bench cases' matrices keep repeated in-place solves in range (`_triangle_storage`)
VERSION = 2


@dataclass(frozen=True)
class Variant:
    kind: str  # trsv trsm
    prefix: str
    form: Batch = Batch.SINGLE


ROUTINES = {
    "cublasStrsv_v2": Variant("trsv", "S"),
    "cublasStrsm_v2": Variant("trsm", "S"),
    "cublasDtrsmBatched": Variant("trsm", "D", Batch.POINTERS),
    "cublasZtrsmBatched": Variant("trsm", "Z", Batch.POINTERS),
}


# ---------------------------------------------------------------- references


def read_cells(n: int, uplo: str, diag: str, device) -> torch.Tensor:
    """Which cells of an n x n matrix a triangular routine reads: its triangle `uplo`, less
    the diagonal where diag == 'U' (taken as ones)."""
    cells = torch.ones(n, n, dtype=torch.bool, device=device)
    return cells.tril(-1 if diag == "U" else 0) if uplo == "L" else cells.triu(1 if diag == "U" else 0)


def triangular(A, n, lda, uplo, diag, a0=0) -> torch.Tensor:
    """The n x n triangular matrix stored in A's triangle `uplo` (the other triangle, and
    the diagonal when diag == 'U', are not read: they may hold NaN), in float64 / complex128."""
    a = matrix(A, n, n, lda, a0).to(wide(A.dtype))
    t = torch.where(read_cells(n, uplo, diag, a.device), a, torch.zeros((), dtype=a.dtype, device=a.device))
    if diag == "U":
        t = t + torch.eye(n, dtype=a.dtype, device=a.device)
    return t


def _solve(side, uplo, trans, diag, m, n, alpha, A, a0, lda, B, b0, ldb):
    if m <= 0 or n <= 0:
        return
    a = op(triangular(A, m if side == "L" else n, lda, uplo, diag, a0), trans)
    b = matrix(B, m, n, ldb, b0)
    upper = (uplo == "U") == (trans == "N")
    x = torch.linalg.solve_triangular(a, alpha * b.to(a.dtype), upper=upper, left=side == "L")
    b.copy_(x)


def trsm(side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb):
    _solve(side, uplo, trans, diag, m, n, alpha, A, 0, lda, B, 0, ldb)


def trsm_batched(side, uplo, trans, diag, m, n, alpha, A, Aarray, lda, B, Barray, ldb,
                 batchCount):  # fmt: skip
    starts = list(zip(Aarray.tolist(), Barray.tolist(), strict=True))
    for a0, b0 in starts[:batchCount]:
        _solve(side, uplo, trans, diag, m, n, alpha, A, a0, lda, B, b0, ldb)


def trsv(uplo, trans, diag, n, A, lda, x, incx):
    if n <= 0:
        return
    a = op(triangular(A, n, lda, uplo, diag), trans)
    b = vector(x, n, incx).to(a.dtype)[:, None]
    upper = (uplo == "U") == (trans == "N")
    set_vector(x, n, incx, torch.linalg.solve_triangular(a, b, upper=upper)[:, 0])


# ---------------------------------------------------------------- inputs


# A bench case's solve runs in place a hundred times or more on the same buffers while it is
# timed, each on the last one's answer. With the check cases' matrices (|diagonal| >= 1.5,
# off-diagonal entries of 0.5 / sqrt(dim)) the values fell to float32's subnormals within
# about a hundred solves, and cuBLAS's Strsm slowed 1.26-1.40x after 200 (H200, session 34,
# benchmarks/inplace_drift.py); a diagonal of magnitude 1 grows them instead (the matrix is
# far from normal). These keep 1000 solves within 2^-40..2^40 (tests/test_cublas_inplace.py).
BENCH_OFF_DIAGONAL = 0.1
BENCH_DIAGONAL_SPREAD = 2.0**-6  # |diagonal| in [1, 1 + this)


def _triangle_storage(count: int, dim: int, lda: int, uplo: str, diag: str, dtype, gen, bench: bool = False):
    """fill(size) for a buffer of triangular matrices that are well conditioned: small
    off-diagonal entries, a diagonal away from 0; what the routine must not read is NaN.
    `bench`: matrices that repeated solves in place keep in range (BENCH_OFF_DIAGONAL)."""

    def fill(size: int) -> torch.Tensor:
        buf = random(size, dtype, gen) * ((BENCH_OFF_DIAGONAL if bench else 0.5) / dim**0.5)
        return buf

    def shape(buf: torch.Tensor, starts: list[int]) -> None:
        """The matrices at `starts` given their diagonals and NaN where they are not read.
        Drawn one matrix after the other, as they always were (the values stay those of
        earlier versions), and written all at once: a matrix at a time, a bench case of 1,024
        matrices launched some 20,000 kernels on the GPU, 0.5-0.9 s in a work section."""
        if not starts:
            return
        ds, spreads = [], []
        for _ in starts:
            ds.append(random(dim, dtype, gen))
            if bench:
                spreads.append(torch.rand(dim, generator=gen, dtype=torch.float64))
        d = torch.stack(ds)
        if bench:
            diagonal = d / d.abs() * (1.0 + BENCH_DIAGONAL_SPREAD * torch.stack(spreads).to(d.abs().dtype))
        else:
            diagonal = d / d.abs() * (1.5 + d.abs())  # |diagonal| in [1.5, ...)
        at = torch.arange(dim, device=buf.device)
        cells = (torch.tensor(starts, device=buf.device)[:, None, None] + at[:, None] + at * lda)  # (b, i, j)
        buf[cells.diagonal(dim1=1, dim2=2)] = diagonal.to(buf.dtype)
        buf[cells[:, ~read_cells(dim, uplo, diag, buf.device)]] = float("nan")

    return fill, shape


def make_inputs(name: str, c: Case, gen: torch.Generator, device: str) -> dict:
    v, p = ROUTINES[name], c.params
    dtype = PREFIX_DTYPE[v.prefix]
    if v.kind == "trsv":
        n, incx = p["n"], p["incx"]
        lda = n + p["pad"]
        fill, shape = _triangle_storage(1, n, lda, p["uplo"], p["diag"], dtype, gen, bench=c.tag == "bench")
        A = fill(lda * n)
        shape(A, [0])
        return dict(uplo=p["uplo"], trans=p["trans"], diag=p["diag"], n=n, A=A.to(device),
                    lda=lda, x=random(span(n, incx), dtype, gen).to(device), incx=incx)  # fmt: skip
    m, n, count = p["m"], p["n"], p.get("batch", 1)
    dim = m if p["side"] == "L" else n
    lda, ldb = dim + p["pad"], m + 2 * p["pad"]
    fill, shape = _triangle_storage(count, dim, lda, p["uplo"], p["diag"], dtype, gen, bench=c.tag == "bench")
    a = batched(count, lda * dim, v.form, gen, fill)
    shape(a.buf, a.starts)
    b = batched(count, ldb * n, v.form, gen, lambda size: random(size, dtype, gen))
    args = dict(side=p["side"], uplo=p["uplo"], trans=p["trans"], diag=p["diag"], m=m, n=n,
                alpha=p["alpha"], A=a.buf.to(device))  # fmt: skip
    if v.form == Batch.POINTERS:
        args["Aarray"] = a.offsets.to(device)
    args |= dict(lda=lda, B=b.buf.to(device))
    if v.form == Batch.POINTERS:
        args |= dict(Barray=b.offsets.to(device), ldb=ldb, batchCount=count)
    else:
        args["ldb"] = ldb
    return args


# ---------------------------------------------------------------- text


def _signature(name: str, v: Variant) -> tuple[str, str]:
    s, t, T = PY_SCALAR[v.prefix], C_TYPE[v.prefix], "torch.Tensor"
    flags = ("uplo: str, trans: str, diag: str",
             "cublasFillMode_t uplo, cublasOperation_t trans, cublasDiagType_t diag")  # fmt: skip
    if v.kind == "trsv":
        return (f"{flags[0]}, n: int, A: {T}, lda: int, x: {T}, incx: int",
                f"{flags[1]}, int n, const {t} *A, int lda, {t} *x, int incx")  # fmt: skip
    head = (f"side: str, {flags[0]}, m: int, n: int, alpha: {s}",
            f"cublasSideMode_t side, {flags[1]}, int m, int n, const {t} *alpha")  # fmt: skip
    if v.form == Batch.SINGLE:
        return (f"{head[0]}, A: {T}, lda: int, B: {T}, ldb: int",
                f"{head[1]}, const {t} *A, int lda, {t} *B, int ldb")  # fmt: skip
    return (f"{head[0]}, A: {T}, Aarray: {T}, lda: int, B: {T}, Barray: {T}, ldb: int, "
            "batchCount: int",
            f"{head[1]}, const {t} *const A[], int lda, {t} *const B[], int ldb, "
            "int batchCount")  # fmt: skip


_FLAGS = (
    "- `uplo`: 'L' (A is lower triangular: only its lower triangle is read) or 'U'. The "
    "other triangle is not read and may hold NaN.\n"
    "- `trans`: 'N' (op(A) = A), 'T' (A^T) or 'C' (A^H; 'T' for real A).\n"
    "- `diag`: 'N' (the diagonal is read) or 'U' (unit diagonal: not read, may hold NaN, "
    "taken as 1)."
)


def _task(name: str, v: Variant) -> str:
    dtype = {"S": "float32", "D": "float64", "C": "complex64", "Z": "complex128"}[v.prefix]
    if v.kind == "trsv":
        head = f"solves op(A) @ x = b for x in place of b, A triangular, {dtype}"
        shapes = (_FLAGS + "\n- A is n x n (lda >= n). x holds b on entry and the solution "
                  "on exit.")  # fmt: skip
    else:
        head = (f"solves op(A) @ X = alpha * B (side 'L') or X @ op(A) = alpha * B (side 'R') "
                f"for X in place of B, A triangular, {dtype}")  # fmt: skip
        shapes = ("- `side`: 'L' (A is m x m) or 'R' (A is n x n); lda >= that order; "
                  "cublasSideMode_t.\n" + _FLAGS + "\n- B is m x n (ldb >= m), overwritten "
                  "with X.\n- " + text.scalars(v.prefix, "alpha") + " alpha is never 0 in "
                  "the cases.")  # fmt: skip
    parts = [f"cuBLAS `{name}` (cuBLAS 12): {head}.", text.STORAGE]
    if v.kind == "trsv":
        parts.append(text.VECTORS)
    parts.append(shapes)
    if v.form != Batch.SINGLE:
        parts.append(text.batch(v.form, "matrices A and B", C_TYPE[v.prefix]) + " Every "
                     "problem shares side, uplo, trans, diag, m, n, the leading dimensions "
                     "and alpha.")  # fmt: skip
    if v.prefix in "CZ":
        parts.append(text.COMPLEX)
    parts.append(
        "The matrices are well conditioned (no pivoting, no singularity checks). Compute in "
        "the routine's precision or better; any order of operations. If a dimension is 0 "
        "(or batchCount == 0) nothing is done. A must not be modified."
    )
    return "\n\n".join(parts)


def _solution(name: str, v: Variant, py: str) -> str:
    if v.kind == "trsv":
        call = ("_solve(\"L\", uplo, trans, diag, n, 1, 1.0, A, lda, x, 1,\n"
                "           z_strides=(incx, 0), z_base=_base(n, incx))")  # fmt: skip
    elif v.form == Batch.SINGLE:
        call = "_solve(side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb)"
    else:
        call = ("_solve(side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb, batch=batchCount,\n"
                "           offsets=(Aarray, Barray))")  # fmt: skip
    return text.solution(["triangular"], name, py, call)


def routines() -> list[Routine]:
    # not at the top: engines import this module for its specs and must not hold the cases
    from kgb.cublas_families.triangular_cases import cases

    out = []
    for name, v in ROUTINES.items():
        py, c = _signature(name, v)
        reference = "trsv" if v.kind == "trsv" else (
            "trsm" if v.form == Batch.SINGLE else "trsm_batched")  # fmt: skip
        out.append(Routine(
            name=name, family="triangular", version=VERSION, task=_task(name, v),
            signature=text.stub(name, py, c), cases=cases(v), reference=reference,
            solution=_solution(name, v, py), inout=("x",) if v.kind == "trsv" else ("B",),
        ))  # fmt: skip
    return out
