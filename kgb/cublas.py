"""libcublas through ctypes: the speed baseline of the `cublas::` operators on NVIDIA.

A cuBLAS spec's entry point takes the routine's own BLAS argument list without the
handle (torch tensors for device pointers, Python numbers for host scalars, 'N'/'T'/'C'
for transposes), so its baseline is the routine itself, called with the same arguments:

    def speed_baseline(entry, device):
        return cublas.baseline("cublasSaxpy_v2", device)

`baseline` returns None where there is no NVIDIA GPU or no loadable libcublas; the
evaluator then times the spec's reference instead. `call` runs one routine now.

Argument conversion follows the routine's C signature in `SIGNATURES` (cuBLAS 12, after
the handle): 'N'/'T'/'C' for cublasOperation_t, 'L'/'U' for the fill mode, 'L'/'R' for the
side, 'N'/'U' for the diagonal type, "CUDA_R_16F"-style names for cudaDataType_t; ints as
int (int64_t in the `_64` routines) or long long strides; a Python float or complex as a
pointer to the routine's scalar type, which its name gives (cublasS* float, D* double, C*
cuComplex, Z* cuDoubleComplex, H* __half), held on the host, or on the device under
pointer_mode="device"; a tensor as its data pointer. A pointer array (the *Batched
routines) is passed as two arguments, the buffer that holds the problems and an int64
tensor of element offsets into it, and becomes a device array of buf + offset pointers.
Every cublasStatus_t is checked: a failure raises CublasError with the status's name; a
routine that the loaded libcublas lacks raises CublasError naming it.

The library is the one PyTorch already loaded (found in /proc/self/maps), else one from
the NVIDIA wheels (nvidia/cublas/lib, nvidia/cu13/lib), torch/lib, or the system loader.
One handle per device is created on first use, given a workspace owned by PyTorch (so
that calls can be captured in CUDA graphs), and bound to torch's current stream on every
call.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import site
import struct
from collections.abc import Callable
from typing import Any

import torch

STATUS_NAMES = {
    0: "CUBLAS_STATUS_SUCCESS",
    1: "CUBLAS_STATUS_NOT_INITIALIZED",
    3: "CUBLAS_STATUS_ALLOC_FAILED",
    7: "CUBLAS_STATUS_INVALID_VALUE",
    8: "CUBLAS_STATUS_ARCH_MISMATCH",
    11: "CUBLAS_STATUS_MAPPING_ERROR",
    13: "CUBLAS_STATUS_EXECUTION_FAILED",
    14: "CUBLAS_STATUS_INTERNAL_ERROR",
    15: "CUBLAS_STATUS_NOT_SUPPORTED",
    16: "CUBLAS_STATUS_LICENSE_ERROR",
}
OPERATION = {"N": 0, "T": 1, "C": 2}  # cublasOperation_t
POINTER_MODE = {"host": 0, "device": 1}  # cublasPointerMode_t
WORKSPACE_BYTES = 32 * 1024 * 1024  # what cuBLAS recommends for Hopper
# ctypes values passed as they are: c_int(...), structures, arrays, pointers, byref(...)
_CTYPES = (
    ctypes._SimpleCData,
    ctypes.Structure,
    ctypes.Array,
    ctypes._Pointer,
    type(ctypes.byref(ctypes.c_int())),
)


class CublasError(RuntimeError):
    """A cuBLAS call returned a status other than CUBLAS_STATUS_SUCCESS."""


class _Complex64(ctypes.Structure):
    _fields_ = [("x", ctypes.c_float), ("y", ctypes.c_float)]


class _Complex128(ctypes.Structure):
    _fields_ = [("x", ctypes.c_double), ("y", ctypes.c_double)]


def _half(v: float) -> ctypes.c_uint16:
    return ctypes.c_uint16(struct.unpack("<H", struct.pack("<e", v))[0])


# routine-name letter -> (host scalar maker, torch dtype of a device scalar)
_SCALARS: dict[str, tuple[Callable[[Any], Any], torch.dtype]] = {
    "S": (lambda v: ctypes.c_float(v), torch.float32),
    "D": (lambda v: ctypes.c_double(v), torch.float64),
    "C": (lambda v: _Complex64(complex(v).real, complex(v).imag), torch.complex64),
    "Z": (lambda v: _Complex128(complex(v).real, complex(v).imag), torch.complex128),
    "H": (_half, torch.float16),
}

_lib: ctypes.CDLL | None = None
_load_error: str | None = None
_handles: dict[int, tuple[ctypes.c_void_p, torch.Tensor]] = {}


def _candidates() -> list[str]:
    """Paths of libcublas to try, best first."""
    found = []
    try:
        with open("/proc/self/maps") as maps:  # the copy PyTorch itself loaded
            found += sorted({line.split()[-1] for line in maps if "/libcublas.so" in line})
    except OSError:
        pass
    roots = [
        *site.getsitepackages(),
        site.getusersitepackages(),
        os.path.dirname(os.path.dirname(torch.__file__)),
    ]
    for root in roots:
        for sub in ("nvidia/cublas/lib", "nvidia/cu13/lib", "nvidia/cu12/lib", "torch/lib"):
            found += sorted(glob.glob(os.path.join(root, sub, "libcublas.so*")), reverse=True)
    system = ctypes.util.find_library("cublas")
    if system:
        found.append(system)
    return [p for p in dict.fromkeys(found) if "libcublasLt" not in p]


def library() -> ctypes.CDLL | None:
    """libcublas, loaded once; None (with the reason in `load_error()`) if none loads."""
    global _lib, _load_error
    if _lib is None and _load_error is None:
        errors = []
        for path in _candidates():
            try:
                _lib = ctypes.CDLL(path)
                break
            except OSError as e:
                errors.append(f"{path}: {e}")
        else:
            _load_error = "; ".join(errors) or "libcublas not found"
    return _lib


def load_error() -> str | None:
    return _load_error


def _check(status: int, what: str) -> None:
    if status != 0:
        raise CublasError(f"{what} returned {STATUS_NAMES.get(status, f'status {status}')}")


def _fn(lib: ctypes.CDLL, name: str):
    f = getattr(lib, name)
    f.restype = ctypes.c_int
    return f


def _handle(lib: ctypes.CDLL) -> ctypes.c_void_p:
    """The current device's handle, created on first use with a PyTorch-owned workspace."""
    device = torch.cuda.current_device()
    if device not in _handles:
        handle = ctypes.c_void_p()
        _check(_fn(lib, "cublasCreate_v2")(ctypes.byref(handle)), "cublasCreate_v2")
        workspace = torch.empty(WORKSPACE_BYTES, dtype=torch.uint8, device=f"cuda:{device}")
        _check(
            _fn(lib, "cublasSetWorkspace_v2")(
                handle, ctypes.c_void_p(workspace.data_ptr()), ctypes.c_size_t(WORKSPACE_BYTES)
            ),
            "cublasSetWorkspace_v2",
        )
        _handles[device] = (handle, workspace)
    return _handles[device][0]


# cuBLAS 12's C argument lists, after the handle, one word per parameter:
#   op fill side diag dtype   the enums cublasOperation_t, cublasFillMode_t, cublasSideMode_t,
#                             cublasDiagType_t, cudaDataType_t (from 'N'/'T'/'C', 'L'/'U',
#                             'L'/'R', 'N'/'U' and a name such as "CUDA_R_16F")
#   int                       int, int64_t in the _64 routines
#   stride                    long long int
#   scalar                    a pointer to a scalar of the routine's type (alpha, beta)
#   ptr                       a device pointer (a tensor)
#   ptrs                      a device array of device pointers, passed as two Python
#                             arguments: a buffer and an int64 tensor of element offsets
_GEMM = "op op int int int scalar ptr int ptr int scalar ptr int"
_GEMM_STRIDED = "op op int int int scalar ptr int stride ptr int stride scalar ptr int stride int"
_GEMM_POINTERS = "op op int int int scalar ptrs int ptrs int scalar ptrs int int"
_GEMV = "op int int scalar ptr int ptr int scalar ptr int"
_GEMV_STRIDED = "op int int scalar ptr int stride ptr int stride scalar ptr int stride int"
_GEMV_POINTERS = "op int int scalar ptrs int ptrs int scalar ptrs int int"
_VECTOR_PAIR = "int ptr int ptr int"
SIGNATURES: dict[str, str] = {
    **dict.fromkeys(["cublasSaxpy_v2", "cublasDaxpy_v2"], "int scalar ptr int ptr int"),
    **dict.fromkeys(["cublasCcopy_v2", "cublasDcopy_v2", "cublasZswap_v2"], _VECTOR_PAIR),
    "cublasSscal_v2": "int scalar ptr int",
    "cublasDasum_v2": "int ptr int ptr",
    **dict.fromkeys(
        ["cublasSdot_v2", "cublasCdotu_v2", "cublasZdotc_v2"], "int ptr int ptr int ptr"
    ),
    **dict.fromkeys(["cublasDgemv_v2", "cublasCgemv_v2"], _GEMV),
    **dict.fromkeys([f"cublas{p}gemvStridedBatched" for p in "SDCZ"], _GEMV_STRIDED),
    **dict.fromkeys(
        ["cublasSgemvBatched", "cublasDgemvBatched", "cublasZgemvBatched", "cublasCgemvBatched_64"],
        _GEMV_POINTERS,
    ),
    **dict.fromkeys(
        ["cublasSger_v2", "cublasCgeru_v2", "cublasZgerc_v2"],
        "int int scalar ptr int ptr int ptr int",
    ),
    "cublasDsbmv_v2": "fill int int scalar ptr int ptr int scalar ptr int",
    "cublasDsyr2_v2": "fill int scalar ptr int ptr int ptr int",
    "cublasCsymv_v2": "fill int scalar ptr int ptr int scalar ptr int",
    "cublasStbmv_v2": "fill op diag int int ptr int ptr int",
    "cublasStrsv_v2": "fill op diag int ptr int ptr int",
    **dict.fromkeys(["cublasSgemm_v2", "cublasCgemm_v2"], _GEMM),
    **dict.fromkeys(
        [
            "cublasSgemmStridedBatched",
            "cublasDgemmStridedBatched",
            "cublasCgemmStridedBatched",
            "cublasZgemmStridedBatched",
            "cublasHgemmStridedBatched",
            "cublasDgemmStridedBatched_64",
            "cublasCgemmStridedBatched_64",
        ],
        _GEMM_STRIDED,
    ),
    **dict.fromkeys(
        ["cublasDgemmBatched", "cublasZgemmBatched", "cublasHgemmBatched", "cublasSgemmBatched_64"],
        _GEMM_POINTERS,
    ),
    "cublasSgemmEx": "op op int int int scalar ptr dtype int ptr dtype int scalar ptr dtype int",
    "cublasCsymm_v2": "side fill int int scalar ptr int ptr int scalar ptr int",
    "cublasSsyrk_v2": "fill op int int scalar ptr int scalar ptr int",
    "cublasCsyrkEx": "fill op int int scalar ptr dtype int scalar ptr dtype int",
    "cublasStrsm_v2": "side fill op diag int int scalar ptr int ptr int",
    **dict.fromkeys(
        ["cublasDtrsmBatched", "cublasZtrsmBatched"],
        "side fill op diag int int scalar ptrs int ptrs int int",
    ),
    "cublasSgeam": "op op int int scalar ptr int scalar ptr int ptr int",
    "cublasSdgmm": "side int int ptr int ptr int ptr int",
}
# cudaDataType_t (library_types.h)
DATA_TYPE = {
    "CUDA_R_32F": 0, "CUDA_R_64F": 1, "CUDA_R_16F": 2, "CUDA_R_8I": 3, "CUDA_C_32F": 4,
    "CUDA_C_64F": 5, "CUDA_C_16F": 6, "CUDA_C_8I": 7, "CUDA_R_16BF": 14, "CUDA_C_16BF": 15,
}  # fmt: skip
_ENUMS: dict[str, dict[str, int]] = {
    "op": OPERATION,
    "fill": {"L": 0, "U": 1},
    "side": {"L": 0, "R": 1},
    "diag": {"N": 0, "U": 1},
    "dtype": DATA_TYPE,
}


def _argtype(routine: str, kind: str) -> Any:
    if kind in _ENUMS:
        return ctypes.c_int
    if kind == "int":
        return ctypes.c_int64 if routine.endswith("_64") else ctypes.c_int
    if kind == "stride":
        return ctypes.c_longlong
    return ctypes.c_void_p


def _pointer_array(buf: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    """The device array of pointers buf + offsets[b] (elements) that a *Batched routine reads."""
    return (offsets.to(torch.int64) * buf.element_size() + buf.data_ptr()).contiguous()


class _Arguments:
    """Converts a routine's Python arguments into ctypes values by its C signature, keeping
    alive what the call points to (host scalars, device scalars, pointer arrays)."""

    def __init__(self, routine: str, device_scalars: bool):
        if routine not in SIGNATURES:
            raise CublasError(f"kgb.cublas has no binding for {routine}")
        self.routine, self.kinds = routine, SIGNATURES[routine].split()
        self.device_scalars = device_scalars
        self.keep: list[Any] = []
        self.arrays: dict[tuple[int, int], torch.Tensor] = {}  # reused while inputs stay put

    @property
    def argtypes(self) -> list[Any]:
        return [ctypes.c_void_p, *(_argtype(self.routine, k) for k in self.kinds)]

    def convert(self, args: tuple[Any, ...]) -> list[Any]:
        expected = len(self.kinds) + self.kinds.count("ptrs")
        if len(args) != expected:
            raise TypeError(f"{self.routine} takes {expected} arguments, got {len(args)}")
        self.keep = []
        out, rest = [], list(args)
        for kind in self.kinds:
            arg = rest.pop(0)
            if kind == "ptrs":
                out.append(self._pointers(arg, rest.pop(0)))
            else:
                out.append(self._one(kind, arg))
        return out

    def _pointers(self, buf: torch.Tensor, offsets: torch.Tensor) -> ctypes.c_void_p:
        key = (buf.data_ptr(), offsets.data_ptr())
        if key not in self.arrays:
            self.arrays[key] = _pointer_array(buf, offsets)
        return ctypes.c_void_p(self.arrays[key].data_ptr())

    def _one(self, kind: str, arg: Any) -> Any:
        if isinstance(arg, _CTYPES):
            return arg
        if kind in _ENUMS:
            return ctypes.c_int(_ENUMS[kind][arg.upper() if kind != "dtype" else arg])
        if kind in ("int", "stride"):
            return _argtype(self.routine, kind)(int(arg))
        if kind == "ptr":
            return ctypes.c_void_p(None if arg is None else arg.data_ptr())
        return self._scalar(arg)

    def _scalar(self, value: float | complex) -> ctypes.c_void_p:
        make, dtype = _SCALARS[self.routine.removeprefix("cublas")[0]]
        if self.device_scalars:
            t = torch.tensor(value, dtype=dtype, device="cuda")
            self.keep.append(t)
            return ctypes.c_void_p(t.data_ptr())
        host = make(value)
        self.keep.append(host)
        return ctypes.c_void_p(ctypes.addressof(host))


def _routine(lib: ctypes.CDLL, routine: str, argtypes: list[Any]) -> Any:
    """The routine's symbol; a libcublas without it is reported, never replaced."""
    try:
        f = getattr(lib, routine)
    except AttributeError:
        raise CublasError(
            f"the installed libcublas ({getattr(lib, '_name', '?')}) has no {routine}"
        ) from None
    f.restype, f.argtypes = ctypes.c_int, argtypes
    return f


def call(routine: str, *args: Any, pointer_mode: str = "host") -> None:
    """Run `routine` (e.g. "cublasSgemm_v2") on torch's current stream with the BLAS
    arguments `args` (no handle). Raises CublasError on a failed status."""
    _Caller(routine, pointer_mode)(*args)


class _Caller:
    """One routine bound to the library, called with Python arguments."""

    def __init__(self, routine: str, pointer_mode: str):
        lib = library()
        if lib is None:
            raise CublasError(f"libcublas could not be loaded: {_load_error}")
        self.lib, self.routine, self.pointer_mode = lib, routine, pointer_mode
        self.arguments = _Arguments(routine, pointer_mode == "device")
        self.fn = _routine(lib, routine, self.arguments.argtypes)

    def __call__(self, *args: Any) -> None:
        handle = _handle(self.lib)
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        _check(_fn(self.lib, "cublasSetStream_v2")(handle, stream), "cublasSetStream_v2")
        mode = ctypes.c_int(POINTER_MODE[self.pointer_mode])
        _check(_fn(self.lib, "cublasSetPointerMode_v2")(handle, mode), "cublasSetPointerMode_v2")
        _check(self.fn(handle, *self.arguments.convert(args)), self.routine)


def baseline(
    routine: str, device: str, pointer_mode: str = "host"
) -> tuple[str, Callable[..., None]] | None:
    """What a cuBLAS spec's `speed_baseline` returns: ("libcublas", fn), fn taking the
    entry point's arguments; None off NVIDIA or without a loadable libcublas. A libcublas
    that lacks the routine raises CublasError: the routine is reported, not timed against
    something else."""
    if device != "cuda" or not torch.cuda.is_available() or getattr(torch.version, "hip", None):
        return None
    if library() is None:
        return None
    return "libcublas", _Caller(routine, pointer_mode)
