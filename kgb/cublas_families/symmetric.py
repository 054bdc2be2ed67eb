"""The symmetric level-3 families: C <- alpha A B + beta C or alpha B A + beta C with A
symmetric (symm), and C <- alpha op(A) op(A)^T + beta C on one triangle (syrk, syrkEx).
Their solutions are the gemm kernel with a triangle mask, after expanding A for symm."""

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
    stored_shape,
    symmetric,
)
from kgb.cublas_families.routine import Routine
from kgb.operators import Case

VERSION = 1


@dataclass(frozen=True)
class Variant:
    kind: str  # symm syrk syrk_ex
    prefix: str


ROUTINES = {
    "cublasCsymm_v2": Variant("symm", "C"),
    "cublasSsyrk_v2": Variant("syrk", "S"),
    "cublasCsyrkEx": Variant("syrk_ex", "C"),
}
# cudaDataType_t names cublasCsyrkEx takes for A; C is always CUDA_C_32F
EX_TYPES = {"CUDA_C_32F": torch.complex64, "CUDA_C_8I": torch.int8}


# ---------------------------------------------------------------- references


def symm(side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc):
    if m <= 0 or n <= 0:
        return
    w = torch.complex128 if C.is_complex() else torch.float64
    s = symmetric(matrix(A, *((m, m) if side == "L" else (n, n)), lda), uplo).to(w)
    b = matrix(B, m, n, ldb).to(w)
    c = matrix(C, m, n, ldc)
    out = alpha * (s @ b if side == "L" else b @ s)
    # beta == 0: C is not read, so NaN or garbage in it does not propagate
    c.copy_(out if beta == 0 else out + beta * c.to(w))


def _syrk(uplo, trans, n, k, alpha, a, beta, C, ldc):
    """a: op(A) as an n x k matrix in float64 / complex128."""
    c = matrix(C, n, n, ldc)
    out = alpha * (a @ a.transpose(0, 1))  # symmetric: no conjugation
    if beta != 0:
        out = out + beta * c.to(out.dtype)
    written = torch.ones(n, n, dtype=torch.bool, device=c.device)
    written = written.triu() if uplo == "U" else written.tril()
    c.copy_(torch.where(written, out, c.to(out.dtype)))


def syrk(uplo, trans, n, k, alpha, A, lda, beta, C, ldc):
    if n > 0:
        w = torch.complex128 if C.is_complex() else torch.float64
        a = op(matrix(A, *stored_shape(trans, n, k), lda).to(w), "T" if trans != "N" else "N")
        _syrk(uplo, trans, n, k, alpha, a, beta, C, ldc)


def complex_int8(A: torch.Tensor) -> torch.Tensor:
    """An int8 buffer of (real, imaginary) pairs (CUDA_C_8I) as complex128 values."""
    pairs = A.reshape(-1, 2).double()
    return torch.complex(pairs[:, 0], pairs[:, 1])


def syrk_ex(uplo, trans, n, k, alpha, A, Atype, lda, beta, C, Ctype, ldc):
    assert A.dtype == EX_TYPES[Atype] and Ctype == "CUDA_C_32F"
    if n > 0:
        values = complex_int8(A) if Atype == "CUDA_C_8I" else A.to(torch.complex128)
        a = op(matrix(values, *stored_shape(trans, n, k), lda), trans)
        _syrk(uplo, trans, n, k, alpha, a, beta, C, ldc)


# ---------------------------------------------------------------- inputs


def make_inputs(name: str, c: Case, gen: torch.Generator, device: str) -> dict:
    v, p = ROUTINES[name], c.params
    dtype = PREFIX_DTYPE[v.prefix]
    pad = p["pad"]
    if v.kind == "symm":
        m, n = p["m"], p["n"]
        ka = m if p["side"] == "L" else n
        lda, ldb, ldc = ka + pad, m + 2 * pad, m + pad
        A = random(lda * ka, dtype, gen)
        unread = torch.ones(ka, ka, dtype=torch.bool)
        unread = unread.tril(-1) if p["uplo"] == "U" else unread.triu(1)
        matrix(A, ka, ka, lda).masked_fill_(unread, float("nan"))
        C = nans(ldc * n, dtype) if p["beta"] == 0 else random(ldc * n, dtype, gen)
        return dict(side=p["side"], uplo=p["uplo"], m=m, n=n, alpha=p["alpha"],
                    A=A.to(device), lda=lda, B=random(ldb * n, dtype, gen).to(device), ldb=ldb,
                    beta=p["beta"], C=C.to(device), ldc=ldc)  # fmt: skip
    n, k = p["n"], p["k"]
    ra, ca = stored_shape(p["trans"], n, k)
    lda, ldc = max(ra, 1) + pad, n + pad
    if p.get("atype") == "CUDA_C_8I":
        A = torch.randint(-128, 128, (2 * lda * ca,), generator=gen, dtype=torch.int8)
    else:
        A = random(lda * ca, dtype, gen)
    C = random(ldc * n, dtype, gen)
    if p["beta"] == 0:  # the written triangle is not read
        written = torch.ones(n, n, dtype=torch.bool)
        written = written.triu() if p["uplo"] == "U" else written.tril()
        matrix(C, n, n, ldc).masked_fill_(written, float("nan"))
    args = dict(uplo=p["uplo"], trans=p["trans"], n=n, k=k, alpha=p["alpha"], A=A.to(device))
    if v.kind == "syrk_ex":
        args["Atype"] = p["atype"]
    args |= dict(lda=lda, beta=p["beta"], C=C.to(device))
    if v.kind == "syrk_ex":
        args["Ctype"] = "CUDA_C_32F"
    return args | dict(ldc=ldc)


# ---------------------------------------------------------------- text


def _signature(name: str, v: Variant) -> tuple[str, str]:
    s, t, T = PY_SCALAR[v.prefix], C_TYPE[v.prefix], "torch.Tensor"
    if v.kind == "symm":
        return (f"side: str, uplo: str, m: int, n: int, alpha: {s}, A: {T}, lda: int, B: {T}, "
                f"ldb: int, beta: {s}, C: {T}, ldc: int",
                "cublasSideMode_t side, cublasFillMode_t uplo, int m, int n, "
                f"const {t} *alpha, const {t} *A, int lda, const {t} *B, int ldb, "
                f"const {t} *beta, {t} *C, int ldc")  # fmt: skip
    if v.kind == "syrk":
        return (f"uplo: str, trans: str, n: int, k: int, alpha: {s}, A: {T}, lda: int, "
                f"beta: {s}, C: {T}, ldc: int",
                "cublasFillMode_t uplo, cublasOperation_t trans, int n, int k, "
                f"const {t} *alpha, const {t} *A, int lda, const {t} *beta, {t} *C, int ldc")  # fmt: skip
    return (f"uplo: str, trans: str, n: int, k: int, alpha: {s}, A: {T}, Atype: str, lda: int, "
            f"beta: {s}, C: {T}, Ctype: str, ldc: int",
            "cublasFillMode_t uplo, cublasOperation_t trans, int n, int k, "
            f"const {t} *alpha, const void *A, cudaDataType Atype, int lda, const {t} *beta, "
            "void *C, cudaDataType Ctype, int ldc")  # fmt: skip


_SYRK = (
    "- `uplo`: 'U' or 'L': only that triangle of the n x n matrix C (ldc >= n), diagonal "
    "included, is read and written; the other triangle must keep its values.\n"
    "- `trans`: 'N' (op(A) = A, n x k, lda >= n) or 'T' (op(A) = A^T, A is k x n, lda >= k)"
)


def _task(name: str, v: Variant) -> str:
    if v.kind == "symm":
        head = ("C <- alpha * A @ B + beta * C (side 'L') or alpha * B @ A + beta * C (side "
                "'R') with A complex symmetric (not Hermitian), complex64")  # fmt: skip
        shapes = (
            "- `side`: 'L' (A is m x m, lda >= m) or 'R' (A is n x n, lda >= n); "
            "cublasSideMode_t.\n- `uplo`: 'U' or 'L': only that triangle of A, diagonal "
            "included, is stored and read (the other may hold NaN); A(i, j) = A(j, i).\n"
            "- B is m x n (ldb >= m); C is m x n (ldc >= m), updated in place."
        )
    elif v.kind == "syrk":
        head = "C <- alpha * op(A) @ op(A)^T + beta * C on one triangle, float32"
        shapes = _SYRK + "; 'C' is the same as 'T' for real A."
    else:
        head = ("C <- alpha * op(A) @ op(A)^T + beta * C on one triangle, complex, no "
                "conjugation (complex symmetric rank-k update), float32 compute")  # fmt: skip
        shapes = _SYRK + (
            ". 'C' is not supported.\n- `Atype`: 'CUDA_C_32F' (A is a torch.complex64 buffer) "
            "or 'CUDA_C_8I' (A is a torch.int8 buffer of (real, imaginary) pairs: element e "
            "of the complex matrix has real part A[2e] and imaginary part A[2e + 1]; lda "
            "counts complex elements). `Ctype` is 'CUDA_C_32F' (C is torch.complex64).\n"
            "- Products are computed and accumulated in float32 (exact for int8 inputs)."
        )
    parts = [f"cuBLAS `{name}` (cuBLAS 12): {head}.", text.STORAGE, shapes,
             text.scalars(v.prefix)]  # fmt: skip
    if v.prefix in "CZ":
        parts.append(text.COMPLEX)
    parts.append(
        "Products are accumulated in float32 or better (no TF32 or half-precision "
        "tensor-core arithmetic). When beta == 0, C (its referenced triangle for syrk) is "
        "not read: it may hold NaN, which must not leak into the result. When the inner "
        "dimension k is 0 the product term is 0. If a dimension is 0 nothing is done. A "
        "and B must not be modified."
    )
    return "\n\n".join(parts)


def _solution(name: str, v: Variant, py: str) -> str:
    if v.kind == "symm":
        call = (
            "if m <= 0 or n <= 0:\n        return\n"
            "    if side == \"L\":  # the gemm kernel on a full copy of A: an O(m^2) expansion\n"
            "        full = _symmetrized(A, m, lda, uplo)\n"
            "        _gemm(\"N\", \"N\", m, n, m, alpha, full, m, B, ldb, beta, C, ldc)\n"
            "    else:\n"
            "        full = _symmetrized(A, n, lda, uplo)\n"
            "        _gemm(\"N\", \"N\", m, n, n, alpha, B, ldb, full, n, beta, C, ldc)"
        )
        return text.solution(["gemm", "symmetrize"], name, py, call)
    ta, tb = ('"N"', '"T"'), ('"T"', '"N"')
    call = (f"ta, tb = ({ta[0]}, {ta[1]}) if trans == \"N\" else ({tb[0]}, {tb[1]})\n"
            "    _gemm(ta, tb, n, n, k, alpha, A, lda, A, lda, beta, C, ldc, triangle=uplo)")  # fmt: skip
    return text.solution(["gemm"], name, py, call)


def routines() -> list[Routine]:
    # not at the top: engines import this module for its specs and must not hold the cases
    from kgb.cublas_families.symmetric_cases import cases

    out = []
    for name, v in ROUTINES.items():
        py, c = _signature(name, v)
        out.append(Routine(
            name=name, family="symmetric", version=VERSION, task=_task(name, v),
            signature=text.stub(name, py, c), cases=cases(v), reference=v.kind,
            solution=_solution(name, v, py), inout=("C",),
        ))  # fmt: skip
    return out
