"""The strided elementwise launch of the comparison and division families: plan the
dims, read each operand through its strides in the common dtype, write the result. Every
solution of those families carries this text (a candidate cannot import it)."""

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
