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
def _pow_float(x, y):
    # x ** y with C's pow rules, through exp2(y * log2|x|) in x's type (float64 for float32
    # data, so the result is correctly rounded to float32 in practice).
    r = tl.exp2(y * tl.log2(tl.abs(x)))
    y_int = tl.math.floor(y) == y
    y_odd = y_int & (tl.math.floor(y * 0.5) != y * 0.5)
    # a negative base needs an integral exponent (sign from its parity), except -inf
    neg = tl.where(y_int, tl.where(y_odd, -r, r), tl.where(x == float("-inf"), r, float("nan")))
    r = tl.where(x < 0, neg, r)
    r = tl.where((tl.abs(x) == 1) & (tl.abs(y) == float("inf")), 1.0, r)  # (+-1) ** +-inf
    return tl.where((y == 0) | (x == 1), 1.0, r)  # even for NaN in the other operand


@triton.jit
def _pow_int(x, y, NBITS: tl.constexpr):
    # square-and-multiply over every bit of the exponent (wrapping like C integers);
    # negative exponents give 1 / x ** -y truncated: 0 unless x is 1 or -1
    r = x * 0 + 1
    base = x
    e = y
    for _ in range(NBITS):
        r = tl.where((e & 1) != 0, r * base, r)
        base = base * base
        e = e >> 1
    neg = tl.where(x == 1, 1, tl.where(x == -1, tl.where((y & 1) != 0, -1, 1), 0)).to(r.dtype)
    return tl.where(y < 0, neg, r)


@triton.jit
def _pow_kernel(out_ptr, a_ptr, a_val, b_ptr, b_val, n, sizes, o_st, a_st, b_st,
                A_SCALAR: tl.constexpr, B_SCALAR: tl.constexpr, COMMON: tl.constexpr,
                CT: tl.constexpr, NBITS: tl.constexpr, NDIM: tl.constexpr,
                IDX64: tl.constexpr, BLOCK: tl.constexpr):
    i, mask = _index(n, IDX64, BLOCK)
    x = _read(a_ptr, a_val, i, mask, sizes, a_st, NDIM, A_SCALAR, COMMON, CT)
    y = _read(b_ptr, b_val, i, mask, sizes, b_st, NDIM, B_SCALAR, COMMON, CT)
    if A_SCALAR:  # give the scalar operand the block's shape
        x = x + tl.zeros_like(y)
    if B_SCALAR:
        y = y + tl.zeros_like(x)
    if CT.is_floating():
        r = _pow_float(x, y)
    else:
        r = _pow_int(x, y, NBITS)
    _write(out_ptr, r, i, mask, sizes, o_st, NDIM)


@triton.jit
def _square_kernel(out_ptr, a_ptr, a_val, b_ptr, b_val, n, sizes, o_st, a_st, b_st,
                   A_SCALAR: tl.constexpr, B_SCALAR: tl.constexpr, COMMON: tl.constexpr,
                   CT: tl.constexpr, EXP: tl.constexpr, NDIM: tl.constexpr,
                   IDX64: tl.constexpr, BLOCK: tl.constexpr):
    # the exponents PyTorch special-cases: 2, 3, 0.5, -0.5, -1, -2 (floats only)
    i, mask = _index(n, IDX64, BLOCK)
    x = _read(a_ptr, a_val, i, mask, sizes, a_st, NDIM, A_SCALAR, COMMON, CT)
    if EXP == 2.0:
        r = x * x
    elif EXP == 3.0:
        r = x * x * x
    elif EXP == 0.5:
        r = tl.math.sqrt_rn(x)
    elif EXP == -0.5:
        r = tl.math.div_rn(1.0, tl.math.sqrt_rn(x))
    elif EXP == -1.0:
        r = tl.math.div_rn(1.0, x)
    else:
        r = tl.math.div_rn(1.0, x * x)
    _write(out_ptr, r, i, mask, sizes, o_st, NDIM)


def _pow(base, exponent, device):
    common = torch.result_type(base, exponent)
    shapes = [t.shape for t in (base, exponent) if isinstance(t, torch.Tensor)]
    out = torch.empty(torch.broadcast_shapes(*shapes), dtype=common, device=device)
    if common == torch.bool:
        raise RuntimeError('"pow" not implemented for \'Bool\'')
    if common.is_floating_point:
        # float32 data goes through float64 for accuracy; half types through float32
        ct = tl.float32 if common in (torch.float16, torch.bfloat16) else tl.float64
        if not isinstance(exponent, torch.Tensor) and float(exponent) in (2.0, 3.0, 0.5, -0.5, -1.0, -2.0):
            return _launch(_square_kernel, out, [base, exponent], COMMON=_TL[common],
                           CT=tl.float32 if ct == tl.float32 or common == torch.float32 else ct,
                           EXP=float(exponent))
        return _launch(_pow_kernel, out, [base, exponent], COMMON=_TL[common], CT=ct, NBITS=0)
    if not isinstance(exponent, torch.Tensor) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    nbits = 8 * common.itemsize - 1
    return _launch(_pow_kernel, out, [base, exponent], COMMON=_TL[common], CT=_TL[common], NBITS=nbits)


def pow_Tensor_Tensor(self: torch.Tensor, exponent: torch.Tensor) -> torch.Tensor:
    return _pow(self, exponent, self.device)


def pow_Tensor_Scalar(self: torch.Tensor, exponent) -> torch.Tensor:
    return _pow(self, exponent, self.device)


def pow_Scalar(self, exponent: torch.Tensor) -> torch.Tensor:
    return _pow(self, exponent, exponent.device)
