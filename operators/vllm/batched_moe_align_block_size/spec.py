"""Block layout for batched (expert-major) MoE activations: vLLM's
`batched_moe_align_block_size` custom op (vLLM 0.13, `_moe_C::batched_moe_align_block_size`).
It feeds the same block-tiled GEMM as moe_align_block_size when tokens were already
dispatched to their experts (DeepEP low-latency, PPLX): activations are laid out
[num_batches, max_tokens_per_batch, hidden], batch b holding expert b's tokens, of which
only the first expert_num_tokens[b] rows are valid.

    batched_moe_align_block_size(max_tokens_per_batch, block_size, expert_num_tokens,
                                 sorted_token_ids, experts_ids, num_tokens_post_pad) -> None

With B = len(expert_num_tokens), n_b = expert_num_tokens[b], padded_b = n_b rounded up to
a multiple of block_size, start_b = padded_0 + ... + padded_(b-1), total = sum of padded_b
and the sentinel S = B * max_tokens_per_batch (a row index that does not exist):

- sorted_token_ids[start_b + i] = b * max_tokens_per_batch + i for i < n_b (the row of
  token i of batch b in the flattened activations); every other element is S (the padding
  of each batch's segment and everything from total on);
- experts_ids[start_b / block_size + j] = b for j < padded_b / block_size; every other
  element is -1;
- num_tokens_post_pad[0] = total.

The layout is fully determined: every output is compared exactly.

Arguments:
- `max_tokens_per_batch`, `block_size`: Python ints (block_size 16, 32, 64 or 128).
- `expert_num_tokens`: int32 [B], B <= 1024, values in [0, max_tokens_per_batch]. Not
  modified.
- `sorted_token_ids`: int32 [B * cdiv(max_tokens_per_batch, block_size) * block_size];
  `experts_ids`: int32 [len(sorted_token_ids) / block_size]; `num_tokens_post_pad`:
  int32 [1]. All three arrive with garbage and are fully written; nothing is returned.

Speed baseline: the reference below (vllm is not importable on the GPU host).
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def batched_moe_align_block_size(
    max_tokens_per_batch: int,
    block_size: int,
    expert_num_tokens: torch.Tensor,
    sorted_token_ids: torch.Tensor,
    experts_ids: torch.Tensor,
    num_tokens_post_pad: torch.Tensor,
) -> None:
    """vllm::batched_moe_align_block_size(int max_tokens_per_batch, int block_size, Tensor expert_num_tokens,
    Tensor! sorted_token_ids, Tensor! experts_ids, Tensor! num_tokens_post_pad) -> ()"""
'''

OUTPUT_ARGS = ("sorted_token_ids", "experts_ids", "num_tokens_post_pad")


def _case(name, tag, batches, max_tokens, block, empty=0.2, seed=0):
    """empty: the share of batches (experts) that received no token."""
    return Case(name, tag, dict(batches=batches, max_tokens=max_tokens, block=block, empty=empty), seed=seed)


CASES = [
    _case("smoke-docstring-like", "smoke", 5, 8, 4),
    _case("smoke-odd-capacity", "smoke", 7, 10, 4, empty=0.4, seed=1),
    _case("deepseek-ep8-bs64", "check", 32, 128, 64),
    _case("deepseek-ep8-bs16", "check", 32, 256, 16, empty=0.5),
    _case("mixtral-ep1-bs32", "check", 8, 1000, 32, empty=0.0),
    _case("qwen3-ep4-odd", "check", 32, 77, 16),
    _case("many-batches", "check", 1024, 24, 16),
    _case("all-empty", "check", 16, 64, 16, empty=1.0),
    _case("deepseek-ep8-prefill", "bench", 32, 4096, 64),
    _case("deepseek-ep1-decode", "bench", 256, 128, 16),
    _case("qwen3-ep2-bs32", "bench", 64, 1024, 32),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    b, m, bs = p["batches"], p["max_tokens"], p["block"]
    counts = torch.randint(0, m + 1, (b,), generator=gen, dtype=torch.int32)
    counts[torch.rand(b, generator=gen) < p["empty"]] = 0
    if b > 2 and p["empty"] < 1.0:
        counts[1] = m  # a full batch
    n = b * (-(-m // bs)) * bs
    return dict(
        max_tokens_per_batch=m,
        block_size=bs,
        expert_num_tokens=counts.to(device),
        sorted_token_ids=torch.empty(n, dtype=torch.int32, device=device),
        experts_ids=torch.empty(n // bs, dtype=torch.int32, device=device),
        num_tokens_post_pad=torch.empty(1, dtype=torch.int32, device=device),
    )


def reference(max_tokens_per_batch, block_size, expert_num_tokens, sorted_token_ids, experts_ids, num_tokens_post_pad):
    counts = expert_num_tokens.long()
    padded = (counts + block_size - 1) // block_size * block_size
    ends = padded.cumsum(0)
    starts, total = ends - padded, ends[-1]
    sentinel = counts.numel() * max_tokens_per_batch
    pos = torch.arange(sorted_token_ids.numel(), device=counts.device)
    batch = torch.searchsorted(ends, pos, right=True).clamp(max=counts.numel() - 1)
    offset = pos - starts[batch]
    real = (pos < total) & (offset < counts[batch])
    sorted_token_ids.copy_(torch.where(real, batch * max_tokens_per_batch + offset, sentinel))
    first = torch.arange(experts_ids.numel(), device=counts.device) * block_size
    owner = torch.searchsorted(ends, first, right=True)
    experts_ids.copy_(torch.where(first < total, owner, -1))
    num_tokens_post_pad.copy_(total.reshape(1))
