"""Per-LoRA token-to-expert layout for fused MoE LoRA kernels: vLLM's
`moe_lora_align_block_size` custom op (vLLM 0.13, `_moe_C::moe_lora_align_block_size`).
It runs moe_align_block_size once per active LoRA adapter, each time over only the
tokens that use that adapter, and writes each result into the adapter's own row.

    moe_lora_align_block_size(topk_ids, token_lora_mapping, num_experts, block_size, max_loras,
                              max_num_tokens_padded, max_num_m_blocks, sorted_token_ids,
                              experts_ids, num_tokens_post_pad, adapter_enabled, lora_ids,
                              expert_map=None) -> None

View sorted_token_ids as [max_loras, max_num_tokens_padded] and experts_ids as
[max_loras, max_num_m_blocks]. For idx = 0 .. max_loras - 1, let l = lora_ids[idx]. The
adapter l is processed when l != -1 and adapter_enabled[l] != 0; rows of adapters that are
not processed (and entries of num_tokens_post_pad not indexed by a processed l) are left
exactly as they were. For a processed l, with numel = topk_ids.numel() and slot i = token
i // topk's (i % topk)-th expert as in moe_align_block_size:

- a slot is kept when token_lora_mapping[i // topk] == l and its expert (after expert_map,
  if given) is not -1;
- count[e], padded[e] (multiple of block_size), start[e] and total are computed over the
  kept slots as in moe_align_block_size;
- row l of sorted_token_ids: all max_num_tokens_padded elements set to numel, then
  positions start[e] .. start[e] + count[e] - 1 hold the kept slot indices of expert e, in
  any order;
- row l of experts_ids: block b < total / block_size gets the expert whose segment holds
  position b * block_size; blocks total / block_size .. max_num_m_blocks - 1 get -1;
- num_tokens_post_pad[l] = total.

Arguments:
- `topk_ids`: int32, [num_tokens, topk], distinct experts per token in [0, num_experts).
- `token_lora_mapping`: int32 [num_tokens], each token's adapter id or -1 (no adapter).
- `num_experts`, `block_size`, `max_loras`: Python ints; num_experts <= 1000.
- `max_num_tokens_padded` = numel + num_experts * (block_size - 1) (as vLLM sizes it) and
  `max_num_m_blocks` = cdiv(max_num_tokens_padded, block_size): the row lengths.
- `sorted_token_ids`: int32 [max_loras * max_num_tokens_padded]; `experts_ids`: int32
  [max_loras * max_num_m_blocks]; `num_tokens_post_pad`: int32 [max_loras]. Updated in
  place (rows of adapters not processed keep their contents); nothing is returned.
- `adapter_enabled`: int32 [max_loras + 1]; `lora_ids`: int32 [max_loras + 1], the active
  adapter ids padded with -1 (only the first max_loras entries are read).
- `expert_map`: None or int32 [num_experts] (global expert -> local index or -1).
Inputs other than the three outputs are not modified.

What is checked: num_tokens_post_pad and experts_ids exactly; sorted_token_ids exactly in
the rows not processed, at every padding position and past each row's total; inside each
expert's segment of a processed row, the first count[e] positions must hold exactly the
expected slot indices in any order.

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
def moe_lora_align_block_size(
    topk_ids: torch.Tensor,
    token_lora_mapping: torch.Tensor,
    num_experts: int,
    block_size: int,
    max_loras: int,
    max_num_tokens_padded: int,
    max_num_m_blocks: int,
    sorted_token_ids: torch.Tensor,
    experts_ids: torch.Tensor,
    num_tokens_post_pad: torch.Tensor,
    adapter_enabled: torch.Tensor,
    lora_ids: torch.Tensor,
    expert_map: torch.Tensor | None = None,
) -> None:
    """vllm::moe_lora_align_block_size(Tensor topk_ids, Tensor token_lora_mapping, int num_experts, int block_size,
    int max_loras, int max_num_tokens_padded, int max_num_m_blocks, Tensor! sorted_token_ids, Tensor! experts_ids,
    Tensor! num_tokens_post_pad, Tensor adapter_enabled, Tensor lora_ids, Tensor? maybe_expert_map) -> ()"""
'''

INOUT_ARGS = ("sorted_token_ids", "experts_ids", "num_tokens_post_pad")


def _case(name, tag, tokens, topk, experts, block, max_loras, active, disabled=(), shard=None, seed=0):
    """active: the adapter ids listed in lora_ids; disabled: adapters whose enabled flag is 0."""
    params = dict(tokens=tokens, topk=topk, experts=experts, block=block, max_loras=max_loras,
                  active=active, disabled=disabled, shard=shard)
    return Case(name, tag, params, seed=seed)


CASES = [
    _case("smoke-two-loras", "smoke", 6, 2, 8, 4, 3, (0, 2)),
    _case("smoke-disabled-ep", "smoke", 5, 3, 16, 4, 4, (3, 1, 0), disabled=(1,), shard=(4, 8), seed=1),
    _case("mixtral-4-loras", "check", 77, 2, 8, 16, 4, (0, 1, 2, 3)),
    _case("qwen3-moe-8-loras", "check", 65, 8, 128, 16, 8, (5, 0, 7, 2)),
    _case("deepseek-v2-lite-one-lora", "check", 33, 6, 64, 32, 2, (1,)),
    _case("olmoe-disabled", "check", 40, 8, 64, 64, 4, (0, 1, 3), disabled=(3,)),
    _case("ep-shard-loras", "check", 50, 8, 256, 16, 4, (2, 0), shard=(128, 64)),
    _case("no-active", "check", 9, 2, 8, 16, 2, ()),
    _case("qwen3-prefill-4-loras", "bench", 4096, 8, 128, 64, 4, (0, 1, 2, 3)),
    _case("mixtral-decode-8-loras", "bench", 256, 2, 8, 16, 8, (0, 1, 2, 3, 4, 5, 6, 7)),
    _case("olmoe-prefill-2-loras", "bench", 8192, 8, 64, 64, 2, (0, 1)),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    e, bs, loras = p["experts"], p["block"], p["max_loras"]
    topk_ids = routed_topk_ids(p["tokens"], p["topk"], e, gen)
    numel = topk_ids.numel()
    max_padded = numel + e * (bs - 1)
    max_blocks = -(-max_padded // bs)
    # tokens use the listed adapters, another (unlisted) one, or none (-1)
    choices = torch.tensor([*p["active"], -1, loras - 1], dtype=torch.int32)
    mapping = choices[torch.randint(0, len(choices), (p["tokens"],), generator=gen)]
    lora_ids = torch.full((loras + 1,), -1, dtype=torch.int32)
    lora_ids[: len(p["active"])] = torch.tensor(p["active"], dtype=torch.int32)
    enabled = torch.ones(loras + 1, dtype=torch.int32)
    enabled[list(p["disabled"])] = 0

    def garbage(n):  # rows of adapters not processed must keep these values
        return torch.randint(-1000, 1000, (n,), generator=gen, dtype=torch.int32).to(device)

    return dict(
        topk_ids=topk_ids.to(device),
        token_lora_mapping=mapping.to(device),
        num_experts=e,
        block_size=bs,
        max_loras=loras,
        max_num_tokens_padded=max_padded,
        max_num_m_blocks=max_blocks,
        sorted_token_ids=garbage(loras * max_padded),
        experts_ids=garbage(loras * max_blocks),
        num_tokens_post_pad=garbage(loras),
        adapter_enabled=enabled.to(device),
        lora_ids=lora_ids.to(device),
        expert_map=shard_expert_map(e, *p["shard"]).to(device) if p["shard"] else None,
    )


def _processed(lora_ids, adapter_enabled, max_loras):
    """bool [max_loras]: which adapter ids are processed (no data-dependent shapes)."""
    listed = lora_ids[:max_loras].long()
    valid = listed >= 0
    safe = torch.where(valid, listed, 0)
    on = valid & (adapter_enabled.long()[safe] != 0)
    hit = torch.zeros(max_loras + 1, dtype=torch.bool, device=lora_ids.device)
    hit.scatter_(0, torch.where(on, safe, max_loras), True)
    return hit[:max_loras]


def _layout(inputs_or_args, lora):
    a = inputs_or_args
    mask = a["token_lora_mapping"] == lora
    return segment_layout(a["topk_ids"], a["num_experts"], a["block_size"], a["expert_map"], token_mask=mask)


def reference(topk_ids, token_lora_mapping, num_experts, block_size, max_loras, max_num_tokens_padded,
              max_num_m_blocks, sorted_token_ids, experts_ids, num_tokens_post_pad, adapter_enabled, lora_ids,
              expert_map=None):
    args = dict(topk_ids=topk_ids, token_lora_mapping=token_lora_mapping, num_experts=num_experts,
                block_size=block_size, expert_map=expert_map)
    processed = _processed(lora_ids, adapter_enabled, max_loras)
    sorted_rows = sorted_token_ids.view(max_loras, max_num_tokens_padded)
    expert_rows = experts_ids.view(max_loras, max_num_m_blocks)
    for lora in range(max_loras):
        layout = _layout(args, lora)
        row, blocks = torch.empty_like(sorted_rows[lora]), torch.empty_like(expert_rows[lora])
        fill_sorted_ids(row, layout, topk_ids.numel())
        fill_expert_ids(blocks, layout, block_size, inactive=-1)
        keep = processed[lora]
        sorted_rows[lora].copy_(torch.where(keep, row, sorted_rows[lora]))
        expert_rows[lora].copy_(torch.where(keep, blocks, expert_rows[lora]))
        total = layout.total.to(num_tokens_post_pad.dtype)
        num_tokens_post_pad[lora].copy_(torch.where(keep, total, num_tokens_post_pad[lora]))


def compare(actual, expected, case, inputs):
    for name in ("num_tokens_post_pad", "experts_ids"):
        message = compare_exact(actual[name], expected[name], name)
        if message:
            return message
    loras, width = inputs["max_loras"], inputs["max_num_tokens_padded"]
    processed = _processed(inputs["lora_ids"], inputs["adapter_enabled"], loras)
    got = actual["sorted_token_ids"].view(loras, width)
    want = expected["sorted_token_ids"].view(loras, width)
    for lora in range(loras):
        what = f"sorted_token_ids row {lora}"
        if bool(processed[lora]):
            message = compare_sorted_ids(got[lora], want[lora], _layout(inputs, lora), what)
        else:
            message = compare_exact(got[lora], want[lora], what + " (adapter not processed: must be untouched)")
        if message:
            return message
    return None
