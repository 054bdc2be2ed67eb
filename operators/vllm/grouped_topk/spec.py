"""Group-limited top-k router of DeepSeek-V3-style mixture-of-experts layers: vLLM's
`grouped_topk` custom op (vLLM 0.13, `_moe_C::grouped_topk`).

    grouped_topk(scores, n_group, topk_group, topk, renormalize, routed_scaling_factor,
                 bias, scoring_func) -> (topk_values, topk_indices)

The experts are split into n_group equal groups of consecutive experts. For every token
(a row of `scores`, num_experts values), with T the dtype of `scores` and every step
rounded to T where it says so:

1. s = sigmoid(scores) rounded to T if scoring_func == 1; s = scores if scoring_func == 0
   (the scores are already probabilities, e.g. a softmax computed by the caller);
2. b = s + bias, added in float32 and rounded to T (the "selection score");
3. each group's score is the sum of its two largest b values (a value present twice
   counts twice), rounded to T;
4. the topk_group groups with the largest group scores are kept (ties: lower group index);
5. among the experts of the kept groups, the topk with the largest b are chosen, in
   descending order of b (ties: lower expert index; any order among equal b is accepted);
6. their weights use s, not b: w_j = s[chosen_j] as float32, then
   w_j = w_j / (1e-20 + sum of the topk chosen s) * routed_scaling_factor if renormalize,
   else w_j = w_j * routed_scaling_factor (float32 arithmetic).

Returns topk_values (float32, [num_tokens, topk]) and topk_indices (int32,
[num_tokens, topk]), both new tensors; nothing else is modified.

- `scores`: float32, float16 or bfloat16, contiguous, [num_tokens, num_experts], finite.
- `bias`: [num_experts], the dtype of `scores` (the caller converts DeepSeek's
  e_score_correction_bias to it).
- n_group divides num_experts, groups hold at least 2 experts, n_group <= 32,
  topk_group <= n_group, topk <= 32 and topk <= topk_group * (num_experts / n_group).

What is checked: in every row the chosen experts are distinct and the j-th one's b equals
the j-th expected b within 2 units in the last place of T (rounding of the sigmoid may
differ by one unit between implementations; near-ties may fall either way); the values
are compared, within a relative 2 units in the last place of T (float32: 1e-5), with the
weights recomputed from the reference's s for the experts the candidate chose.

Speed baseline: the reference below (vllm is not importable on the GPU host).
"""

import torch

from kgb.operators import Case
from kgb.vllm.moe import compare_close, compare_topk_choice

VERSION = 1

SIGNATURES = '''
def grouped_topk(
    scores: torch.Tensor,
    n_group: int,
    topk_group: int,
    topk: int,
    renormalize: bool,
    routed_scaling_factor: float,
    bias: torch.Tensor,
    scoring_func: int = 0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """vllm::grouped_topk(Tensor scores, int n_group, int topk_group, int topk, bool renormalize,
    float routed_scaling_factor, Tensor bias, int scoring_func) -> (Tensor, Tensor)"""
'''

# relative spacing of T's representable values: ties within 2 units are accepted
_ULP = {torch.float32: 1.2e-7, torch.float16: 9.8e-4, torch.bfloat16: 7.9e-3}


def _case(name, tag, tokens, experts, n_group, topk_group, topk, renorm, factor, func, dtype, seed=0):
    params = dict(tokens=tokens, experts=experts, n_group=n_group, topk_group=topk_group, topk=topk,
                  renorm=renorm, factor=factor, func=func, dtype=dtype)
    return Case(name, tag, params, seed=seed, reduction=experts)


CASES = [
    _case("smoke-sigmoid-f32", "smoke", 5, 32, 4, 2, 4, True, 2.5, 1, "float32"),
    _case("smoke-softmaxed-bf16", "smoke", 3, 24, 4, 3, 5, False, 1.0, 0, "bfloat16", seed=1),
    # DeepSeek-V3 / R1: 256 experts in 8 groups, 4 groups kept, top-8, sigmoid, scale 2.5
    _case("deepseek-v3-bf16", "check", 67, 256, 8, 4, 8, True, 2.5, 1, "bfloat16"),
    _case("deepseek-v3-f32", "check", 33, 256, 8, 4, 8, True, 2.5, 1, "float32"),
    # DeepSeek-V2: 160 experts, 8 groups, 3 kept, top-6, softmax scores, scale 16
    _case("deepseek-v2-f16", "check", 45, 160, 8, 3, 6, False, 16.0, 0, "float16"),
    # Kimi-K2-like: 384 experts in one group, top-8
    _case("kimi-k2-one-group-bf16", "check", 21, 384, 1, 1, 8, True, 2.827, 1, "bfloat16"),
    _case("ling-like-16-groups-f32", "check", 17, 256, 16, 4, 8, True, 1.0, 1, "float32"),
    _case("small-groups-f16", "check", 9, 64, 32, 8, 16, False, 1.0, 1, "float16"),
    _case("deepseek-v3-prefill-bf16", "bench", 8192, 256, 8, 4, 8, True, 2.5, 1, "bfloat16"),
    _case("deepseek-v3-decode-f32", "bench", 256, 256, 8, 4, 8, True, 2.5, 1, "float32"),
    _case("deepseek-v2-prefill-f16", "bench", 4096, 160, 8, 3, 6, False, 16.0, 0, "float16"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    t, e = p["tokens"], p["experts"]
    logits = torch.randn(t, e, generator=gen) * 2
    scores = logits if p["func"] == 1 else torch.softmax(logits, dim=-1)
    bias = torch.randn(e, generator=gen) * (0.05 if p["func"] == 1 else 0.002)
    return dict(
        scores=scores.to(dtype).to(device),
        n_group=p["n_group"],
        topk_group=p["topk_group"],
        topk=p["topk"],
        renormalize=p["renorm"],
        routed_scaling_factor=p["factor"],
        bias=bias.to(dtype).to(device),
        scoring_func=p["func"],
    )


def _selection_scores(scores, bias, scoring_func):
    """(s, b) of the task text, both in the dtype of `scores`."""
    s = torch.sigmoid(scores.float()).to(scores.dtype) if scoring_func == 1 else scores
    return s, (s.float() + bias.float()).to(scores.dtype)


def _weights(s, ids, renormalize, factor):
    w = s.gather(-1, ids.long()).float()
    if renormalize:
        return w / (w.sum(dim=-1, keepdim=True) + 1e-20) * factor
    return w * factor


def reference(scores, n_group, topk_group, topk, renormalize, routed_scaling_factor, bias, scoring_func=0):
    t, e = scores.shape
    s, b = _selection_scores(scores, bias, scoring_func)
    per_group = b.view(t, n_group, e // n_group).float()
    top2 = per_group.topk(2, dim=-1).values
    group_score = (top2[..., 0] + top2[..., 1]).to(scores.dtype).float()
    kept_groups = torch.sort(group_score, dim=-1, descending=True, stable=True).indices[:, :topk_group]
    kept = torch.zeros(t, n_group, dtype=torch.bool, device=scores.device)
    kept.scatter_(1, kept_groups, True)
    kept = kept.repeat_interleave(e // n_group, dim=1)
    candidates = torch.where(kept, b.float(), float("-inf"))
    ids = torch.sort(candidates, dim=-1, descending=True, stable=True).indices[:, :topk].to(torch.int32)
    return _weights(s, ids, renormalize, routed_scaling_factor), ids


def compare(actual, expected, case, inputs):
    if not isinstance(actual["return"], tuple | list) or len(actual["return"]) != 2:
        return "expected a (topk_values, topk_indices) pair"
    values, ids = actual["return"]
    want_values, want_ids = expected["return"]
    scores = inputs["scores"]
    s, b = _selection_scores(scores, inputs["bias"], inputs["scoring_func"])
    ulp = _ULP[scores.dtype]
    message = compare_topk_choice(ids, want_ids, b.double(), 2 * ulp, "topk_indices")
    if message:
        return message
    want = _weights(s, ids, inputs["renormalize"], inputs["routed_scaling_factor"])
    rtol = max(2 * ulp, 1e-5)
    return compare_close(values, want, rtol, 1e-6 * float(want.abs().max()), "topk_values")
