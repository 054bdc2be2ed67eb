"""The elementwise matrix families: rank updates A <- alpha x y^T + A (ger, geru, gerc),
A <- alpha (x y^T + y x^T) + A on one triangle (syr2), C <- alpha op(A) + beta op(B)
(geam) and C <- A diag(x) or diag(x) A (dgmm)."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from kgb.cublas_families import text
from kgb.cublas_families.layout import (
    C_TYPE,
    PREFIX_DTYPE,
    PY_SCALAR,
    matrix,
    nans,
    op,
    random,
    span,
    stored_shape,
    vector,
)
from kgb.cublas_families.routine import Routine
from kgb.operators import Case

VERSION = 1


@dataclass(frozen=True)
class Variant:
    kind: str  # ger geru gerc syr2 geam dgmm
    prefix: str


ROUTINES = {
    "cublasSger_v2": Variant("ger", "S"),
    "cublasCgeru_v2": Variant("geru", "C"),
    "cublasZgerc_v2": Variant("gerc", "Z"),
    "cublasDsyr2_v2": Variant("syr2", "D"),
    "cublasSgeam": Variant("geam", "S"),
    "cublasSdgmm": Variant("dgmm", "S"),
}


# ---------------------------------------------------------------- references


def _rank1(m, n, alpha, x, incx, y, incy, A, lda, conj: bool):
    if m <= 0 or n <= 0:
        return
    a = matrix(A, m, n, lda)
    xs = vector(x, m, incx).to(torch.complex128 if A.is_complex() else torch.float64)
    ys = vector(y, n, incy).to(xs.dtype)
    a.copy_(alpha * torch.outer(xs, ys.conj() if conj else ys) + a.to(xs.dtype))


def ger(m, n, alpha, x, incx, y, incy, A, lda):
    _rank1(m, n, alpha, x, incx, y, incy, A, lda, conj=False)


def gerc(m, n, alpha, x, incx, y, incy, A, lda):
    _rank1(m, n, alpha, x, incx, y, incy, A, lda, conj=True)


def syr2(uplo, n, alpha, x, incx, y, incy, A, lda):
    if n <= 0:
        return
    a = matrix(A, n, n, lda)
    xs, ys = vector(x, n, incx).double(), vector(y, n, incy).double()
    updated = alpha * (torch.outer(xs, ys) + torch.outer(ys, xs)) + a.double()
    keep = torch.ones(n, n, dtype=torch.bool, device=a.device)
    keep = keep.tril(-1) if uplo == "U" else keep.triu(1)  # the triangle not referenced
    a.copy_(torch.where(keep, a.double(), updated))


def geam(transa, transb, m, n, alpha, A, lda, beta, B, ldb, C, ldc):
    if m <= 0 or n <= 0:
        return
    out = torch.zeros(m, n, dtype=torch.float64, device=C.device)
    # a scalar of 0 means its matrix is not read
    if alpha != 0:
        out += alpha * op(matrix(A, *stored_shape(transa, m, n), lda).double(), transa)
    if beta != 0:
        out += beta * op(matrix(B, *stored_shape(transb, m, n), ldb).double(), transb)
    matrix(C, m, n, ldc).copy_(out)


def dgmm(mode, m, n, A, lda, x, incx, C, ldc):
    if m <= 0 or n <= 0:
        return
    a = matrix(A, m, n, lda).double()
    d = vector(x, m if mode == "L" else n, incx).double()
    matrix(C, m, n, ldc).copy_(d[:, None] * a if mode == "L" else a * d[None, :])


# ---------------------------------------------------------------- inputs


def make_inputs(name: str, c: Case, gen: torch.Generator, device: str) -> dict:
    v, p = ROUTINES[name], c.params
    dtype = PREFIX_DTYPE[v.prefix]
    m, n = p["m"], p["n"]

    def rand(count):
        return random(count, dtype, gen).to(device)

    if v.kind == "geam":
        ra, ca = stored_shape(p["ta"], m, n)
        rb, cb = stored_shape(p["tb"], m, n)
        lda, ldb, ldc = ra + p["pad"], rb + 2 * p["pad"], m + p["pad"]
        return dict(transa=p["ta"], transb=p["tb"], m=m, n=n, alpha=p["alpha"],
                    A=rand(lda * ca), lda=lda, beta=p["beta"], B=rand(ldb * cb), ldb=ldb,
                    C=nans(ldc * n, dtype).to(device), ldc=ldc)  # fmt: skip
    if v.kind == "dgmm":
        lda, ldc = m + p["pad"], m + 2 * p["pad"]
        count = m if p["mode"] == "L" else n
        return dict(mode=p["mode"], m=m, n=n, A=rand(lda * n), lda=lda, x=rand(span(count, p["incx"])),
                    incx=p["incx"], C=nans(ldc * n, dtype).to(device), ldc=ldc)  # fmt: skip
    lda = m + p["pad"]
    args = dict(uplo=p["uplo"]) if v.kind == "syr2" else dict(m=m)
    args |= dict(n=n, alpha=p["alpha"], x=rand(span(m, p["incx"])), incx=p["incx"],
                 y=rand(span(n, p["incy"])), incy=p["incy"], A=rand(lda * n), lda=lda)  # fmt: skip
    return args


# ---------------------------------------------------------------- text


def _signature(name: str, v: Variant) -> tuple[str, str]:
    s, t, T = PY_SCALAR[v.prefix], C_TYPE[v.prefix], "torch.Tensor"
    if v.kind == "geam":
        return (f"transa: str, transb: str, m: int, n: int, alpha: {s}, A: {T}, lda: int, "
                f"beta: {s}, B: {T}, ldb: int, C: {T}, ldc: int",
                "cublasOperation_t transa, cublasOperation_t transb, int m, int n, "
                f"const {t} *alpha, const {t} *A, int lda, const {t} *beta, const {t} *B, "
                f"int ldb, {t} *C, int ldc")  # fmt: skip
    if v.kind == "dgmm":
        return (f"mode: str, m: int, n: int, A: {T}, lda: int, x: {T}, incx: int, C: {T}, "
                "ldc: int",
                f"cublasSideMode_t mode, int m, int n, const {t} *A, int lda, const {t} *x, "
                f"int incx, {t} *C, int ldc")  # fmt: skip
    head = ("uplo: str, n: int", "cublasFillMode_t uplo, int n") if v.kind == "syr2" else (
        "m: int, n: int", "int m, int n")  # fmt: skip
    return (f"{head[0]}, alpha: {s}, x: {T}, incx: int, y: {T}, incy: int, A: {T}, lda: int",
            f"{head[1]}, const {t} *alpha, const {t} *x, int incx, const {t} *y, int incy, "
            f"{t} *A, int lda")  # fmt: skip


_WHAT = {
    "ger": "A <- alpha * x @ y^T + A (rank-1 update)",
    "geru": "A <- alpha * x @ y^T + A (rank-1 update, y not conjugated)",
    "gerc": "A <- alpha * x @ y^H + A (rank-1 update with y conjugated)",
    "syr2": "A <- alpha * (x @ y^T + y @ x^T) + A on one triangle of a symmetric matrix",
    "geam": "C <- alpha * op(A) + beta * op(B)",
    "dgmm": "C <- A @ diag(x) (mode 'R') or diag(x) @ A (mode 'L')",
}
_SHAPES = {
    "ger": "A is m x n (lda >= m), updated in place; x has m elements, y has n.",
    "syr2": (
        "- `uplo`: 'U' or 'L': only the upper (lower) triangle of the n x n matrix A "
        "(lda >= n), diagonal included, is read and updated; the other triangle must keep "
        "its values.\n- x and y have n elements."
    ),
    "geam": (
        "- `transa`, `transb`: 'N', 'T' or 'C' ('T' for real matrices); op(A) and op(B) are "
        "m x n, so A is m x n (lda >= m) for 'N' and n x m (lda >= n) otherwise, the same "
        "for B.\n- C is m x n (ldc >= m), written; it holds NaN before the call (only its "
        "m x n elements are written; padding rows keep their values).\n- A scalar of 0 means "
        "its matrix is not read. A, B and C do not overlap in the cases."
    ),
    "dgmm": (
        "- `mode`: 'R' (C = A @ diag(x), x has n elements) or 'L' (C = diag(x) @ A, x has m "
        "elements); cublasSideMode_t.\n- A is m x n (lda >= m); C is m x n (ldc >= m), "
        "written; it holds NaN before the call and its padding rows keep their values.\n- "
        "x is strided with incx, which may be negative (never 0 in the cases)."
    ),
}


def _task(name: str, v: Variant) -> str:
    dtype = {"S": "float32", "D": "float64", "C": "complex64", "Z": "complex128"}[v.prefix]
    shapes = _SHAPES.get(v.kind, _SHAPES["ger"])
    parts = [f"cuBLAS `{name}` (cuBLAS 12): {_WHAT[v.kind]}, {dtype}.", text.STORAGE]
    if v.kind != "geam":
        parts.append(text.VECTORS)
    parts.append(shapes)
    if v.kind != "dgmm":
        parts.append(text.scalars(v.prefix, "alpha" if v.kind != "geam" else "alpha, beta"))
    if v.prefix in "CZ":
        parts.append(text.COMPLEX)
    parts.append("Compute in the routine's precision or better. If a dimension is 0 nothing "
                 "is done. Inputs other than the written matrix must not be modified.")  # fmt: skip
    return "\n\n".join(parts)


def _solution(name: str, v: Variant, py: str) -> str:
    call = {
        "ger": "_matrix(GER, m, n, A, lda, x=x, incx=incx, y=y, incy=incy, alpha=alpha)",
        "geru": "_matrix(GER, m, n, A, lda, x=x, incx=incx, y=y, incy=incy, alpha=alpha)",
        "gerc": ("_matrix(GER, m, n, A, lda, x=x, incx=incx, y=y, incy=incy, alpha=alpha, "
                 "conj=True)"),  # fmt: skip
        "syr2": ("_matrix(SYR2, n, n, A, lda, x=x, incx=incx, y=y, incy=incy, alpha=alpha,\n"
                 "            upper=uplo == \"U\")"),  # fmt: skip
        "geam": ("_matrix(GEAM, m, n, C, ldc, A=A, B=B, alpha=alpha, beta=beta,\n"
                 "            a_strides=(1, lda) if transa == \"N\" else (lda, 1),\n"
                 "            b_strides=(1, ldb) if transb == \"N\" else (ldb, 1))"),  # fmt: skip
        "dgmm": ("_matrix(DGMM_LEFT if mode == \"L\" else DGMM_RIGHT, m, n, C, ldc, A=A,\n"
                 "            a_strides=(1, lda), x=x, incx=incx)"),  # fmt: skip
    }[v.kind]
    return text.solution(["matrix"], name, py, call)


def routines() -> list[Routine]:
    # not at the top: engines import this module for its specs and must not hold the cases
    from kgb.cublas_families.matrix_cases import cases

    out = []
    for name, v in ROUTINES.items():
        py, c = _signature(name, v)
        reference = {"geru": "ger"}.get(v.kind, v.kind)
        out.append(Routine(
            name=name, family="matrix", version=VERSION, task=_task(name, v),
            signature=text.stub(name, py, c), cases=cases(v), reference=reference,
            solution=_solution(name, v, py),
            inout=("C",) if v.kind in ("geam", "dgmm") else ("A",),
        ))  # fmt: skip
    return out
