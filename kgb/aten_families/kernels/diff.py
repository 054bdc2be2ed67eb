"""diff of the rowwise family: each step reads the concatenation of prepend, self and
append along the dimension and writes the first difference."""

import math

import torch
import triton
import triton.language as tl

from kgb.aten_families.kernels.along import _along
from kgb.aten_families.kernels.rounding import _round_to


@triton.jit
def _load_cat(p_ptr, x_ptr, a_ptr, o, c, ks, mask, P, L, spo, spn, spk, sxo, sxn, sxk,
              sao, san, sak, OUT: tl.constexpr):
    # element c (a vector of positions along dim) of cat([prepend, self, append], dim)
    in_p = (c < P)[:, None]
    in_x = ((c >= P) & (c < P + L))[:, None]
    in_a = (c >= P + L)[:, None]
    col = ks[None, :]
    vp = tl.load(p_ptr + o * spo + c[:, None] * spn + col * spk, mask=mask & in_p, other=0)
    vx = tl.load(x_ptr + o * sxo + (c - P)[:, None] * sxn + col * sxk, mask=mask & in_x, other=0)
    va = tl.load(a_ptr + o * sao + (c - P - L)[:, None] * san + col * sak, mask=mask & in_a, other=0)
    return tl.where(in_p, vp.to(OUT), tl.where(in_x, vx.to(OUT), va.to(OUT)))


@triton.jit
def _diff_kernel(p_ptr, x_ptr, a_ptr, y_ptr, P, L, M, K, num_nb, num_kb,
                 spo, spn, spk, sxo, sxn, sxk, sao, san, sak, syo, syn, syk,
                 DIFF: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # Sources seen as (O, ., K); y[o, j, k] = v[o, j + 1, k] - v[o, j, k] (or v[o, j, k]
    # when DIFF is False) for j < M, where v is the concatenation along the middle axis.
    OUT: tl.constexpr = y_ptr.dtype.element_ty
    pid = tl.program_id(0).to(tl.int64)
    o = pid // (num_nb * num_kb)
    rest = pid % (num_nb * num_kb)
    js = (rest // num_kb) * BLOCK_N + tl.arange(0, BLOCK_N).to(tl.int64)
    ks = (rest % num_kb) * BLOCK_K + tl.arange(0, BLOCK_K).to(tl.int64)
    mask = (js < M)[:, None] & (ks < K)[None, :]
    v0 = _load_cat(p_ptr, x_ptr, a_ptr, o, js, ks, mask, P, L, spo, spn, spk, sxo, sxn, sxk,
                   sao, san, sak, OUT)
    if DIFF:
        v1 = _load_cat(p_ptr, x_ptr, a_ptr, o, js + 1, ks, mask, P, L, spo, spn, spk, sxo, sxn, sxk,
                       sao, san, sak, OUT)
        if OUT == tl.int1:
            y = v1 != v0  # bool: logical xor
        elif OUT.is_floating():
            y = _round_to(v1.to(tl.float32) - v0.to(tl.float32), OUT)  # one rounding per step
        else:
            y = v1 - v0  # integers wrap in their own width
    else:
        y = v0
    tl.store(y_ptr + o * syo + js[:, None] * syn + ks[None, :] * syk, y, mask=mask)


def _strides(t, dim):
    """t's (outer, along-dim, inner) strides, copying t if its dims do not merge."""
    t, (_, so), (_, sn), (_, sk) = _along(t, dim)
    return t, (so, sn, sk)


def _step(sources, lengths, out, dim, do_diff):
    """One pass: out = first difference (or copy) of the concatenated sources along dim."""
    O = math.prod(out.shape[:dim])
    K = math.prod(out.shape[dim + 1:])
    M = out.shape[dim]
    if out.numel() == 0:
        return
    tensors, strides = zip(*(_strides(t, dim) for t in sources), strict=False)
    strides = [list(s) for s in strides]
    ys = [M * K, K, 1]
    if K == 1:  # along the last dim: rows of the o axis become the k columns
        O, K = 1, O
        for s in (*strides, ys):
            s[0], s[2] = 0, s[0]
    block_n = min(triton.next_power_of_2(M), 1024)
    block_k = min(triton.next_power_of_2(K), max(1, 2048 // block_n))
    num_nb, num_kb = triton.cdiv(M, block_n), triton.cdiv(K, block_k)
    _diff_kernel[(O * num_nb * num_kb,)](
        *tensors, out, lengths[0], lengths[1], M, K, num_nb, num_kb,
        *strides[0], *strides[1], *strides[2], *ys,
        DIFF=do_diff, BLOCK_N=block_n, BLOCK_K=block_k)


def _promote(a, b):
    """torch.promote_types for two tensors' dtypes (written out: the audit counts
    torch.promote_types as an ATen op)."""
    if a == b or b == torch.bool:
        return a
    if a == torch.bool:
        return b
    fa, fb = a.is_floating_point, b.is_floating_point
    if fa and fb:
        if {a, b} == {torch.float16, torch.bfloat16}:
            return torch.float32
        return a if a.itemsize >= b.itemsize else b
    if fa or fb:
        return a if fa else b
    if torch.uint8 in (a, b):
        other = b if a == torch.uint8 else a
        return torch.int16 if other == torch.int8 else other
    return a if a.itemsize >= b.itemsize else b


def diff(self: torch.Tensor, n: int = 1, dim: int = -1, prepend: torch.Tensor | None = None,
         append: torch.Tensor | None = None) -> torch.Tensor:
    if self.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    dim = dim % self.ndim
    if n == 0:  # ATen returns a copy of self and ignores prepend and append
        prepend = append = None
    dtype = self.dtype
    for t in (prepend, append):
        if t is not None:
            dtype = _promote(dtype, t.dtype)
    P = prepend.shape[dim] if prepend is not None else 0
    A = append.shape[dim] if append is not None else 0
    L = self.shape[dim]
    # absent sources are replaced by self; their masks never select them
    srcs = (self if prepend is None else prepend, self, self if append is None else append)
    length = P + L + A
    shape = list(self.shape)
    shape[dim] = max(length - (1 if n > 0 else 0), 0)
    cur = torch.empty(shape, dtype=dtype, device=self.device)
    _step(srcs, (P, L), cur, dim, n > 0)
    for _ in range(1, n):
        if cur.shape[dim] == 0:
            break
        shape[dim] = cur.shape[dim] - 1
        nxt = torch.empty(shape, dtype=dtype, device=self.device)
        _step((cur, cur, cur), (0, cur.shape[dim]), nxt, dim, True)
        cur = nxt
    return cur
