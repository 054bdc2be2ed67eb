"""Task-text paragraphs that every cuBLAS family states the same way."""

from __future__ import annotations

from pathlib import Path

from kgb.cublas_families.layout import C_TYPE, PY_SCALAR, Batch

STORAGE = """\
The routine without its handle. Tensors stand for device pointers: 1-D contiguous
buffers that the routine reads and writes exactly as cuBLAS would through the raw
pointers. Matrices are column-major with a leading dimension: element (i, j) of a matrix
X with leading dimension ldx is X[i + j * ldx], and rows i >= the matrix's row count
(when ld exceeds it) are padding that must keep its values."""

VECTORS = """\
Vectors are strided: with increment inc, element i of an n-vector is x[i * inc] for
inc > 0 and x[(n - 1 - i) * |inc|] for inc < 0 (a negative increment walks the vector
backwards from the end of its buffer, which holds at least 1 + (n - 1) * |inc| elements).
Buffer elements that are not among the n must keep their values."""

COMPLEX = """\
Complex buffers are torch.complex64 (cuComplex) or torch.complex128 (cuDoubleComplex);
a Triton kernel can read one through a real view, `t.view(torch.float32)` (or float64),
which interleaves real and imaginary parts."""


def scalars(prefix: str, names: str = "alpha, beta") -> str:
    """How the host scalars arrive."""
    return (
        f"`{names}`: Python {PY_SCALAR[prefix]} values, host scalars of type {C_TYPE[prefix]} "
        "(CUBLAS_POINTER_MODE_HOST)."
    )


def batch(form: Batch, what: str, elem: str) -> str:
    """How a batched routine's problems are laid out."""
    if form == Batch.STRIDED:
        return (
            f"Strided batch: problem b (0 <= b < batchCount) uses the {what} that start "
            "stride elements after problem b - 1's (strideA, strideB, ... are element "
            "counts, possibly larger than one matrix)."
        )
    if form == Batch.POINTERS:
        return (
            "Pointer-array batch. cuBLAS takes a device array of batchCount device pointers "
            "per operand; here each such parameter is two: the buffer that holds every "
            f"problem's data (`A`) and an int64 tensor on the device (`Aarray`) whose entry b "
            f"is the element offset of problem b's data in that buffer, i.e. "
            f"(pointer_b - A) / sizeof({elem}). Problems sit at arbitrary places (shuffled, "
            "with gaps); read-only operands of different problems may coincide, written "
            "ones never overlap. The offset tensors must not be modified."
        )
    return ""


def stub(name: str, py_args: str, c_args: str) -> str:
    """The SIGNATURES stub of a routine: its Python signature, the C prototype below."""
    return (
        f"def {name}({py_args}) -> None:\n"
        f'    """cublasStatus_t {name}(cublasHandle_t handle, {c_args})  -- without the handle"""'
    )


def params(py_args: str) -> str:
    """The parameter names of a Python argument list, for a solution's def line."""
    return ", ".join(a.split(":")[0].strip() for a in py_args.split(","))


KERNELS = Path(__file__).parent / "kernels"
IMPORTS = "import torch\nimport triton\nimport triton.language as tl\n"


def _body(name: str) -> str:
    """A kernels/ file without its docstring and imports."""
    source = (KERNELS / f"{name}.py").read_text().split('"""', 2)[2]
    lines = source.splitlines()
    while lines and (not lines[0].strip() or lines[0].startswith(("import ", "from "))):
        lines.pop(0)
    return "\n".join(lines).strip() + "\n"


def solution(kernel_files: list[str], name: str, py_args: str, call: str) -> str:
    """A self-contained solution.py: the imports, kernels/common.py and the given kernels/
    files, then the entry point `name`, whose body is `call`."""
    parts = [IMPORTS, *(_body(f) for f in ("common", *kernel_files))]
    return "\n\n".join(parts) + f"\n\ndef {name}({params(py_args)}) -> None:\n    {call}\n"
