import torch
import triton
import triton.language as tl

# ---- strided elementwise launch (same helper in each elementwise solution) ----------------
_TL = {
    torch.float16: tl.float16, torch.bfloat16: tl.bfloat16, torch.float32: tl.float32,
    torch.float64: tl.float64, torch.int8: tl.int8, torch.uint8: tl.uint8, torch.int16: tl.int16,
    torch.int32: tl.int32, torch.int64: tl.int64, torch.bool: tl.int1,
}


def _opmath(dtype):
    """Arithmetic type: float32 for half types (as PyTorch's opmath), int32 for bool."""
    if dtype in (torch.float16, torch.bfloat16):
        return tl.float32
    return tl.int32 if dtype == torch.bool else _TL[dtype]


def _plan(shape, tensors):
    """Sizes and per-tensor strides, innermost dim first, size-1 dims dropped and dims merged
    wherever every tensor is contiguous across them (so a dense tensor becomes one dim)."""
    sizes, strides = [], [[] for _ in tensors]
    for d in range(len(shape) - 1, -1, -1):
        if shape[d] == 1:
            continue
        st = [t.stride(d) for t in tensors]
        if sizes and all(s == acc[-1] * sizes[-1] for s, acc in zip(st, strides, strict=True)):
            sizes[-1] *= shape[d]
        else:
            sizes.append(shape[d])
            for acc, s in zip(strides, st, strict=True):
                acc.append(s)
    if not sizes:
        return (1,), [(0,) for _ in tensors]
    return tuple(sizes), [tuple(s) for s in strides]


def _launch(kernel, out, operands, **kwargs):
    """Run `kernel` once per element of `out`. Operands are tensors broadcastable to out's
    shape (read through their strides) or Python numbers (passed by value)."""
    n = out.numel()
    if n == 0:
        return out
    views = [out] + [t.expand(out.shape) for t in operands if isinstance(t, torch.Tensor)]
    sizes, strides = _plan(out.shape, views)
    reach = max(sum((s - 1) * st for s, st in zip(sizes, sts, strict=True)) for sts in strides)
    block = 4096 if n >= (1 << 20) else 1024
    args, sts, flags, k = [out], [strides[0]], {}, 1
    for j, t in enumerate(operands):
        if isinstance(t, torch.Tensor):
            args += [views[k], 0]
            sts.append(strides[k])
            k += 1
        else:
            args += [out, t]  # the pointer is never read
            sts.append((0,) * len(sizes))
        flags["ABC"[j] + "_SCALAR"] = not isinstance(t, torch.Tensor)
    grid = (triton.cdiv(n, block),)
    kernel[grid](*args, n, sizes, *sts, **flags, **kwargs, NDIM=len(sizes),
                 IDX64=max(n + 2 * block, reach) >= 2**31, BLOCK=block)
    return out


@triton.jit
def _offset(i, sizes, strides, NDIM: tl.constexpr):
    off = i * 0
    for k in tl.static_range(NDIM - 1):
        off += (i % sizes[k]) * strides[k]
        i = i // sizes[k]
    return off + i * strides[NDIM - 1]


@triton.jit
def _index(n, IDX64: tl.constexpr, BLOCK: tl.constexpr):
    if IDX64:
        i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    else:
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    return i, i < n


@triton.jit
def _read(ptr, val, i, mask, sizes, strides, NDIM: tl.constexpr, SCALAR: tl.constexpr,
          COMMON: tl.constexpr, CT: tl.constexpr):
    # Operands are first converted to the common dtype (a Python scalar too), as ATen does.
    # Integers reach bfloat16 through float32: the CPU interpreter casts int -> bf16 bitwise.
    if SCALAR:
        v = val
        if COMMON == tl.bfloat16:
            v = tl.cast(v, tl.float32)
        v = tl.cast(tl.cast(v, COMMON), CT)
    else:
        v = tl.load(ptr + _offset(i, sizes, strides, NDIM), mask=mask)
        if COMMON == tl.bfloat16:
            if v.dtype.is_int():
                v = v.to(tl.float32)
        v = v.to(COMMON).to(CT)
    return v


@triton.jit
def _write(ptr, v, i, mask, sizes, strides, NDIM: tl.constexpr):
    if ptr.dtype.element_ty == tl.int1:
        v = v != 0
    tl.store(ptr + _offset(i, sizes, strides, NDIM), v.to(ptr.dtype.element_ty), mask=mask)
# ---------------------------------------------------------------------------------------------


@triton.jit
def _fdiv(a, b):
    # correctly rounded division (Triton's plain float32 `/` may be approximate on GPUs)
    if a.dtype == tl.float32:
        q = tl.math.div_rn(a, b)
    else:
        q = a / b
    return q


@triton.jit
def _round_to(x, DT: tl.constexpr):
    # x rounded to the nearest DT value (ties to even), kept in x's dtype. bfloat16 is rounded
    # on the bits because Triton's CPU interpreter truncates float32 -> bfloat16 casts.
    if DT == tl.bfloat16:
        b = x.to(tl.int32, bitcast=True)
        b = (b + 0x7FFF + ((b >> 16) & 1)) & -65536
        r = tl.where(x != x, x, b.to(tl.float32, bitcast=True))
    else:
        r = x.to(DT).to(x.dtype)
    return r


@triton.jit
def _floor_div(a, b):
    # PyTorch's floor division: the quotient of a - fmod(a, b), corrected to the floor;
    # done in float64 for float32 inputs (float32 for half types), where fmod is exact.
    q = _fdiv(a, b)
    t = tl.where(q < 0, tl.math.ceil(q), tl.math.floor(q))
    mod = tl.where(tl.abs(b) == float("inf"), a, a - t * b)
    d = _fdiv(a - mod, b)
    d = tl.where((mod != 0) & ((b < 0) != (mod < 0)), d - 1, d)
    f = tl.math.floor(d)
    f = tl.where(d - f > 0.5, f + 1, f)
    f = tl.where(d == 0, 0.0, f)
    return tl.where(b == 0, q, f)


@triton.jit
def _div_kernel(out_ptr, a_ptr, a_val, b_ptr, b_val, n, sizes, o_st, a_st, b_st,
                A_SCALAR: tl.constexpr, B_SCALAR: tl.constexpr, COMMON: tl.constexpr,
                CT: tl.constexpr, MODE: tl.constexpr, NDIM: tl.constexpr,
                IDX64: tl.constexpr, BLOCK: tl.constexpr):
    # MODE 0: true division, 1: rounded toward zero, 2: rounded toward -inf
    i, mask = _index(n, IDX64, BLOCK)
    a = _read(a_ptr, a_val, i, mask, sizes, a_st, NDIM, A_SCALAR, COMMON, CT)
    b = _read(b_ptr, b_val, i, mask, sizes, b_st, NDIM, B_SCALAR, COMMON, CT)
    if MODE == 0:
        r = _fdiv(a, b)
    elif CT.is_floating():
        if MODE == 1:
            # PyTorch truncates the quotient after rounding it to the common dtype
            q = _round_to(_fdiv(a, b), COMMON)
            r = tl.where(q < 0, tl.math.ceil(q), tl.math.floor(q))
        else:
            r = _floor_div(a, b)
    else:
        r = a // b  # integer division truncates in Triton, as in C
        if MODE == 2:
            rem = a % b
            r = tl.where((rem != 0) & ((rem < 0) != (b < 0)), r - 1, r)
    _write(out_ptr, r, i, mask, sizes, o_st, NDIM)


_MODES = {None: 0, "trunc": 1, "floor": 2}


def _div_into(out, a, b, rounding_mode):
    """out <- a / b with PyTorch's rounding modes; `out` has the result's shape and dtype."""
    if rounding_mode not in _MODES:
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")
    common = torch.result_type(a, b)
    if common == torch.float64:
        ct = tl.float64
    elif rounding_mode is None or common in (torch.float16, torch.bfloat16):
        ct = tl.float32
    elif common == torch.float32:
        ct = tl.float64 if rounding_mode == "floor" else tl.float32
    else:
        ct = _TL[common]
    return _launch(_div_kernel, out, [a, b], COMMON=_TL[common], CT=ct, MODE=_MODES[rounding_mode])



def _div_(self, other, rounding_mode):
    # the result is computed in the promoted dtype and cast to self's dtype on the store
    return _div_into(self, self, other, rounding_mode)


def div__Tensor(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    return _div_(self, other, None)


def div__Scalar(self: torch.Tensor, other) -> torch.Tensor:
    return _div_(self, other, None)


def div__Tensor_mode(self: torch.Tensor, other: torch.Tensor, *, rounding_mode: str | None = None) -> torch.Tensor:
    return _div_(self, other, rounding_mode)


def div__Scalar_mode(self: torch.Tensor, other, *, rounding_mode: str | None = None) -> torch.Tensor:
    return _div_(self, other, rounding_mode)
