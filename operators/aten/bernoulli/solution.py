import itertools

import torch
import triton
import triton.language as tl

BLOCK = 2048
MAX_DIMS = 6
_calls = itertools.count(1)


@triton.jit
def _bernoulli(
    out_ptr,
    p_ptr,
    p_value,
    n,
    seed,
    s1,
    s2,
    s3,
    s4,
    s5,
    t0,
    t1,
    t2,
    t3,
    t4,
    t5,
    P_FROM_TENSOR: tl.constexpr,
    BLOCK: tl.constexpr,
):
    # out is contiguous; p (when a tensor) is read through its strides, broadcast included
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    if P_FROM_TENSOR:
        i5 = idx % s5
        r = idx // s5
        i4 = r % s4
        r = r // s4
        i3 = r % s3
        r = r // s3
        i2 = r % s2
        r = r // s2
        i1 = r % s1
        i0 = r // s1
        offs = i0 * t0 + i1 * t1 + i2 * t2 + i3 * t3 + i4 * t4 + i5 * t5
        p = tl.load(p_ptr + offs, mask=mask, other=0).to(tl.float32)
    else:
        p = tl.zeros([BLOCK], tl.float32) + p_value
    u = tl.rand(seed, idx)  # uniform in [0, 1): p == 0 never fires, p == 1 always does
    # via float32: casting a boolean straight to bfloat16 trips the CPU interpreter
    x = tl.where(u < p, 1.0, 0.0)
    tl.store(out_ptr + idx, x.to(out_ptr.dtype.element_ty), mask=mask)


def _seed(generator) -> int:
    base = generator.initial_seed() if generator is not None else torch.initial_seed()
    # a new stream per call, reproducible after torch.manual_seed
    return (base * 0x9E3779B1 + next(_calls) * 0x85EBCA77) % (1 << 62)


def _layout(t: torch.Tensor):
    """Sizes and strides of t with size-1 dims dropped and chaining dims merged (row-major
    order kept), padded in front to MAX_DIMS."""
    dims = []
    for size, stride in zip(t.shape, t.stride(), strict=True):
        if size == 1:
            continue
        if dims and dims[-1][1] == size * stride:
            dims[-1] = (dims[-1][0] * size, stride)
        else:
            dims.append((size, stride))
    if len(dims) > MAX_DIMS:
        raise NotImplementedError(f"bernoulli supports up to {MAX_DIMS} non-mergeable dims")
    dims = [(1, 0)] * (MAX_DIMS - len(dims)) + dims
    return [d[0] for d in dims][1:] + [d[1] for d in dims]


def _sample(self, probs, p_value, generator):
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    n = out.numel()
    if n:
        layout = _layout(probs) if probs is not None else [1] * 5 + [0] * 6
        _bernoulli[(triton.cdiv(n, BLOCK),)](
            out,
            probs if probs is not None else out,
            float(p_value),
            n,
            _seed(generator),
            *layout,
            P_FROM_TENSOR=probs is not None,
            BLOCK=BLOCK,
        )
    return out


def bernoulli(self, *, generator=None):
    return _sample(self, self, 0.0, generator)


def bernoulli_p(self, p, *, generator=None):
    return _sample(self, None, p, generator)


def bernoulli_Tensor(self, p, *, generator=None):
    return _sample(self, p.expand(self.shape), 0.0, generator)
