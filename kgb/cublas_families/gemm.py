"""The gemm family: C <- alpha op(A) op(B) + beta C, single, strided-batched,
pointer-array batched and Ex (typed buffers, float32 compute)."""

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
    stored_shape,
    wide,
)
from kgb.cublas_families.routine import Routine
from kgb.evaluate.correctness import compare_tensor, rms
from kgb.operators import Case, Tolerance

VERSION = 1


@dataclass(frozen=True)
class Variant:
    prefix: str
    form: Batch
    ex: bool = False


ROUTINES = {
    "cublasCgemm_v2": Variant("C", Batch.SINGLE),
    "cublasSgemmStridedBatched": Variant("S", Batch.STRIDED),
    "cublasDgemmStridedBatched": Variant("D", Batch.STRIDED),
    "cublasCgemmStridedBatched": Variant("C", Batch.STRIDED),
    "cublasZgemmStridedBatched": Variant("Z", Batch.STRIDED),
    "cublasHgemmStridedBatched": Variant("H", Batch.STRIDED),
    "cublasDgemmStridedBatched_64": Variant("D", Batch.STRIDED),
    "cublasCgemmStridedBatched_64": Variant("C", Batch.STRIDED),
    "cublasDgemmBatched": Variant("D", Batch.POINTERS),
    "cublasZgemmBatched": Variant("Z", Batch.POINTERS),
    "cublasHgemmBatched": Variant("H", Batch.POINTERS),
    "cublasSgemmBatched_64": Variant("S", Batch.POINTERS),
    "cublasSgemmEx": Variant("S", Batch.SINGLE, ex=True),
}
# cudaDataType_t names of SgemmEx's buffers, and the torch dtype that holds each
EX_TYPES = {
    "CUDA_R_32F": torch.float32,
    "CUDA_R_16F": torch.float16,
    "CUDA_R_16BF": torch.bfloat16,
    "CUDA_R_8I": torch.int8,
}


# ---------------------------------------------------------------- references


def _one(transa, transb, m, n, k, alpha, A, a0, lda, B, b0, ldb, beta, C, c0, ldc, count=None,
         strides=(0, 0, 0)):  # fmt: skip
    """One problem, computed in float64 / complex128 and rounded once into C; with
    `count`, that many whose A, B and C lie `strides` further on each, as one batched
    product (a Python loop over them took seconds under the fake tensors of
    tests/test_operators.py, where every case's reference runs)."""
    if m <= 0 or n <= 0:
        return
    w = wide(C.dtype) if not A.dtype.is_complex else torch.complex128
    sa, sb, sc = strides
    a = op(matrix(A, *stored_shape(transa, m, k), lda, a0, count, sa).to(w), transa)
    b = op(matrix(B, *stored_shape(transb, k, n), ldb, b0, count, sb).to(w), transb)
    c = matrix(C, m, n, ldc, c0, count, sc)
    out = alpha * (a @ b)
    # beta == 0: C is not read, so NaN or garbage in it does not propagate
    c.copy_(out if beta == 0 else out + beta * c.to(w))


def gemm(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc):
    _one(transa, transb, m, n, k, alpha, A, 0, lda, B, 0, ldb, beta, C, 0, ldc)


def gemm_strided_batched(
    transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC,
    batchCount,
):  # fmt: skip
    # every problem at once (cuBLAS leaves problems whose C overlap undefined)
    if batchCount > 0:
        _one(transa, transb, m, n, k, alpha, A, 0, lda, B, 0, ldb, beta, C, 0, ldc,
             batchCount, (strideA, strideB, strideC))  # fmt: skip


def gemm_batched(
    transa, transb, m, n, k, alpha, A, Aarray, lda, B, Barray, ldb, beta, C, Carray, ldc,
    batchCount,
):  # fmt: skip
    starts = zip(Aarray.tolist(), Barray.tolist(), Carray.tolist(), strict=True)
    for a0, b0, c0 in list(starts)[:batchCount]:
        _one(transa, transb, m, n, k, alpha, A, a0, lda, B, b0, ldb, beta, C, c0, ldc)


def gemm_ex(transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc):
    for buf, name in ((A, Atype), (B, Btype), (C, Ctype)):
        assert buf.dtype == EX_TYPES[name], f"{name} buffer holds {buf.dtype}"
    _one(transa, transb, m, n, k, alpha, A, 0, lda, B, 0, ldb, beta, C, 0, ldc)


# ---------------------------------------------------------------- inputs


def make_inputs(name: str, c: Case, gen: torch.Generator, device: str) -> dict:
    v, p = ROUTINES[name], c.params
    m, n, k, count = p["m"], p["n"], p["k"], p.get("batch", 1)
    ra, ca = stored_shape(p["ta"], m, k)
    rb, cb = stored_shape(p["tb"], k, n)
    pa, pb, pc = p["pad"]
    lda, ldb, ldc = max(ra, 1) + pa, max(rb, 1) + pb, max(m, 1) + pc
    if v.ex:
        a_type, c_type = EX_TYPES[p["atype"]], EX_TYPES[p["ctype"]]
    else:
        a_type = c_type = PREFIX_DTYPE[v.prefix]

    def operand(dtype):
        if dtype == torch.int8:
            return lambda size: torch.randint(-128, 128, (size,), generator=gen, dtype=torch.int8)
        return lambda size: random(size, dtype, gen)

    a = batched(count, lda * ca, v.form, gen, operand(a_type))
    b = batched(count, ldb * cb, v.form, gen, operand(a_type))
    fill_c = (lambda size: nans(size, c_type)) if p["beta"] == 0 else operand(c_type)
    cc = batched(count, ldc * n, v.form, gen, fill_c)
    args = dict(transa=p["ta"], transb=p["tb"], m=m, n=n, k=k, alpha=p["alpha"])
    for key, x, ld, type_name in (("A", a, lda, "atype"), ("B", b, ldb, "atype")):
        args[key] = x.buf.to(device)
        if v.form == Batch.POINTERS:
            args[f"{key}array"] = x.offsets.to(device)
        if v.ex:
            args[f"{key}type"] = p[type_name]
        args[f"ld{key.lower()}"] = ld
        if v.form == Batch.STRIDED:
            args[f"stride{key}"] = x.stride
    args["beta"], args["C"] = p["beta"], cc.buf.to(device)
    if v.form == Batch.POINTERS:
        args["Carray"] = cc.offsets.to(device)
    if v.ex:
        args["Ctype"] = p["ctype"]
    args["ldc"] = ldc
    if v.form == Batch.STRIDED:
        args["strideC"] = cc.stride
    if v.form != Batch.SINGLE:
        args["batchCount"] = count
    return args


# ---------------------------------------------------------------- task text


def _signature(name: str, v: Variant) -> tuple[str, str]:
    """(Python stub, C prototype) of the routine."""
    s, t = PY_SCALAR[v.prefix], C_TYPE[v.prefix]
    integer = "int64_t" if name.endswith("_64") else "int"
    ptr = "torch.Tensor"
    if v.ex:
        py = (f"transa: str, transb: str, m: int, n: int, k: int, alpha: float, A: {ptr}, "
              f"Atype: str, lda: int, B: {ptr}, Btype: str, ldb: int, beta: float, C: {ptr}, "
              "Ctype: str, ldc: int")  # fmt: skip
        c = ("cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, "
             "const float *alpha, const void *A, cudaDataType_t Atype, int lda, const void *B, "
             "cudaDataType_t Btype, int ldb, const float *beta, void *C, cudaDataType_t Ctype, "
             "int ldc")  # fmt: skip
        return py, c
    dims = f"cublasOperation_t transa, cublasOperation_t transb, {integer} m, {integer} n, {integer} k"
    head = f"transa: str, transb: str, m: int, n: int, k: int, alpha: {s}, "
    if v.form == Batch.SINGLE:
        py = head + f"A: {ptr}, lda: int, B: {ptr}, ldb: int, beta: {s}, C: {ptr}, ldc: int"
        c = (f"{dims}, const {t} *alpha, const {t} *A, int lda, const {t} *B, int ldb, "
             f"const {t} *beta, {t} *C, int ldc")  # fmt: skip
    elif v.form == Batch.STRIDED:
        py = head + (f"A: {ptr}, lda: int, strideA: int, B: {ptr}, ldb: int, strideB: int, "
                     f"beta: {s}, C: {ptr}, ldc: int, strideC: int, batchCount: int")  # fmt: skip
        c = (f"{dims}, const {t} *alpha, const {t} *A, {integer} lda, long long int strideA, "
             f"const {t} *B, {integer} ldb, long long int strideB, const {t} *beta, {t} *C, "
             f"{integer} ldc, long long int strideC, {integer} batchCount")  # fmt: skip
    else:
        py = head + (f"A: {ptr}, Aarray: {ptr}, lda: int, B: {ptr}, Barray: {ptr}, ldb: int, "
                     f"beta: {s}, C: {ptr}, Carray: {ptr}, ldc: int, batchCount: int")  # fmt: skip
        c = (f"{dims}, const {t} *alpha, const {t} *const Aarray[], {integer} lda, "
             f"const {t} *const Barray[], {integer} ldb, const {t} *beta, {t} *const Carray[], "
             f"{integer} ldc, {integer} batchCount")  # fmt: skip
    return py, c


def _task(name: str, v: Variant) -> str:
    dtype = {"S": "float32", "D": "float64", "C": "complex64", "Z": "complex128", "H": "float16"}
    if v.ex:
        kind = ("float32 compute on typed buffers: A and B of type Atype (= Btype), C of "
                "type Ctype")  # fmt: skip
    else:
        kind = f"{dtype[v.prefix]}, column-major"
    parts = [f"cuBLAS `{name}` (cuBLAS 12): C <- alpha * op(A) @ op(B) + beta * C, {kind}.",
             text.STORAGE]  # fmt: skip
    parts.append(
        "- `transa`, `transb`: 'N' (op(X) = X), 'T' (X transposed) or 'C' (conjugate "
        "transpose; the same as 'T' for real matrices).\n"
        "- op(A) is m x k: A is m x k (lda >= m) for 'N', k x m (lda >= k) otherwise.\n"
        "- op(B) is k x n: B is k x n (ldb >= k) for 'N', n x k (ldb >= n) otherwise.\n"
        "- C is m x n with ldc >= m, updated in place; nothing is returned.\n- "
        + text.scalars(v.prefix)
    )
    if v.form != Batch.SINGLE:
        parts.append(text.batch(v.form, "matrices A, B and C", C_TYPE[v.prefix])
                     + " Every problem shares transa, transb, m, n, k, the leading dimensions "
                     "and the scalars.")  # fmt: skip
    if name.endswith("_64"):
        parts.append("The _64 variant takes 64-bit integer sizes; the semantics are the same.")
    if v.ex:
        parts.append(
            "Atype, Btype, Ctype are cudaDataType_t names: 'CUDA_R_32F' (torch.float32), "
            "'CUDA_R_16F' (float16), 'CUDA_R_16BF' (bfloat16), 'CUDA_R_8I' (int8). The "
            "supported combinations (A/B, C): 32F/32F, 16F/16F, 16F/32F, 16BF/16BF, "
            "16BF/32F, 8I/32F. Products are computed and accumulated in float32 (exact for "
            "16-bit and int8 inputs; float32 inputs need full float32 products, not TF32), "
            "and the result is rounded to Ctype once."
        )
    elif v.prefix == "H":
        parts.append("Products may be accumulated in float16, as cuBLAS's own kernels do "
                     "(CUBLAS_COMPUTE_16F), or in float32; the comparison admits the rounding "
                     "of a float16 accumulator over k terms.")  # fmt: skip
    else:
        parts.append("Products are accumulated in the routine's precision or better (for "
                     "float32: no TF32 or half-precision tensor-core arithmetic).")  # fmt: skip
    if v.prefix in "CZ":
        parts.append(text.COMPLEX)
    parts.append(
        "Semantics: for every 0 <= i < m, 0 <= j < n,\n"
        "    C(i, j) <- alpha * sum_p op(A)(i, p) * op(B)(p, j) + beta * C(i, j)\n"
        "When beta == 0, C is not read: it may hold NaN, which must not leak into the "
        "result. When k == 0 the product term is 0. If m == 0 or n == 0 (or batchCount == 0) "
        "nothing is done. A and B must not be modified."
    )
    return "\n\n".join(parts)


def _solution(name: str, v: Variant, py: str) -> str:
    if v.form == Batch.SINGLE:
        call = "_gemm(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc)"
    elif v.form == Batch.STRIDED:
        call = ("_gemm(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,\n"
                "          batch=batchCount, strides=(strideA, strideB, strideC))")  # fmt: skip
    else:
        call = ("_gemm(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,\n"
                "          batch=batchCount, offsets=(Aarray, Barray, Carray))")  # fmt: skip
    return text.solution(["gemm"], name, py, call)


# cublasHgemm* compute in float16 (CUBLAS_COMPUTE_16F): on the H200 libcublas's answer
# missed the float32-accumulation tolerance on 15 of 19 cases. A float16 accumulator that
# rounds after every one of k additions needed an atol of up to 1.5e-3 * sqrt(k) * rms(C)
# on this family's cases (emulated on the CPU); 4e-3 leaves a margin, and an all-zero C
# still misses by far.
HALF_ACCUMULATION_ATOL = 4e-3


def compare_half_accumulation(actual, expected, case, inputs):
    e = expected["C"]
    tol = Tolerance(rtol=1e-3, atol=HALF_ACCUMULATION_ATOL * max(case.reduction, 1) ** 0.5 * rms(e))
    message, _, _ = compare_tensor("argument C", actual.get("C"), e, case.reduction, tol)
    if message is None and actual.get("return") is not None:
        return "return value: expected None"
    return message


def routines() -> list[Routine]:
    # not at the top: engines import this module for its specs and must not hold the cases
    from kgb.cublas_families.gemm_cases import cases

    out = []
    for name, v in ROUTINES.items():
        py, c = _signature(name, v)
        reference = {Batch.SINGLE: "gemm", Batch.STRIDED: "gemm_strided_batched",
                     Batch.POINTERS: "gemm_batched"}[v.form]  # fmt: skip
        stub = (f'def {name}({py}) -> None:\n'
                f'    """cublasStatus_t {name}(cublasHandle_t handle, {c})  -- without the handle"""')  # fmt: skip
        out.append(
            Routine(
                name=name,
                family="gemm",
                version=VERSION,
                task=_task(name, v),
                signature=stub,
                cases=cases(v),
                reference="gemm_ex" if v.ex else reference,
                solution=_solution(name, v, py),
                inout=("C",),
                compare="compare_half_accumulation" if v.prefix == "H" else None,
            )
        )
    return out
