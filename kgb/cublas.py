"""libcublas through ctypes: the speed baseline of the `cublas::` operators on NVIDIA.

A cuBLAS spec's entry point takes the routine's own BLAS argument list without the
handle (torch tensors for device pointers, Python numbers for host scalars, 'N'/'T'/'C'
for transposes), so its baseline is the routine itself, called with the same arguments:

    def speed_baseline(entry, device):
        return cublas.baseline("cublasSaxpy_v2", device)

`baseline` returns None where there is no NVIDIA GPU or no loadable libcublas; the
evaluator then times the spec's reference instead. `call` runs one routine now.

Argument conversion (`_convert`): int -> c_int (int64_t for the `_64` routines); a Python
float or complex -> a pointer to the routine's scalar type, which its name gives (cublasS*
float, D* double, C* cuComplex, Z* cuDoubleComplex, H* __half), held on the host, or on
the device under pointer_mode="device"; a tensor -> its data pointer; 'N'/'T'/'C' -> the
cublasOperation_t value; None -> a null pointer; a ctypes object passes unchanged. Other
enums are spelled with `fill`, `side` and `diag`, since their letters overlap ('L' is
both lower and left). Every cublasStatus_t is checked: a failure raises CublasError with
the status's name.

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


def fill(uplo: str) -> ctypes.c_int:
    """cublasFillMode_t: 'L' lower, 'U' upper."""
    return ctypes.c_int({"L": 0, "U": 1}[uplo])


def side(s: str) -> ctypes.c_int:
    """cublasSideMode_t: 'L' left, 'R' right."""
    return ctypes.c_int({"L": 0, "R": 1}[s])


def diag(d: str) -> ctypes.c_int:
    """cublasDiagType_t: 'N' non-unit, 'U' unit."""
    return ctypes.c_int({"N": 0, "U": 1}[d])


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


def _convert(routine: str, arg: Any, device_scalars: bool, keep: list) -> Any:
    """One Python argument as the ctypes value cuBLAS expects (see the module docstring)."""
    if arg is None:
        return ctypes.c_void_p(None)
    if isinstance(arg, _CTYPES):
        return arg
    if isinstance(arg, torch.Tensor):
        return ctypes.c_void_p(arg.data_ptr())
    if isinstance(arg, str):
        return ctypes.c_int(OPERATION[arg.upper()])
    if isinstance(arg, bool | int):
        return ctypes.c_int64(arg) if routine.endswith("_64") else ctypes.c_int(arg)
    if isinstance(arg, float | complex):
        make, dtype = _SCALARS[routine.removeprefix("cublas")[0]]
        if device_scalars:
            t = torch.tensor(arg, dtype=dtype, device="cuda")
            keep.append(t)
            return ctypes.c_void_p(t.data_ptr())
        value = make(arg)
        keep.append(value)
        return ctypes.byref(value)
    raise TypeError(f"{routine}: cannot pass a {type(arg).__name__} to cuBLAS")


def call(routine: str, *args: Any, pointer_mode: str = "host") -> None:
    """Run `routine` (e.g. "cublasSgemm_v2") on torch's current stream with the BLAS
    arguments `args` (no handle). Raises CublasError on a failed status."""
    lib = library()
    if lib is None:
        raise CublasError(f"libcublas could not be loaded: {_load_error}")
    handle = _handle(lib)
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    _check(_fn(lib, "cublasSetStream_v2")(handle, stream), "cublasSetStream_v2")
    _check(
        _fn(lib, "cublasSetPointerMode_v2")(handle, ctypes.c_int(POINTER_MODE[pointer_mode])),
        "cublasSetPointerMode_v2",
    )
    keep: list = []  # host scalars and device scalars must outlive the call
    converted = [_convert(routine, a, pointer_mode == "device", keep) for a in args]
    _check(_fn(lib, routine)(handle, *converted), routine)


def baseline(
    routine: str, device: str, pointer_mode: str = "host"
) -> tuple[str, Callable[..., None]] | None:
    """What a cuBLAS spec's `speed_baseline` returns: ("libcublas", fn), fn taking the
    entry point's arguments; None off NVIDIA or without a loadable libcublas."""
    if device != "cuda" or not torch.cuda.is_available() or getattr(torch.version, "hip", None):
        return None
    if library() is None:
        return None

    def run(*args: Any) -> None:
        call(routine, *args, pointer_mode=pointer_mode)

    return "libcublas", run
