import torch
import triton
import triton.language as tl


@triton.jit
def _preprocess_kernel(
    w_ptr, z_ptr, out_ptr, numel, cols, group, HAS_ZEROS: tl.constexpr, BLOCK: tl.constexpr,
):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < numel
    w = tl.load(w_ptr + offs, mask=ok, other=0).to(tl.uint32, bitcast=True)
    if HAS_ZEROS:
        # word (k, c) takes its zeros from word (k // group, c)
        zoffs = (offs // cols) // group * cols + offs % cols
        z = tl.load(z_ptr + zoffs, mask=ok, other=0).to(tl.uint32, bitcast=True)
    res = tl.zeros([BLOCK], tl.uint32)
    for i in tl.static_range(8):
        v = (w >> (4 * i)) & 15
        if HAS_ZEROS:
            zi = (z >> (4 * i)) & 15
        else:
            zi = tl.full([BLOCK], 8, tl.uint32)
        r = tl.where(v >= zi, v - zi, 15 - v)
        res = res | (r << (4 * i))
    tl.store(out_ptr + offs, res.to(tl.int32, bitcast=True), mask=ok)


def marlin_int4_fp8_preprocess(
    qweight: torch.Tensor, qzeros_or_none: torch.Tensor | None = None, inplace: bool = False
) -> torch.Tensor:
    out = qweight if inplace else torch.empty_like(qweight)
    numel = qweight.numel()
    if numel == 0:
        return out
    has_zeros = qzeros_or_none is not None
    cols = qweight.shape[-1]
    group = qweight.shape[0] // qzeros_or_none.shape[0] if has_zeros else 1
    block = 1024
    _preprocess_kernel[(triton.cdiv(numel, block),)](
        qweight, qzeros_or_none if has_zeros else qweight, out, numel, cols, group,
        HAS_ZEROS=has_zeros, BLOCK=block,
    )
    return out
