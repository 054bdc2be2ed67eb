"""The matrix-vector families: y <- alpha op(A) x + beta y with A general (gemv: single,
strided-batched, pointer-array batched), symmetric (symv), symmetric band (sbmv), and
x <- op(A) x with A triangular band (tbmv). One Triton kernel serves them all."""

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
    nans,
    op,
    random,
    set_vector,
    span,
    symmetric,
    vector,
    wide,
)
from kgb.cublas_families.routine import Routine
from kgb.operators import Case

VERSION = 1
# A routine whose cases changed after the family's version took its own, so that the others'
# baselines and trials stay as they were. Tbmv 2: bench bands that repeated calls in place keep
# in range (`_band_storage`).
VERSIONS = {"cublasStbmv_v2": 2}
# x <- A x runs in place a hundred times or more on the same vector while a bench case is timed.
# With standard-normal bands the values reached infinity within 200 calls (H200, session 34,
# benchmarks/inplace_drift.py); a bench band has |diagonal| within 2^-7 of 1 and off-diagonal
# entries of 0.05/sqrt(k+1), which keep 300 calls within 2^-40..2^40 (tests/test_cublas_inplace.py;
# the matrix is far from normal, so smaller entries than a solve's are needed).
BENCH_BAND_OFF_DIAGONAL = 0.05
BENCH_BAND_DIAGONAL_SPREAD = 2.0**-7


@dataclass(frozen=True)
class Variant:
    kind: str  # gemv, symv, sbmv, tbmv
    prefix: str
    form: Batch = Batch.SINGLE


ROUTINES = {
    "cublasDgemv_v2": Variant("gemv", "D"),
    "cublasCgemv_v2": Variant("gemv", "C"),
    **{f"cublas{p}gemvStridedBatched": Variant("gemv", p, Batch.STRIDED) for p in "SDCZ"},
    **{f"cublas{p}gemvBatched": Variant("gemv", p, Batch.POINTERS) for p in "SDZ"},
    "cublasCgemvBatched_64": Variant("gemv", "C", Batch.POINTERS),
    "cublasCsymv_v2": Variant("symv", "C"),
    "cublasDsbmv_v2": Variant("sbmv", "D"),
    "cublasStbmv_v2": Variant("tbmv", "S"),
}


# ---------------------------------------------------------------- references


def _gemv_one(trans, m, n, alpha, A, a0, lda, x, x0, incx, beta, y, y0, incy, count=None,
              strides=(0, 0, 0)):  # fmt: skip
    """One problem; with `count`, that many whose A, x and y lie `strides` further on each,
    as one batched product (a Python loop over 512 problems took seconds under the fake
    tensors of tests/test_operators.py, where every case's reference runs)."""
    if m <= 0 or n <= 0:
        return
    w = wide(y.dtype)
    sa, sx, sy = strides
    a = op(matrix(A, m, n, lda, a0, count, sa).to(w), trans)
    rows, cols = a.shape[-2:]
    out = alpha * (a @ vector(x, cols, incx, x0, count, sx).to(w).unsqueeze(-1)).squeeze(-1)
    # beta == 0: y is not read, so NaN or garbage in it does not propagate
    if beta != 0:
        out = out + beta * vector(y, rows, incy, y0, count, sy).to(w)
    set_vector(y, rows, incy, out, y0, count, sy)


def gemv(trans, m, n, alpha, A, lda, x, incx, beta, y, incy):
    _gemv_one(trans, m, n, alpha, A, 0, lda, x, 0, incx, beta, y, 0, incy)


def gemv_strided_batched(
    trans, m, n, alpha, A, lda, strideA, x, incx, stridex, beta, y, incy, stridey, batchCount
):
    # every problem at once (cuBLAS leaves problems whose y overlap undefined)
    if batchCount > 0:
        _gemv_one(trans, m, n, alpha, A, 0, lda, x, 0, incx, beta, y, 0, incy,
                  batchCount, (strideA, stridex, stridey))  # fmt: skip


def gemv_batched(trans, m, n, alpha, A, Aarray, lda, x, xarray, incx, beta, y, yarray, incy,
                 batchCount):  # fmt: skip
    starts = list(zip(Aarray.tolist(), xarray.tolist(), yarray.tolist(), strict=True))
    for a0, x0, y0 in starts[:batchCount]:
        _gemv_one(trans, m, n, alpha, A, a0, lda, x, x0, incx, beta, y, y0, incy)


def band_to_dense(A: torch.Tensor, n: int, k: int, lda: int, uplo: str) -> torch.Tensor:
    """The n x n matrix whose band (k off-diagonals on side `uplo`) A stores: upper band
    element (i, j) at A[k + i - j, j], lower at A[i - j, j]; zero outside the band."""
    band = matrix(A, k + 1, n, lda)
    dense = torch.zeros(n, n, dtype=A.dtype, device=A.device)
    for d in range(min(k, n - 1) + 1):
        if uplo == "U":
            dense.diagonal(d).copy_(band[k - d, d:])
        else:
            dense.diagonal(-d).copy_(band[d, : n - d])
    return dense


def _symmetric_mv(dense, n, alpha, x, incx, beta, y, incy):
    w = wide(y.dtype)
    out = alpha * (dense.to(w) @ vector(x, n, incx).to(w))
    if beta != 0:
        out = out + beta * vector(y, n, incy).to(w)
    set_vector(y, n, incy, out)


def symv(uplo, n, alpha, A, lda, x, incx, beta, y, incy):
    if n > 0:
        _symmetric_mv(symmetric(matrix(A, n, n, lda), uplo), n, alpha, x, incx, beta, y, incy)


def sbmv(uplo, n, k, alpha, A, lda, x, incx, beta, y, incy):
    if n > 0:
        band = band_to_dense(A, n, k, lda, uplo)
        dense = band + band.t() - torch.diag_embed(band.diagonal())
        _symmetric_mv(dense, n, alpha, x, incx, beta, y, incy)


def tbmv(uplo, trans, diag, n, k, A, lda, x, incx):
    if n <= 0:
        return
    dense = band_to_dense(A, n, k, lda, uplo)
    if diag == "U":  # the diagonal is not read: it is taken to be 1
        dense.diagonal().fill_(1)
    out = op(dense.double(), trans) @ vector(x, n, incx).double()
    set_vector(x, n, incx, out)


# ---------------------------------------------------------------- inputs


def _band_storage(n, k, lda, uplo, unit, dtype, gen, bench: bool = False) -> torch.Tensor:
    """Band storage with the entries the routine must not read set to NaN; `bench`: a band
    that repeated products in place keep in range (BENCH_BAND_OFF_DIAGONAL)."""
    A = random(lda * n, dtype, gen)
    band = matrix(A, lda, n, lda)
    rows = torch.arange(lda)[:, None]
    cols = torch.arange(n)[None, :]
    i = rows - k + cols if uplo == "U" else rows + cols  # the element's row in the full matrix
    if bench:
        diagonal = i == cols
        spread = torch.rand(lda, n, generator=gen, dtype=torch.float64).to(band.abs().dtype)
        band.copy_(torch.where(diagonal, band.sgn() * (1.0 - BENCH_BAND_DIAGONAL_SPREAD + 2 * BENCH_BAND_DIAGONAL_SPREAD * spread),
                               band * (BENCH_BAND_OFF_DIAGONAL / (k + 1) ** 0.5)))
    unread = (i < 0) | (i >= n) | (rows > k)
    if unit:
        unread |= i == cols
    band.masked_fill_(unread, float("nan"))
    return A


def make_inputs(name: str, c: Case, gen: torch.Generator, device: str) -> dict:
    v, p = ROUTINES[name], c.params
    dtype = PREFIX_DTYPE[v.prefix]
    incx, incy = p["incx"], p.get("incy", 1)
    if v.kind != "gemv":
        n, lda = p["n"], p.get("k", p["n"] - 1) + 1 + p["pad"]
        if v.kind == "symv":
            A = random(lda * n, dtype, gen)
            unread = torch.ones(n, n, dtype=torch.bool)
            unread = unread.tril(-1) if p["uplo"] == "U" else unread.triu(1)
            matrix(A, n, n, lda).masked_fill_(unread, float("nan"))
        else:
            A = _band_storage(n, p["k"], lda, p["uplo"], p.get("diag") == "U", dtype, gen,
                              bench=v.kind == "tbmv" and c.tag == "bench")
        x = random(span(n, incx), dtype, gen).to(device)
        args = dict(uplo=p["uplo"])
        if v.kind == "tbmv":
            return dict(uplo=p["uplo"], trans=p["trans"], diag=p["diag"], n=n, k=p["k"],
                        A=A.to(device), lda=lda, x=x, incx=incx)  # fmt: skip
        args |= dict(n=n, **({"k": p["k"]} if v.kind == "sbmv" else {}), alpha=p["alpha"])
        y = nans(span(n, incy), dtype) if p["beta"] == 0 else random(span(n, incy), dtype, gen)
        return args | dict(A=A.to(device), lda=lda, x=x, incx=incx, beta=p["beta"],
                           y=y.to(device), incy=incy)  # fmt: skip
    m, n, count = p["m"], p["n"], p.get("batch", 1)
    lx, ly = (n, m) if p["trans"] == "N" else (m, n)
    lda = max(m, 1) + p["pad"]
    a = batched(count, lda * n, v.form, gen, lambda size: random(size, dtype, gen))
    x = batched(count, span(lx, incx), v.form, gen, lambda size: random(size, dtype, gen))
    fill_y = (lambda size: nans(size, dtype)) if p["beta"] == 0 else (
        lambda size: random(size, dtype, gen))  # fmt: skip
    y = batched(count, span(ly, incy), v.form, gen, fill_y)
    args = dict(trans=p["trans"], m=m, n=n, alpha=p["alpha"])
    for key, buf, inc in (("A", a, None), ("x", x, incx), ("beta", None, None), ("y", y, incy)):
        if buf is None:
            args["beta"] = p["beta"]
            continue
        args[key] = buf.buf.to(device)
        if v.form == Batch.POINTERS:
            args[f"{key}array"] = buf.offsets.to(device)
        args["lda" if key == "A" else f"inc{key}"] = lda if key == "A" else inc
        if v.form == Batch.STRIDED:
            args[f"stride{key}"] = buf.stride
    if v.form != Batch.SINGLE:
        args["batchCount"] = count
    return args


# ---------------------------------------------------------------- text


def _signature(name: str, v: Variant) -> tuple[str, str]:
    s, t = PY_SCALAR[v.prefix], C_TYPE[v.prefix]
    i = "int64_t" if name.endswith("_64") else "int"
    T = "torch.Tensor"
    if v.kind == "gemv" and v.form == Batch.SINGLE:
        return (f"trans: str, m: int, n: int, alpha: {s}, A: {T}, lda: int, x: {T}, incx: int, "
                f"beta: {s}, y: {T}, incy: int",
                f"cublasOperation_t trans, int m, int n, const {t} *alpha, const {t} *A, "
                f"int lda, const {t} *x, int incx, const {t} *beta, {t} *y, int incy")  # fmt: skip
    if v.kind == "gemv" and v.form == Batch.STRIDED:
        return (f"trans: str, m: int, n: int, alpha: {s}, A: {T}, lda: int, strideA: int, "
                f"x: {T}, incx: int, stridex: int, beta: {s}, y: {T}, incy: int, stridey: int, "
                "batchCount: int",
                f"cublasOperation_t trans, int m, int n, const {t} *alpha, const {t} *A, int lda, "
                f"long long int strideA, const {t} *x, int incx, long long int stridex, "
                f"const {t} *beta, {t} *y, int incy, long long int stridey, int batchCount")  # fmt: skip
    if v.kind == "gemv":
        return (f"trans: str, m: int, n: int, alpha: {s}, A: {T}, Aarray: {T}, lda: int, "
                f"x: {T}, xarray: {T}, incx: int, beta: {s}, y: {T}, yarray: {T}, incy: int, "
                "batchCount: int",
                f"cublasOperation_t trans, {i} m, {i} n, const {t} *alpha, "
                f"const {t} *const Aarray[], {i} lda, const {t} *const xarray[], {i} incx, "
                f"const {t} *beta, {t} *const yarray[], {i} incy, {i} batchCount")  # fmt: skip
    if v.kind == "tbmv":
        return (f"uplo: str, trans: str, diag: str, n: int, k: int, A: {T}, lda: int, x: {T}, "
                "incx: int",
                "cublasFillMode_t uplo, cublasOperation_t trans, cublasDiagType_t diag, int n, "
                f"int k, const {t} *A, int lda, {t} *x, int incx")  # fmt: skip
    kk = ("k: int, ", "int k, ") if v.kind == "sbmv" else ("", "")
    return (f"uplo: str, n: int, {kk[0]}alpha: {s}, A: {T}, lda: int, x: {T}, incx: int, "
            f"beta: {s}, y: {T}, incy: int",
            f"cublasFillMode_t uplo, int n, {kk[1]}const {t} *alpha, const {t} *A, int lda, "
            f"const {t} *x, int incx, const {t} *beta, {t} *y, int incy")  # fmt: skip


_DTYPE = {"S": "float32", "D": "float64", "C": "complex64", "Z": "complex128"}
_WHAT = {
    "gemv": "y <- alpha * op(A) @ x + beta * y",
    "symv": "y <- alpha * A @ x + beta * y with A complex symmetric (not Hermitian)",
    "sbmv": "y <- alpha * A @ x + beta * y with A a symmetric band matrix",
    "tbmv": "x <- op(A) @ x with A a triangular band matrix",
}
_SHAPES = {
    "gemv": (
        "- `trans`: 'N' (op(A) = A), 'T' (A transposed) or 'C' (conjugate transpose; 'T' for "
        "real A).\n- A is m x n (lda >= m). For 'N', x has n elements and y has m; otherwise x "
        "has m and y has n.\n- y is updated in place; nothing is returned."
    ),
    "symv": (
        "- `uplo`: 'U' or 'L': A is n x n (lda >= n) and only its upper (lower) triangle, "
        "diagonal included, is stored and read; the other triangle may hold NaN. A(i, j) = "
        "A(j, i), no conjugation.\n- x and y have n elements; y is updated in place."
    ),
    "sbmv": (
        "- `uplo`: 'U' or 'L'; `k`: the number of super- (sub-)diagonals. A is stored as a "
        "band: for 'U' element (i, j) with max(0, j - k) <= i <= j sits at A[(k + i - j) + j * "
        "lda]; for 'L' element (i, j) with j <= i <= min(n - 1, j + k) sits at A[(i - j) + j * "
        "lda]; lda >= k + 1. The symmetric matrix has A(i, j) = A(j, i); storage elements "
        "outside the band are not read (they may hold NaN).\n- x and y have n elements; y is "
        "updated in place."
    ),
    "tbmv": (
        "- `uplo`: 'U' (upper triangular) or 'L'; `k`: the number of super- (sub-)diagonals; "
        "band storage as in sbmv: for 'U' element (i, j) with max(0, j - k) <= i <= j sits at "
        "A[(k + i - j) + j * lda], for 'L' element (i, j) with j <= i <= min(n - 1, j + k) at "
        "A[(i - j) + j * lda]; lda >= k + 1. Storage outside the band is not read (it may hold "
        "NaN).\n- `trans`: 'N', 'T' or 'C' ('T' for real A).\n- `diag`: 'N' (the diagonal is "
        "stored) or 'U' (unit diagonal: it is not read, may hold NaN, and is taken as 1).\n- x "
        "has n elements and is overwritten with op(A) @ x (the old x is read in full first, as "
        "if copied)."
    ),
}


def _task(name: str, v: Variant) -> str:
    parts = [f"cuBLAS `{name}` (cuBLAS 12): {_WHAT[v.kind]}, {_DTYPE[v.prefix]}.",
             text.STORAGE, text.VECTORS, _SHAPES[v.kind]]  # fmt: skip
    if v.kind != "tbmv":
        parts[-1] += "\n- " + text.scalars(v.prefix)
    if v.form != Batch.SINGLE:
        parts.append(text.batch(v.form, "matrix A and vectors x, y", C_TYPE[v.prefix])
                     + " Every problem shares trans, m, n, lda, the increments and the "
                     "scalars.")  # fmt: skip
    if name.endswith("_64"):
        parts.append("The _64 variant takes 64-bit integer sizes; the semantics are the same.")
    if v.prefix in "CZ":
        parts.append(text.COMPLEX)
    if v.kind != "tbmv":
        parts.append(
            "Products are accumulated in the routine's precision or better. When beta == 0, "
            "y is not read: it may hold NaN, which must not leak into the result. If a "
            "dimension is 0 (or batchCount == 0) nothing is done. A and x must not be "
            "modified; the increments are never 0."
        )
    else:
        parts.append("Products are accumulated in float32 or better. If n == 0 nothing is "
                     "done. A must not be modified; incx is never 0.")  # fmt: skip
    return "\n\n".join(parts)


def _solution(name: str, v: Variant, py: str) -> str:
    if v.kind == "gemv":
        dims = "trans, m if trans == \"N\" else n, n if trans == \"N\" else m"
        tail = {Batch.SINGLE: "",
                Batch.STRIDED: ",\n            batch=batchCount, strides=(strideA, stridex, stridey)",
                Batch.POINTERS: ",\n            batch=batchCount, offsets=(Aarray, xarray, yarray)",
                }[v.form]  # fmt: skip
        call = f"_matvec({dims}, alpha, A, lda, x, incx, beta, y, incy{tail})"
    elif v.kind == "tbmv":
        call = ("_matvec(trans, n, n, 1.0, A, lda, x.clone(), incx, 0.0, x, incx,\n"
                "            storage=TRIANGULAR_BAND, upper=uplo == \"U\", unit=diag == \"U\", kband=k)")  # fmt: skip
    else:
        storage = "SYMMETRIC" if v.kind == "symv" else "SYMMETRIC_BAND"
        band = ", kband=k" if v.kind == "sbmv" else ""
        call = ("_matvec(\"N\", n, n, alpha, A, lda, x, incx, beta, y, incy,\n"
                f"            storage={storage}, upper=uplo == \"U\"{band})")  # fmt: skip
    return text.solution(["matvec"], name, py, call)


def routines() -> list[Routine]:
    # not at the top: engines import this module for its specs and must not hold the cases
    from kgb.cublas_families.matvec_cases import cases

    out = []
    for name, v in ROUTINES.items():
        py, c = _signature(name, v)
        reference = v.kind if v.form == Batch.SINGLE else {
            Batch.STRIDED: "gemv_strided_batched", Batch.POINTERS: "gemv_batched"}[v.form]  # fmt: skip
        out.append(Routine(
            name=name, family="matvec", version=VERSIONS.get(name, VERSION), task=_task(name, v),
            signature=text.stub(name, py, c),
            cases=cases(v),
            reference=reference, solution=_solution(name, v, py),
            inout=("x",) if v.kind == "tbmv" else ("y",),
        ))  # fmt: skip
    return out
