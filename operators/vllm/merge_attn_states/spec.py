"""Merge two partial attention results computed over disjoint sets of keys (a cached
prefix and a new suffix, or two KV splits) using their log-sum-exps: vLLM's
`merge_attn_states` custom op (vLLM 0.13; section 2.2 of arXiv:2501.01005).

    merge_attn_states(output, output_lse, prefix_output, prefix_lse, suffix_output, suffix_lse) -> None

For every token t and head h, with p = prefix_lse[h, t] and s = suffix_lse[h, t] (float32),
where an infinite value of either sign counts as -inf (no keys):

    m = max(p, s)
    if m == -inf:                        # neither part saw a key
        output[t, h, :] <- prefix_output[t, h, :]   (copied unchanged)
        output_lse[h, t] <- -inf
    else:
        a = exp(p - m); b = exp(s - m)
        output[t, h, :] <- round(prefix_output[t, h, :] * (a / (a + b)) + suffix_output[t, h, :] * (b / (a + b)))
        output_lse[h, t] <- log(a + b) + m

computed in float32 from the float32 conversions of the partial outputs and rounded once
to the output dtype.

- `output`, `prefix_output`, `suffix_output`: contiguous [num_tokens, num_heads,
  head_size], one dtype (float16, bfloat16 or float32); head_size is a multiple of 8.
  `output` is written entirely (previous contents are garbage).
- `output_lse`: None, or a contiguous float32 [num_heads, num_tokens] written entirely.
- `prefix_lse`, `suffix_lse`: contiguous float32 [num_heads, num_tokens] (note: heads
  first); may hold -inf and +inf.
Inputs are not modified.
"""

import torch

from kgb.operators import Case

VERSION = 1
# Speed baseline: the reference below. vLLM's own kernel would be the fairer baseline, but
# vllm is not importable on the GPU host, so timings compare against PyTorch.

SIGNATURES = '''
def merge_attn_states(
    output: torch.Tensor,
    output_lse: torch.Tensor | None,
    prefix_output: torch.Tensor,
    prefix_lse: torch.Tensor,
    suffix_output: torch.Tensor,
    suffix_lse: torch.Tensor,
) -> None:
    """vllm::merge_attn_states(Tensor! output, Tensor!? output_lse, Tensor prefix_output,
    Tensor prefix_lse, Tensor suffix_output, Tensor suffix_lse) -> ()"""
'''

OUTPUT_ARGS = ("output", "output_lse")


def _case(name, tag, tokens, heads, head_size, dtype, with_lse=True, infinities=True, seed=0):
    params = dict(tokens=tokens, heads=heads, head_size=head_size, dtype=dtype, with_lse=with_lse,
                  infinities=infinities)
    return Case(name, tag, params, seed=seed, reduction=2)


CASES = [
    _case("smoke-bf16", "smoke", 9, 3, 64, "bfloat16"),
    _case("smoke-f32-no-lse", "smoke", 5, 2, 40, "float32", with_lse=False, seed=1),
    _case("llama3-8b-f16", "check", 77, 32, 128, "float16"),
    _case("llama3-70b-tp8-bf16", "check", 129, 8, 128, "bfloat16"),
    _case("deepseek-mla-bf16", "check", 65, 16, 128, "bfloat16", with_lse=False),
    _case("deepseek-mla-v-512-f16", "check", 17, 16, 512, "float16"),
    _case("qwen2-f32-finite", "check", 33, 28, 128, "float32", infinities=False),
    _case("hd72-bf16", "check", 40, 12, 72, "bfloat16"),
    _case("llama3-8b-prefill-bench", "bench", 8192, 32, 128, "bfloat16"),
    _case("deepseek-mla-prefill-bench", "bench", 8192, 128, 128, "bfloat16"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    t, h, d = p["tokens"], p["heads"], p["head_size"]
    prefix = torch.randn(t, h, d, generator=gen).to(dtype).to(device)
    suffix = torch.randn(t, h, d, generator=gen).to(dtype).to(device)
    prefix_lse = torch.randn(h, t, generator=gen) * 3 + 5
    suffix_lse = torch.randn(h, t, generator=gen) * 3 + 5
    if p["infinities"]:  # empty prefixes, empty suffixes, both empty, and vLLM's +inf
        pick = torch.rand(h, t, generator=gen)
        prefix_lse[pick < 0.1] = float("-inf")
        suffix_lse[(pick > 0.05) & (pick < 0.15)] = float("-inf")
        prefix_lse[pick > 0.97] = float("inf")
    out_lse = torch.empty(h, t, dtype=torch.float32, device=device) if p["with_lse"] else None
    return dict(output=torch.empty(t, h, d, dtype=dtype, device=device), output_lse=out_lse,
                prefix_output=prefix, prefix_lse=prefix_lse.to(device), suffix_output=suffix,
                suffix_lse=suffix_lse.to(device))


def reference(output, output_lse, prefix_output, prefix_lse, suffix_output, suffix_lse):
    neg_inf = torch.full_like(prefix_lse, float("-inf"))
    p = torch.where(torch.isinf(prefix_lse), neg_inf, prefix_lse).t()  # [tokens, heads]
    s = torch.where(torch.isinf(suffix_lse), neg_inf, suffix_lse).t()
    m = torch.maximum(p, s)
    empty = torch.isinf(m)
    m_safe = torch.where(empty, torch.zeros_like(m), m)
    a, b = torch.exp(p - m_safe), torch.exp(s - m_safe)
    total = a + b
    merged = prefix_output.float() * (a / total)[..., None] + suffix_output.float() * (b / total)[..., None]
    output.copy_(torch.where(empty[..., None], prefix_output, merged.to(output.dtype)))
    if output_lse is not None:
        output_lse.copy_(torch.where(empty, m, torch.log(total) + m).t())
