import torch
import triton
import triton.language as tl

MAX_DIMS = 4  # dims the kernel indexes; more (after merging) falls back to copies
BLOCK = 1024


@triton.jit
def _add_kernel(
    a_ptr, b_ptr, out_ptr, n, alpha, size1, size2, size3, as0, as1, as2, as3, bs0, bs1, bs2,
    bs3, CONTIGUOUS: tl.constexpr, IS_BOOL: tl.constexpr, HALF_OUT: tl.constexpr,
    BLOCK: tl.constexpr,
):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if CONTIGUOUS:
        a_off = offs
        b_off = offs
    else:
        # the output is contiguous: unravel its flat index into 4 coordinates
        i3 = offs % size3
        rest = offs // size3
        i2 = rest % size2
        rest = rest // size2
        i1 = rest % size1
        i0 = rest // size1
        a_off = i0 * as0 + i1 * as1 + i2 * as2 + i3 * as3
        b_off = i0 * bs0 + i1 * bs1 + i2 * bs2 + i3 * bs3
    a = tl.load(a_ptr + a_off, mask=mask)
    b = tl.load(b_ptr + b_off, mask=mask)
    out_ty = out_ptr.dtype.element_ty
    if IS_BOOL:
        r = (a != 0) | ((b != 0) & (alpha != 0))
    else:
        # operands are converted to the result dtype first, as PyTorch's promotion does
        a = a.to(out_ty)
        b = b.to(out_ty)
        if HALF_OUT:
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        r = a + alpha * b
    tl.store(out_ptr + offs, r.to(out_ty), mask=mask)


def _merge_dims(shape, strides_a, strides_b):
    """Drop size-1 dims and merge neighbours that are contiguous in both inputs (the
    output is contiguous, so it never blocks a merge)."""
    dims = [(s, sa, sb) for s, sa, sb in zip(shape, strides_a, strides_b, strict=True) if s != 1]
    merged = []
    for s, sa, sb in dims:
        if merged:
            ps, psa, psb = merged[-1]
            if psa == sa * s and psb == sb * s:
                merged[-1] = (ps * s, sa, sb)
                continue
        merged.append((s, sa, sb))
    return merged


def _on_device(t: torch.Tensor, device: torch.device) -> torch.Tensor:
    """A 0-d CPU tensor used with a GPU tensor (a "CPU scalar"), copied to the GPU."""
    if t.device == device:
        return t
    return torch.empty((), dtype=t.dtype, device=device).copy_(t)


def _add(a: torch.Tensor, b: torch.Tensor, alpha, out_dtype: torch.dtype) -> torch.Tensor:
    device = a.device if a.dim() > 0 or b.device.type == "cpu" else b.device
    a, b = _on_device(a, device), _on_device(b, device)
    shape = torch.broadcast_shapes(a.shape, b.shape)
    out = torch.empty(shape, dtype=out_dtype, device=device)
    n = out.numel()
    if n == 0:
        return out
    a, b = a.expand(shape), b.expand(shape)
    dims = _merge_dims(shape, a.stride(), b.stride())
    if len(dims) > MAX_DIMS:
        a, b = a.contiguous(), b.contiguous()
        dims = [(n, 1, 1)]
    dims = [(1, 0, 0)] * (MAX_DIMS - len(dims)) + dims
    sizes, sa, sb = zip(*dims, strict=True)
    contiguous = dims[-1] == (n, 1, 1)
    is_bool = out_dtype == torch.bool
    if is_bool:
        alpha = int(bool(alpha))
    elif out_dtype.is_floating_point:
        alpha = float(alpha)
    else:
        alpha = int(alpha)
    _add_kernel[(triton.cdiv(n, BLOCK),)](
        a, b, out, n, alpha, sizes[1], sizes[2], sizes[3], *sa, *sb, CONTIGUOUS=contiguous,
        IS_BOOL=is_bool,
        HALF_OUT=out_dtype in (torch.float16, torch.bfloat16),
        BLOCK=BLOCK,
    )
    return out


def add_Tensor(self: torch.Tensor, other: torch.Tensor, *, alpha=1) -> torch.Tensor:
    return _add(self, other, alpha, torch.result_type(self, other))


def add_Scalar(self: torch.Tensor, other, alpha=1) -> torch.Tensor:
    out_dtype = torch.result_type(self, other)
    # the scalar is converted to the result dtype first, then broadcast as a 0-d tensor
    scalar = torch.empty((), dtype=out_dtype, device=self.device).fill_(other)
    return _add(self, scalar, alpha, out_dtype)
