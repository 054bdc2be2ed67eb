"""Repetition penalty applied to sampling logits in place: vLLM's
`apply_repetition_penalties_cuda` (vLLM 0.13; the Python name of the custom op
`_C::apply_repetition_penalties_`).

    apply_repetition_penalties_cuda(logits, prompt_mask, output_mask, repetition_penalties) -> None

For every sequence s and vocabulary entry v that occurred before, i.e. where
prompt_mask[s, v] or output_mask[s, v] is True, with p = repetition_penalties[s]:

    logits[s, v] <- logits[s, v] / p     if logits[s, v] > 0
    logits[s, v] <- logits[s, v] * p     otherwise (zero and negative logits)

Entries that occurred nowhere keep their value bit for bit. The division and the
multiplication are computed in float32 from the operands and rounded once to the logits'
dtype (correctly rounded: for float32 logits the quotient must be the IEEE quotient, not
an approximate reciprocal). p = 1 leaves a row unchanged; p < 1 (rewarding repetition) is
allowed.

- `logits`: float32, float16 or bfloat16, contiguous, shape [num_seqs, vocab_size];
  updated in place, nothing is returned.
- `prompt_mask`, `output_mask`: bool, contiguous, shape [num_seqs, vocab_size].
- `repetition_penalties`: contiguous, shape [num_seqs], the dtype of `logits`, values > 0.
- The masks and the penalties are not modified.

Speed baseline: the reference below (vllm is not importable on the GPU host).
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def apply_repetition_penalties_cuda(
    logits: torch.Tensor,
    prompt_mask: torch.Tensor,
    output_mask: torch.Tensor,
    repetition_penalties: torch.Tensor,
) -> None:
    """vllm::apply_repetition_penalties_(Tensor! logits, Tensor prompt_mask, Tensor output_mask,
    Tensor repetition_penalties) -> ()"""
'''

INOUT_ARGS = ("logits",)


def _case(name, tag, seqs, vocab, dtype, density=0.05, seed=0):
    return Case(name, tag, dict(seqs=seqs, vocab=vocab, dtype=dtype, density=density), seed=seed)


CASES = [
    _case("smoke-f32", "smoke", 3, 300, "float32", density=0.3),
    _case("smoke-bf16", "smoke", 2, 257, "bfloat16", density=0.5, seed=1),
    _case("llama3-f32", "check", 7, 128256, "float32"),
    _case("qwen2-bf16", "check", 3, 151936, "bfloat16"),
    _case("llama2-f16", "check", 33, 32000, "float16", density=0.2),
    _case("one-seq-f32", "check", 1, 50257, "float32", density=0.9),
    _case("odd-vocab-f32", "check", 5, 1001, "float32", density=0.5),
    _case("llama3-batch-f32", "bench", 256, 128256, "float32"),
    _case("qwen2-batch-bf16", "bench", 64, 151936, "bfloat16"),
    _case("decode-one-f32", "bench", 1, 128256, "float32"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    shape = (p["seqs"], p["vocab"])
    logits = (torch.randn(shape, generator=gen) * 3).to(dtype)
    logits.view(-1)[::97] = 0.0  # zero logits take the multiply branch
    prompt = torch.rand(shape, generator=gen) < p["density"]
    output = torch.rand(shape, generator=gen) < p["density"] / 2
    penalties = 0.5 + 1.5 * torch.rand(p["seqs"], generator=gen)  # 0.5 .. 2.0
    penalties[0] = 1.0 if p["seqs"] > 2 else penalties[0]
    return dict(
        logits=logits.to(device),
        prompt_mask=prompt.to(device),
        output_mask=output.to(device),
        repetition_penalties=penalties.to(dtype).to(device),
    )


def reference(logits, prompt_mask, output_mask, repetition_penalties):
    x = logits.float()
    p = repetition_penalties.float()[:, None]
    penalised = torch.where(x > 0, x / p, x * p).to(logits.dtype)
    logits.copy_(torch.where(prompt_mask | output_mask, penalised, logits))
