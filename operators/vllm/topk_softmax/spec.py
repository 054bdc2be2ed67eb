"""Softmax router of a mixture-of-experts layer: vLLM's `topk_softmax` custom op
(vLLM 0.13, `_moe_C::topk_softmax`).

    topk_softmax(topk_weights, topk_indices, token_expert_indices, gating_output, renormalize) -> None

For every token t (a row of `gating_output`, num_experts router logits):

1. probs = softmax(gating_output[t]) computed in float32 (logits converted to float32,
   max subtracted, exponentials, divided by their sum);
2. the topk = topk_weights.shape[-1] largest probabilities are selected in descending
   order: position j holds the j-th largest (ties: vLLM takes the lower expert index; any
   order among exactly equal probabilities is accepted);
3. topk_indices[t, j] = that expert's index, topk_weights[t, j] = its probability;
   with renormalize=True every weight of the row is then divided by the sum of the row's
   topk selected probabilities (by 1 if that sum is not positive);
4. token_expert_indices[t, j] = j * num_tokens + t (the slot's position when the slots
   are listed k-major, used by the MoE permute kernels).

- `gating_output`: float32, float16 or bfloat16, contiguous, [num_tokens, num_experts].
  Not modified.
- `topk_weights`: float32, [num_tokens, topk]; `topk_indices`: int32 or int64,
  [num_tokens, topk]; `token_expert_indices`: int32, [num_tokens, topk]. All three are
  outputs (their previous contents are garbage); nothing is returned. 1 <= topk <= num_experts.

What is checked: token_expert_indices exactly; in each row the chosen experts are
distinct, and the j-th one's probability (softmax of the row in float64) equals the j-th
largest probability within a relative 1e-5 (so ties may be broken either way); the
weights are compared, with the published float32 tolerance (reduction = num_experts),
to the probabilities, renormalised as asked, of the experts the candidate chose.

Speed baseline: the reference below (vllm is not importable on the GPU host).
"""

import torch

from kgb.operators import Case, published_tolerance
from kgb.vllm.moe import compare_close, compare_exact, compare_topk_choice

VERSION = 1

SIGNATURES = '''
def topk_softmax(
    topk_weights: torch.Tensor,
    topk_indices: torch.Tensor,
    token_expert_indices: torch.Tensor,
    gating_output: torch.Tensor,
    renormalize: bool,
) -> None:
    """vllm::topk_softmax(Tensor! topk_weights, Tensor! topk_indices, Tensor! token_expert_indices,
    Tensor gating_output, bool renormalize) -> ()"""
'''

OUTPUT_ARGS = ("topk_weights", "topk_indices", "token_expert_indices")


def _case(name, tag, tokens, experts, topk, renorm, dtype="float32", ids="int32", seed=0):
    params = dict(tokens=tokens, experts=experts, topk=topk, renorm=renorm, dtype=dtype, ids=ids)
    return Case(name, tag, params, seed=seed, reduction=experts)


CASES = [
    _case("smoke-mixtral", "smoke", 5, 8, 2, True),
    _case("smoke-60-bf16", "smoke", 4, 60, 4, False, dtype="bfloat16", seed=1),
    _case("mixtral-top2", "check", 77, 8, 2, True),
    _case("qwen15-moe-60-top4", "check", 33, 60, 4, False),
    _case("deepseek-v2-lite-64-top6-bf16", "check", 41, 64, 6, False, dtype="bfloat16"),
    _case("qwen3-moe-128-top8", "check", 129, 128, 8, True, ids="int64"),
    _case("olmoe-64-top8-f16", "check", 19, 64, 8, False, dtype="float16"),
    _case("dbrx-16-top4-bf16", "check", 50, 16, 4, True, dtype="bfloat16"),
    _case("many-experts-384-top8", "check", 9, 384, 8, True),
    _case("one-token-top1", "check", 1, 256, 1, False),
    _case("mixtral-prefill", "bench", 16384, 8, 2, True),
    _case("qwen3-moe-prefill-bf16", "bench", 8192, 128, 8, True, dtype="bfloat16"),
    _case("qwen15-decode", "bench", 256, 60, 4, False),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    t, e, k = p["tokens"], p["experts"], p["topk"]
    logits = (torch.randn(t, e, generator=gen) * 2).to(getattr(torch, p["dtype"]))
    return dict(
        topk_weights=torch.empty(t, k, dtype=torch.float32, device=device),
        topk_indices=torch.empty(t, k, dtype=getattr(torch, p["ids"]), device=device),
        token_expert_indices=torch.empty(t, k, dtype=torch.int32, device=device),
        gating_output=logits.to(device),
        renormalize=p["renorm"],
    )


def reference(topk_weights, topk_indices, token_expert_indices, gating_output, renormalize):
    probs = torch.softmax(gating_output.float(), dim=-1)
    k = topk_weights.shape[-1]
    order = torch.sort(probs, dim=-1, descending=True, stable=True)  # ties: lower expert first
    weights, ids = order.values[:, :k], order.indices[:, :k]
    if renormalize:
        total = weights.sum(dim=-1, keepdim=True)
        weights = weights / torch.where(total > 0, total, torch.ones_like(total))
    topk_weights.copy_(weights)
    topk_indices.copy_(ids)
    t = gating_output.shape[0]
    slots = torch.arange(k, device=ids.device)[None, :] * t + torch.arange(t, device=ids.device)[:, None]
    token_expert_indices.copy_(slots)


def compare(actual, expected, case, inputs):
    message = compare_exact(actual["token_expert_indices"], expected["token_expert_indices"], "token_expert_indices")
    if message:
        return message
    probs = torch.softmax(inputs["gating_output"].double(), dim=-1)
    message = compare_topk_choice(actual["topk_indices"], expected["topk_indices"], probs, 1e-5, "topk_indices")
    if message:
        return message
    chosen = probs.gather(-1, actual["topk_indices"].long())
    if inputs["renormalize"]:
        chosen = chosen / chosen.sum(dim=-1, keepdim=True)
    want = chosen.float()
    tol = published_tolerance("float32", case.reduction, float(want.double().pow(2).mean().sqrt()))
    return compare_close(actual["topk_weights"], want, tol.rtol, tol.atol, "topk_weights")
