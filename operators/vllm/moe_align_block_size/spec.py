"""Token-to-expert layout for a block-tiled fused MoE GEMM: vLLM's `moe_align_block_size`
custom op (vLLM 0.13, `_moe_C::moe_align_block_size`).

    moe_align_block_size(topk_ids, num_experts, block_size, sorted_token_ids, experts_ids,
                         num_tokens_post_pad, expert_map=None) -> None

`topk_ids` [num_tokens, topk] lists each token's experts. Flatten it: slot i (0 <= i <
numel = num_tokens * topk) is token i // topk's (i % topk)-th choice and goes to expert
e_i = topk_ids.flatten()[i]. With `expert_map` (expert parallelism), e_i is replaced by
expert_map[e_i], and slots whose mapped expert is -1 are dropped (not counted, not
placed).

1. count[e] = number of kept slots of expert e, for e in 0..num_experts-1;
   padded[e] = count[e] rounded up to a multiple of block_size (0 stays 0);
   start[e] = padded[0] + ... + padded[e-1]; total = sum of all padded[e].
2. sorted_token_ids: every element is first set to numel (the "no token" sentinel); then
   positions start[e] .. start[e] + count[e] - 1 receive the slot indices i of expert e,
   each exactly once. Their order inside the segment is free (vLLM fills it with atomics;
   the reference uses ascending i); the segment's remaining padded[e] - count[e]
   positions keep the sentinel, and so does everything from `total` on.
3. experts_ids[b] for block b (the block_size positions starting at b * block_size) is the
   expert whose segment contains position b * block_size, for b < total / block_size;
   every later block up to cdiv(len(sorted_token_ids), block_size) gets 0.
4. num_tokens_post_pad[0] = total.

Arguments:
- `topk_ids`: int32 or int64, contiguous, [num_tokens, topk]; the experts of a token are
  distinct and in [0, num_experts). Not modified.
- `num_experts`: the number of (global) experts, at most 1000; `block_size`: the GEMM's
  BLOCK_M (16, 32, 64 or 128).
- `sorted_token_ids`: int32 [max_num_tokens_padded] where, as vLLM sizes it,
  max_num_tokens_padded = numel + num_experts * (block_size - 1), or min(that,
  numel * block_size) when numel < num_experts, sometimes rounded up to a multiple of
  block_size; always >= total.
- `experts_ids`: int32 [cdiv(max_num_tokens_padded, block_size)].
- `num_tokens_post_pad`: int32 [1].
- `expert_map`: None, or int32 [num_experts] mapping each global expert to a local index
  (0 .. local experts - 1) or to -1.
The three outputs arrive with garbage contents and are fully written; nothing is returned.

What is checked: experts_ids and num_tokens_post_pad exactly; sorted_token_ids exactly at
every padding position and past `total`, and, inside each expert's segment, the first
count[e] positions must hold exactly the expected slot indices in any order.

Speed baseline: the reference below (vllm is not importable on the GPU host).
"""

import torch

from kgb.operators import Case
from kgb.vllm.moe import (
    compare_exact,
    compare_sorted_ids,
    fill_expert_ids,
    fill_sorted_ids,
    routed_topk_ids,
    segment_layout,
    shard_expert_map,
)

VERSION = 1

SIGNATURES = '''
def moe_align_block_size(
    topk_ids: torch.Tensor,
    num_experts: int,
    block_size: int,
    sorted_token_ids: torch.Tensor,
    experts_ids: torch.Tensor,
    num_tokens_post_pad: torch.Tensor,
    expert_map: torch.Tensor | None = None,
) -> None:
    """vllm::moe_align_block_size(Tensor topk_ids, int num_experts, int block_size, Tensor! sorted_token_ids,
    Tensor! experts_ids, Tensor! num_tokens_post_pad, Tensor? maybe_expert_map) -> ()"""
'''

OUTPUT_ARGS = ("sorted_token_ids", "experts_ids", "num_tokens_post_pad")


def _case(name, tag, tokens, topk, experts, block, ids="int32", shard=None, pad_to_block=False, hot=0, seed=0):
    """shard=(first, local): expert parallelism with that slice of the experts local."""
    params = dict(tokens=tokens, topk=topk, experts=experts, block=block, ids=ids, shard=shard,
                  pad_to_block=pad_to_block, hot=hot)
    return Case(name, tag, params, seed=seed)


CASES = [
    _case("smoke-mixtral", "smoke", 5, 2, 8, 4),
    _case("smoke-ep-shard", "smoke", 7, 3, 16, 4, shard=(4, 8), seed=1),
    _case("smoke-few-tokens", "smoke", 1, 4, 16, 8, ids="int64", seed=2),
    _case("mixtral-bs64", "check", 77, 2, 8, 64, hot=2),
    _case("qwen3-moe-bs16", "check", 33, 8, 128, 16),
    _case("deepseek-v3-bs64", "check", 300, 8, 256, 64, hot=8),
    _case("deepseek-v3-ep-bs64", "check", 200, 8, 256, 64, shard=(64, 32)),
    _case("qwen15-int64-padded", "check", 129, 4, 60, 32, ids="int64", pad_to_block=True),
    _case("decode-one-token", "check", 1, 8, 256, 16),
    _case("many-experts-bs128", "check", 513, 6, 1000, 128),
    _case("deepseek-v3-prefill", "bench", 8192, 8, 256, 64, hot=8),
    _case("mixtral-prefill", "bench", 16384, 2, 8, 64),
    _case("qwen3-decode", "bench", 64, 8, 128, 16),
]


def padded_length(numel: int, num_experts: int, block_size: int, pad_to_block: bool) -> int:
    """vLLM's max_num_tokens_padded."""
    n = numel + num_experts * (block_size - 1)
    if pad_to_block:
        n = -(-n // block_size) * block_size
    if numel < num_experts:
        n = min(numel * block_size, n)
    return n


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    e, bs = p["experts"], p["block"]
    topk_ids = routed_topk_ids(p["tokens"], p["topk"], e, gen, getattr(torch, p["ids"]), p["hot"])
    n = padded_length(topk_ids.numel(), e, bs, p["pad_to_block"])
    expert_map = shard_expert_map(e, *p["shard"]).to(device) if p["shard"] else None
    return dict(
        topk_ids=topk_ids.to(device),
        num_experts=e,
        block_size=bs,
        sorted_token_ids=torch.empty(n, dtype=torch.int32, device=device),
        experts_ids=torch.empty(-(-n // bs), dtype=torch.int32, device=device),
        num_tokens_post_pad=torch.empty(1, dtype=torch.int32, device=device),
        expert_map=expert_map,
    )


def reference(topk_ids, num_experts, block_size, sorted_token_ids, experts_ids, num_tokens_post_pad, expert_map=None):
    layout = segment_layout(topk_ids, num_experts, block_size, expert_map)
    fill_sorted_ids(sorted_token_ids, layout, topk_ids.numel())
    fill_expert_ids(experts_ids, layout, block_size, inactive=0)
    num_tokens_post_pad.copy_(layout.total.reshape(1))


def compare(actual, expected, case, inputs):
    for name in ("num_tokens_post_pad", "experts_ids"):
        message = compare_exact(actual[name], expected[name], name)
        if message:
            return message
    layout = segment_layout(inputs["topk_ids"], inputs["num_experts"], inputs["block_size"], inputs["expert_map"])
    return compare_sorted_ids(actual["sorted_token_ids"], expected["sorted_token_ids"], layout, "sorted_token_ids")
