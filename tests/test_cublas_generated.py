"""The generated cuBLAS operators: the files match their families, every routine has a
libcublas binding that agrees with its signature, and the families' references agree with
values computed by hand on tiny inputs."""

from __future__ import annotations

import ctypes
import re
from pathlib import Path

import pytest
import torch

from kgb import cublas, operators
from kgb.cublas_families import gemm, matrix, matvec, symmetric, triangular, vector
from kgb.cublas_families.generate import files, routines, stale
from kgb.cublas_families.layout import Batch, batched, set_vector
from kgb.cublas_families.matvec import band_to_dense
from kgb.evaluate.correctness import compare_tensor

NAN = float("nan")
OPERATORS_MD = Path(__file__).resolve().parent.parent / "docs" / "operators.md"


def col(*columns) -> torch.Tensor:
    """A column-major buffer from a matrix's columns."""
    return torch.tensor([x for c in columns for x in c], dtype=torch.float64)


# ---------------------------------------------------------------- generator


def test_regenerating_changes_nothing():
    assert stale() == [], "run `python -m kgb.cublas_families` and commit the result"


def test_generated_files_name_their_family_and_load():
    for path, text in files().items():
        family = re.search(r"from kgb/cublas_families/(\w+)\.py", text)
        assert family and (Path(__file__).parent.parent / "kgb/cublas_families" / f"{family[1]}.py").exists()
        if path.name == "solution.py":
            imports = [line for line in text.splitlines() if line.startswith(("import ", "from "))]
            assert not [line for line in imports if "kgb" in line], f"{path} imports kgb"
    for r in routines():
        spec = operators.load(f"cublas::{r.name}")
        assert list(spec.signatures) == [r.name]
        assert {c.tag for c in spec.cases} >= {"smoke", "check", "bench"}


def test_all_fifty_routines_exist():
    section = OPERATORS_MD.read_text().split("\n## cuBLAS")[1].split("\n## ")[0]
    listed = set(re.findall(r"cublas[A-Z]\w+", section))
    assert len(listed) == 50
    present = {op.removeprefix("cublas::") for op in operators.discover() if op.startswith("cublas::")}
    assert present == listed


@pytest.mark.parametrize("routine", sorted(cublas.SIGNATURES))
def test_binding_agrees_with_the_spec_signature(routine):
    """One C parameter per Python parameter, except a pointer array, which is two."""
    spec = operators.load(f"cublas::{routine}")
    kinds = cublas.SIGNATURES[routine].split()
    params = spec.signatures[routine].positional
    assert len(params) == len(kinds) + kinds.count("ptrs")
    i = 0
    for kind in kinds:
        name = params[i]
        if kind == "ptrs":
            assert params[i + 1] == f"{name}array", f"{routine}: {name} then its offsets"
        expected = {"op": "trans", "fill": "uplo", "diag": "diag", "dtype": "type"}.get(kind)
        if expected:
            assert expected in name, f"{routine}: {name} is a {kind}"
        i += 2 if kind == "ptrs" else 1


def test_every_cublas_operator_has_a_binding():
    present = {op.removeprefix("cublas::") for op in operators.discover() if op.startswith("cublas::")}
    assert present == set(cublas.SIGNATURES)


# ---------------------------------------------------------------- ctypes bindings


def test_arguments_convert_by_the_c_signature():
    A = torch.zeros(8, dtype=torch.float16)
    offsets = torch.tensor([4, 0])
    args = cublas._Arguments("cublasHgemmBatched", device_scalars=False)
    out = args.convert(("T", "N", 2, 3, 4, 0.5, A, offsets, 2, A, offsets, 4, 0.0, A, offsets, 2, 2))
    assert [o.value for o in out[:5]] == [1, 0, 2, 3, 4]
    assert isinstance(out[2], ctypes.c_int)
    half = ctypes.c_uint16.from_address(out[5].value)
    assert half.value == 0x3800  # 0.5 as __half
    pointers = args.arrays[(A.data_ptr(), offsets.data_ptr())]
    assert pointers.tolist() == [A.data_ptr() + 8, A.data_ptr()]
    wide = cublas._Arguments("cublasSgemmBatched_64", device_scalars=False)
    assert wide.argtypes[3] is ctypes.c_int64
    ex = cublas._Arguments("cublasSgemmEx", device_scalars=False)
    C = torch.zeros(4)
    out = ex.convert(("N", "C", 1, 1, 1, 1.0, C, "CUDA_R_16BF", 1, C, "CUDA_R_8I", 1, 0.0, C, "CUDA_R_32F", 1))
    assert (out[1].value, out[7].value, out[10].value, out[14].value) == (2, 14, 3, 0)
    trsm = cublas._Arguments("cublasStrsm_v2", device_scalars=False)
    out = trsm.convert(("R", "U", "C", "U", 1, 1, 1.0, C, 1, C, 1))
    assert [o.value for o in out[:4]] == [1, 1, 2, 1]


def test_wrong_argument_counts_and_unknown_routines_are_refused():
    with pytest.raises(TypeError, match="takes 6 arguments"):
        cublas._Arguments("cublasSaxpy_v2", False).convert((1, 1.0))
    with pytest.raises(cublas.CublasError, match="no binding"):
        cublas._Arguments("cublasSfoo", False)


def test_a_routine_the_library_lacks_is_reported():
    class Library:
        _name = "libcublas.so.fake"

    with pytest.raises(cublas.CublasError, match="libcublas.so.fake.*has no cublasDgemmBatched"):
        cublas._routine(Library(), "cublasDgemmBatched", [])


# ---------------------------------------------------------------- references by hand


def test_gemm_column_major_transposes_and_nan_c():
    A = col([1, 2, 0], [3, 4, 0])  # 2 x 2, lda 3: [[1, 3], [2, 4]]
    B = col([5, 6], [7, 8])  # [[5, 7], [6, 8]]
    C = torch.tensor([NAN, NAN, -1.0, NAN, NAN, -1.0])  # ldc 3, padding -1
    gemm.gemm("T", "N", 2, 2, 2, 2.0, A, 3, B, 2, 0.0, C, 3)
    # A^T B = [[1*5+2*6, 1*7+2*8], [3*5+4*6, 3*7+4*8]] = [[17, 23], [39, 53]]
    assert C.tolist() == [34, 78, -1, 46, 106, -1]
    C = col([1, 1], [1, 1])
    gemm.gemm("N", "T", 2, 2, 2, 1.0, A, 3, B, 2, 0.5, C, 2)
    # A B^T = [[1*5+3*7, 1*6+3*8], [2*5+4*7, 2*6+4*8]] = [[26, 30], [38, 44]]
    assert C.tolist() == [26.5, 38.5, 30.5, 44.5]


def test_gemm_conjugate_transpose_and_complex_scalars():
    A = torch.tensor([1 + 2j], dtype=torch.complex128)
    B = torch.tensor([3 - 1j], dtype=torch.complex128)
    C = torch.tensor([1j], dtype=torch.complex128)
    gemm.gemm("C", "N", 1, 1, 1, 1j, A, 1, B, 1, 2.0, C, 1)
    # conj(1+2i)(3-i) = (1-2i)(3-i) = 1 - 7i; times i = 7 + i; plus 2 * i
    assert C.item() == 7 + 3j


def test_gemm_batched_reads_each_problem_at_its_offset():
    A = torch.tensor([0.0, 2.0, 3.0])
    B = torch.tensor([5.0, 7.0])
    C = torch.tensor([NAN, NAN, 9.0])
    gemm.gemm_batched("N", "N", 1, 1, 1, 1.0, A, torch.tensor([2, 1]), 1, B, torch.tensor([0, 1]), 1,
                      0.0, C, torch.tensor([1, 0]), 1, 2)
    assert C.tolist() == [14.0, 15.0, 9.0]  # problem 0: 3 * 5 into C[1]; problem 1: 2 * 7 into C[0]


def test_gemv_negative_increments():
    A = col([1, 2], [3, 4])  # [[1, 3], [2, 4]]
    x = torch.tensor([10.0, 99.0, 20.0])  # incx -2: logical x = (20, 10)
    y = torch.tensor([NAN, 7.0, NAN])  # incy 2, beta 0: y not read
    matvec.gemv("N", 2, 2, 1.0, A, 2, x, -2, 0.0, y, 2)
    assert y.tolist() == [1 * 20 + 3 * 10, 7.0, 2 * 20 + 4 * 10]
    y = torch.tensor([1.0, 1.0])
    matvec.gemv("T", 2, 2, 2.0, A, 2, torch.tensor([1.0, 1.0]), 1, -1.0, y, -1)
    assert y.tolist() == [2 * 7 - 1, 2 * 3 - 1]  # y reversed: y[1] is element 0 = (1+2)


def test_band_storage():
    # 3 x 3 upper band with k = 1: [[a, b, 0], [0, c, d], [0, 0, e]], stored as rows (k+i-j)
    A = col([NAN, 1.0], [2.0, 3.0], [4.0, 5.0])  # lda 2: column j holds (A(j-1, j), A(j, j))
    dense = band_to_dense(A, 3, 1, 2, "U")
    assert dense.tolist() == [[1, 2, 0], [0, 3, 4], [0, 0, 5]]
    lower = band_to_dense(col([1.0, 2.0], [3.0, 4.0], [5.0, NAN]), 3, 1, 2, "L")
    assert lower.tolist() == [[1, 0, 0], [2, 3, 0], [0, 4, 5]]


def test_tbmv_unit_diagonal_and_sbmv():
    A = col([NAN, NAN], [2.0, NAN], [4.0, NAN])  # upper, k = 1, unit: [[1, 2, 0], [0, 1, 4], [0, 0, 1]]
    x = torch.tensor([1.0, 1.0, 1.0])
    matvec.tbmv("U", "T", "U", 3, 1, A, 2, x, 1)  # A^T x
    assert x.tolist() == [1, 3, 5]
    S = col([NAN, 1.0], [2.0, 3.0])  # symmetric [[1, 2], [2, 3]]
    y = torch.tensor([1.0, 1.0])
    matvec.sbmv("U", 2, 1, 1.0, S, 2, torch.tensor([1.0, 2.0]), 1, 1.0, y, 1)
    assert y.tolist() == [6, 9]


def test_symv_reads_one_triangle_without_conjugating():
    A = torch.tensor([1j, 2.0, NAN, 3.0], dtype=torch.complex128)  # lower: [[i, 2], [2, 3]]
    y = torch.zeros(2, dtype=torch.complex128)
    matvec.symv("L", 2, 1.0, A, 2, torch.tensor([1.0, 1j], dtype=torch.complex128), 1, 0.0, y, 1)
    assert y.tolist() == [1j + 2j, 2 + 3j]


def test_dot_conjugation_and_asum():
    x = torch.tensor([1 + 1j, 2.0], dtype=torch.complex128)
    y = torch.tensor([1j, 1.0], dtype=torch.complex128)
    r = torch.empty(1, dtype=torch.complex128)
    vector.dotu(2, x, 1, y, 1, r)
    assert r.item() == (1 + 1j) * 1j + 2
    vector.dotc(2, x, 1, y, -1, r)  # y reversed: (1, i)
    assert r.item() == (1 - 1j) * 1 + 2 * 1j
    s = torch.empty(1, dtype=torch.float64)
    vector.asum(3, torch.tensor([-1.0, 9.0, 2.0, 9.0, -3.0]), 2, s)
    assert s.item() == 6.0


def test_swap_scal_copy_axpy():
    x, y = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 0.0, 4.0])
    vector.swap(2, x, 1, y, -2)
    assert x.tolist() == [4, 3] and y.tolist() == [2, 0, 1]
    vector.scal(2, -2.0, x, 1)
    vector.axpy(2, 0.5, x, -1, y, 2)
    assert x.tolist() == [-8, -6] and y.tolist() == [2 - 3, 0, 1 - 4]
    vector.copy(2, x, 1, y, 2)
    assert y.tolist() == [-8, 0, -6]


def test_rank_updates():
    A = torch.zeros(4, dtype=torch.complex128)
    matrix.gerc(2, 2, 1.0, torch.tensor([1, 1j], dtype=torch.complex128), 1,
                torch.tensor([1j, 2], dtype=torch.complex128), 1, A, 2)
    assert A.tolist() == [-1j, 1, 2, 2j]  # x y^H = [[-i, 2], [1, 2i]] column-major
    S = torch.tensor([0.0, 7.0, 0.0, 0.0])  # A(1, 0) = 7 is outside 'U' and stays
    matrix.syr2("U", 2, 1.0, torch.tensor([1.0, 2.0]), 1, torch.tensor([3.0, 4.0]), 1, S, 2)
    assert S.tolist() == [6, 7, 10, 16]


def test_geam_and_dgmm():
    A, B = col([1, 2], [3, 4]), col([10, 20], [30, 40])
    C = torch.full((4,), NAN)
    matrix.geam("T", "N", 2, 2, 1.0, A, 2, -1.0, B, 2, C, 2)
    assert C.tolist() == [1 - 10, 3 - 20, 2 - 30, 4 - 40]
    matrix.dgmm("L", 2, 2, A, 2, torch.tensor([2.0, 3.0]), -1, C, 2)  # x reversed: diag(3, 2)
    assert C.tolist() == [3, 4, 9, 8]


def test_symm_and_syrk_triangle():
    A = col([2, NAN], [1, 3])  # upper: [[2, 1], [1, 3]]
    C = torch.zeros(2)
    symmetric.symm("R", "U", 1, 2, 1.0, A, 2, torch.tensor([1.0, 1.0]), 1, 0.0, C, 1)
    assert C.tolist() == [3, 4]
    C = torch.tensor([NAN, 5.0, NAN, NAN])  # 'U', beta 0: C(1, 0) = 5 stays
    symmetric.syrk("U", "T", 2, 2, 1.0, col([1, 2], [3, 4]), 2, 0.0, C, 2)
    # A^T A with A = [[1, 3], [2, 4]]: [[5, 11], [11, 25]]
    assert C.tolist() == [5, 5, 11, 25]
    C = torch.zeros(1, dtype=torch.complex64)
    symmetric.syrk_ex("L", "N", 1, 1, 1.0, torch.tensor([1, 2], dtype=torch.int8), "CUDA_C_8I", 1,
                      0.0, C, "CUDA_C_32F", 1)
    assert C.item() == (1 + 2j) ** 2  # no conjugation


def test_triangular_solves():
    A = col([2, 1], [NAN, 4])  # lower [[2, 0], [1, 4]]
    x = torch.tensor([4.0, 9.0])
    triangular.trsv("L", "N", "N", 2, A, 2, x, 1)
    assert x.tolist() == [2, 7 / 4]
    x = torch.tensor([4.0, 9.0])
    triangular.trsv("L", "T", "U", 2, A, 2, x, -1)  # [[1, 1], [0, 1]] z = (9, 4)
    assert x.tolist() == [4, 5]  # z = (5, 4), stored reversed
    B = torch.tensor([2.0, 8.0])  # 1 x 2, X A = alpha B with A lower
    triangular.trsm("R", "L", "N", "N", 1, 2, 0.5, A, 2, B, 1)
    # X [[2, 0], [1, 4]] = (1, 4): x1 = 1, 2 x0 + x1 = 1 -> x0 = 0
    assert B.tolist() == [0, 1]


def test_pointer_array_layout_is_shuffled_with_gaps_and_aligned():
    gen = torch.Generator().manual_seed(0)
    b = batched(5, 4, Batch.POINTERS, gen, lambda size: torch.zeros(size))
    starts = b.offsets.tolist()
    # slots of 4 + a gap of 3, rounded up to the 8-element alignment libcublas needs
    assert sorted(starts) == [8 + 8 * i for i in range(5)]
    assert starts != sorted(starts)  # shuffled (this seed's permutation is not the identity)
    assert b.buf.numel() == 8 + 8 * 5
    wide = batched(3, 9, Batch.POINTERS, gen, lambda size: torch.zeros(size))
    assert sorted(wide.offsets.tolist()) == [8, 24, 40]  # 9 + 3 rounds up to 16
    strided = batched(3, 4, Batch.STRIDED, gen, lambda size: torch.zeros(size))
    assert strided.stride == 7 and strided.starts == [0, 7, 14]


def test_set_vector_negative_increment():
    buf = torch.zeros(5)
    set_vector(buf, 3, -2, torch.tensor([1.0, 2.0, 3.0]))
    assert buf.tolist() == [3, 0, 2, 0, 1]


# ---------------------------------------------------------------- device placement


def _on_meta(value):
    """A case's inputs moved off the CPU; pointer-array offsets (int64) stay readable, as
    the references read them as host lists."""
    if isinstance(value, torch.Tensor):
        return value if value.dtype == torch.int64 else value.to("meta")
    return value


def test_every_reference_keeps_its_work_on_the_inputs_device():
    # A helper tensor made without device= lands on the CPU: invisible on a CPU run, a
    # "spec bug" verdict for every candidate on a GPU (seen on the H200 for 12 routines).
    # The meta device makes the same mismatch fail here.
    from kgb.evaluate.draws import draw_inputs

    misplaced = []
    for op in operators.select("cublas"):
        spec = operators.load(op)
        for case in spec.cases_for({operators.CaseTag.SMOKE}):
            entry = spec.entry_of(case)
            inputs = {k: _on_meta(v) for k, v in draw_inputs(spec, case, case.seed, "cpu").items()}
            args, kwargs = entry.bind(inputs)
            try:
                spec.reference_for(entry.name)(*args, **kwargs)
            except RuntimeError as exc:
                misplaced.append(f"{op} {case.name}: {exc}")
    assert misplaced == []


def test_half_gemm_admits_a_float16_accumulator_and_rejects_zeros():
    # libcublas's Hgemm accumulates in float16; a candidate doing the same must pass.
    gen = torch.Generator().manual_seed(0)
    m, n, k = 64, 48, 1000
    a = torch.randn(m, k, generator=gen).half()
    b = torch.randn(k, n, generator=gen).half()
    exact = (a.double() @ b.double()).half()
    acc = torch.zeros(m, n, dtype=torch.float16)
    for p in range(k):  # rounds after every addition: worse than a tensor-core chunked sum
        acc = (acc.float() + a[:, p : p + 1].float() * b[p : p + 1, :].float()).half()
    case = operators.Case("t", "check", {}, seed=0, reduction=k)
    compare = gemm.compare_half_accumulation
    assert compare({"return": None, "C": acc.flatten()}, {"C": exact.flatten()}, case, {}) is None
    assert compare({"return": None, "C": torch.zeros_like(exact).flatten()}, {"C": exact.flatten()}, case, {})
    # the float32-accumulation tolerance would have turned the float16 accumulator away
    assert compare_tensor("C", acc.flatten(), exact.flatten(), k)[0] is not None
