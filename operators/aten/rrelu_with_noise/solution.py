import itertools

import torch
import triton
import triton.language as tl

BLOCK = 2048
MAX_DIMS = 6
_calls = itertools.count(1)


@triton.jit
def _rrelu(
    x_ptr,
    noise_ptr,
    out_ptr,
    n,
    lower,
    upper,
    slope,
    seed,
    s1,
    s2,
    s3,
    s4,
    s5,
    a0,
    a1,
    a2,
    a3,
    a4,
    a5,
    b0,
    b1,
    b2,
    b3,
    b4,
    b5,
    TRAINING: tl.constexpr,
    BLOCK: tl.constexpr,
):
    # one logical index space; self is read through strides a*, noise through strides b*,
    # out is contiguous
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
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
    x_off = i0 * a0 + i1 * a1 + i2 * a2 + i3 * a3 + i4 * a4 + i5 * a5
    x = tl.load(x_ptr + x_off, mask=mask, other=0).to(tl.float32)
    if TRAINING:
        u = tl.rand(seed, idx)
        neg = x <= 0.0
        slopes = lower + (upper - lower) * u
        out = tl.where(neg, x * slopes, x)
        noise = tl.where(neg, slopes, 1.0)
        n_off = i0 * b0 + i1 * b1 + i2 * b2 + i3 * b3 + i4 * b4 + i5 * b5
        tl.store(noise_ptr + n_off, noise.to(noise_ptr.dtype.element_ty), mask=mask)
    else:
        out = tl.where(x >= 0.0, x, x * slope)
    tl.store(out_ptr + idx, out.to(out_ptr.dtype.element_ty), mask=mask)


def _seed(generator) -> int:
    base = generator.initial_seed() if generator is not None else torch.initial_seed()
    # a new stream per call, reproducible after torch.manual_seed
    return (base * 0x9E3779B1 + next(_calls) * 0x85EBCA77) % (1 << 62)


def _joint_layout(a: torch.Tensor, b: torch.Tensor):
    """Shared sizes with a's and b's strides: size-1 dims dropped, dims merged where both
    tensors chain, padded in front to MAX_DIMS."""
    dims = []
    for size, sa, sb in zip(a.shape, a.stride(), b.stride(), strict=True):
        if size == 1:
            continue
        if dims and dims[-1][1] == size * sa and dims[-1][2] == size * sb:
            dims[-1] = (dims[-1][0] * size, sa, sb)
        else:
            dims.append((size, sa, sb))
    if len(dims) > MAX_DIMS:
        raise NotImplementedError(f"rrelu_with_noise supports up to {MAX_DIMS} non-mergeable dims")
    dims = [(1, 0, 0)] * (MAX_DIMS - len(dims)) + dims
    return [d[0] for d in dims][1:] + [d[1] for d in dims] + [d[2] for d in dims]


def rrelu_with_noise(self, noise, lower=0.125, upper=1 / 3, training=False, generator=None):
    if noise.shape != self.shape:
        raise RuntimeError("rrelu_with_noise: noise must have the shape of self")
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    n = out.numel()
    if n:
        seed = _seed(generator) if training else 0
        _rrelu[(triton.cdiv(n, BLOCK),)](
            self,
            noise,
            out,
            n,
            float(lower),
            float(upper),
            (float(lower) + float(upper)) / 2,
            seed,
            *_joint_layout(self, noise),
            TRAINING=bool(training),
            BLOCK=BLOCK,
        )
    return out
