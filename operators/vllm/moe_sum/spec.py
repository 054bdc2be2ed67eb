"""Sum of the per-expert outputs of each token: vLLM's `moe_sum` custom op (vLLM 0.13),
the last step of a fused mixture-of-experts layer.

    moe_sum(input, output) -> None

For every token t and column c:

    output[t, c] = input[t, 0, c] + input[t, 1, c] + ... + input[t, topk - 1, c]

How the sum is rounded depends on topk, as in vLLM's CUDA op:
- topk = 2, 3 or 4: the sum is accumulated *in the tensor's dtype*, one expert at a time
  in order k = 0, 1, ..., each addition rounded to the dtype (for float16 and bfloat16
  inputs every partial sum is rounded to half precision);
- any other topk: accumulated in float32 and rounded once at the end (torch.sum).

- `input`: float32, float16 or bfloat16, contiguous, shape [num_tokens, topk, hidden_size].
- `output`: contiguous, shape [num_tokens, hidden_size], same dtype; its previous contents
  are garbage. Nothing is returned; `input` is not modified.

Speed baseline: the reference below (vllm is not importable on the GPU host).
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def moe_sum(input: torch.Tensor, output: torch.Tensor) -> None:
    """vllm::moe_sum(Tensor input, Tensor! output) -> ()"""
'''

OUTPUT_ARGS = ("output",)


def _case(name, tag, tokens, topk, hidden, dtype, seed=0):
    return Case(name, tag, dict(tokens=tokens, topk=topk, hidden=hidden, dtype=dtype), seed=seed, reduction=topk)


CASES = [
    _case("smoke-top2-f16", "smoke", 5, 2, 40, "float16"),
    _case("smoke-top3-bf16", "smoke", 3, 3, 33, "bfloat16", seed=1),
    _case("smoke-top8-f32", "smoke", 4, 8, 24, "float32", seed=2),
    _case("mixtral-top2-bf16", "check", 37, 2, 4096, "bfloat16"),
    _case("qwen15-top4-f16", "check", 29, 4, 2048, "float16"),
    _case("deepseek-v2-lite-top6-bf16", "check", 41, 6, 2048, "bfloat16"),
    _case("deepseek-v3-top8-bf16", "check", 17, 8, 7168, "bfloat16"),
    _case("qwen3-top8-f16", "check", 65, 8, 4096, "float16"),
    _case("top1-f32", "check", 10, 1, 1000, "float32"),
    _case("top3-odd-f32", "check", 77, 3, 1111, "float32"),
    _case("mixtral-prefill-bf16", "bench", 8192, 2, 4096, "bfloat16"),
    _case("deepseek-v3-prefill-bf16", "bench", 4096, 8, 7168, "bfloat16"),
    _case("qwen15-decode-f16", "bench", 256, 4, 2048, "float16"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    x = torch.randn(p["tokens"], p["topk"], p["hidden"], generator=gen).to(dtype).to(device)
    out = torch.empty(p["tokens"], p["hidden"], dtype=dtype, device=device)
    return dict(input=x, output=out)


def reference(input, output):
    topk = input.shape[1]
    if topk in (2, 3, 4):
        acc = input[:, 0]
        for k in range(1, topk):
            acc = (acc.float() + input[:, k].float()).to(input.dtype)  # one rounding per addition
        output.copy_(acc)
    else:
        output.copy_(input.float().sum(dim=1).to(input.dtype))
