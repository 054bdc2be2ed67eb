import torch
import triton
import triton.language as tl


@triton.jit
def _repetition_penalty_kernel(logits_ptr, prompt_ptr, output_ptr, pen_ptr, vocab, BLOCK: tl.constexpr):
    seq = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    ok = cols < vocab
    offs = seq.to(tl.int64) * vocab + cols
    seen = (tl.load(prompt_ptr + offs, mask=ok, other=0) != 0) | (tl.load(output_ptr + offs, mask=ok, other=0) != 0)
    x = tl.load(logits_ptr + offs, mask=ok & seen, other=0.0)
    p = tl.load(pen_ptr + seq).to(tl.float32)
    xf = x.to(tl.float32)
    y = tl.where(xf > 0, tl.math.div_rn(xf, p), xf * p)  # the GPU's plain '/' is not correctly rounded
    tl.store(logits_ptr + offs, y.to(logits_ptr.dtype.element_ty), mask=ok & seen)


def apply_repetition_penalties_cuda(
    logits: torch.Tensor, prompt_mask: torch.Tensor, output_mask: torch.Tensor, repetition_penalties: torch.Tensor
) -> None:
    num_seqs, vocab = logits.shape
    if num_seqs == 0 or vocab == 0:
        return
    block = min(triton.next_power_of_2(vocab), 4096)
    grid = (num_seqs, triton.cdiv(vocab, block))
    # bool tensors are read as bytes
    _repetition_penalty_kernel[grid](
        logits, prompt_mask.view(torch.uint8), output_mask.view(torch.uint8), repetition_penalties, vocab, BLOCK=block
    )
