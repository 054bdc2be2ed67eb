"""Mixture-of-experts routing: the references, input builders and comparisons shared by the
moe align ops (`moe_align_block_size`, `batched_moe_align_block_size`,
`moe_lora_align_block_size`) and the top-k routers (`topk_softmax`, `grouped_topk`).

The align ops lay the (token, k) slots out expert by expert, each expert's segment padded
to a multiple of block_size. Inside a segment the order of the real slots is free (vLLM's
CUDA kernel fills it with atomics); the padding follows them. `segment_layout` computes
that layout and `compare_sorted_ids` accepts any order inside a segment and nothing else.
Every function here avoids data-dependent shapes, so the specs' cases run on fake tensors.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


def routed_topk_ids(
    tokens: int, topk: int, num_experts: int, gen: torch.Generator, dtype: torch.dtype = torch.int32, hot: int = 0
) -> torch.Tensor:
    """[tokens, topk] distinct experts per token, as a router picks them; `hot` experts
    (the first ones) are favoured, so that segment sizes vary widely."""
    score = torch.rand(tokens, num_experts, generator=gen)
    if hot:
        score[:, :hot] += 0.5
    return score.topk(topk, dim=-1).indices.to(dtype)


def shard_expert_map(num_experts: int, first: int, local: int) -> torch.Tensor:
    """Expert parallelism: global experts first..first+local-1 live here as 0..local-1;
    every other expert maps to -1."""
    expert_map = torch.full((num_experts,), -1, dtype=torch.int32)
    expert_map[first : first + local] = torch.arange(local, dtype=torch.int32)
    return expert_map


@dataclass(frozen=True)
class SegmentLayout:
    """Where each expert's slots go in sorted_token_ids."""

    expert: torch.Tensor  # int64 [numel]: the (mapped) expert of each flat slot; -1 = dropped
    starts: torch.Tensor  # int64 [num_experts]: first position of each expert's segment
    counts: torch.Tensor  # int64 [num_experts]: real slots of each expert
    ends: torch.Tensor  # int64 [num_experts]: one past the padded segment
    total: torch.Tensor  # int64 0-d: ends[-1], num_tokens_post_pad


def segment_layout(
    topk_ids: torch.Tensor,
    num_experts: int,
    block_size: int,
    expert_map: torch.Tensor | None = None,
    token_mask: torch.Tensor | None = None,
) -> SegmentLayout:
    """The padded expert segments of moe_align_block_size. `token_mask` [num_tokens]
    (bool) keeps only some tokens' slots (the LoRA variant)."""
    topk = topk_ids.shape[-1]
    flat = topk_ids.reshape(-1).long()
    expert = flat
    if expert_map is not None:
        expert = expert_map.long()[flat]
    keep = expert >= 0
    if token_mask is not None:
        keep = keep & token_mask.repeat_interleave(topk)
    expert = torch.where(keep, expert, -1)
    counts = torch.zeros(num_experts + 1, dtype=torch.int64, device=flat.device)
    counts.scatter_add_(0, torch.where(keep, expert, num_experts), torch.ones_like(expert))
    counts = counts[:num_experts]
    padded = (counts + block_size - 1) // block_size * block_size
    ends = padded.cumsum(0)
    return SegmentLayout(expert, ends - padded, counts, ends, ends[-1])


def slot_positions(layout: SegmentLayout) -> torch.Tensor:
    """The reference's choice of order inside a segment: ascending flat slot index.
    Returns each slot's position in sorted_token_ids (dropped slots: -1)."""
    expert = layout.expert
    n_exp = layout.starts.numel()
    key = torch.where(expert >= 0, expert, n_exp)
    order = torch.sort(key, stable=True).indices
    sorted_key = key[order]
    first_of_key = torch.searchsorted(sorted_key, sorted_key, right=False)
    rank = torch.empty_like(order)
    rank[order] = torch.arange(order.numel(), device=order.device) - first_of_key
    starts = torch.cat([layout.starts, layout.starts.new_zeros(1)])
    return torch.where(expert >= 0, starts[key] + rank, -1)


def fill_sorted_ids(row: torch.Tensor, layout: SegmentLayout, sentinel: int) -> None:
    """Write one sorted_token_ids row: every position `sentinel`, then each kept slot's flat
    index at its position."""
    pos = slot_positions(layout)
    numel = pos.numel()
    buf = torch.full((row.numel() + 1,), sentinel, dtype=torch.int64, device=row.device)
    dump = torch.where(pos >= 0, pos, row.numel())  # dropped slots land in the spare element
    buf.scatter_(0, dump, torch.arange(numel, device=row.device))
    row.copy_(buf[: row.numel()])


def fill_expert_ids(row: torch.Tensor, layout: SegmentLayout, block_size: int, inactive: int) -> None:
    """Block b of sorted_token_ids belongs to the expert whose segment holds position
    b * block_size; blocks past the total get `inactive`."""
    first = torch.arange(row.numel(), device=row.device) * block_size
    owner = torch.searchsorted(layout.ends, first, right=True)
    row.copy_(torch.where(first < layout.total, owner, inactive))


def compare_sorted_ids(actual: torch.Tensor, expected: torch.Tensor, layout: SegmentLayout, what: str) -> str | None:
    """Accept any order of the real slots inside each expert's segment; every other
    position (the padding after them, everything past the total) must match exactly."""
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return f"{what}: shape {tuple(actual.shape)} {actual.dtype}, expected {tuple(expected.shape)} {expected.dtype}"
    pos = torch.arange(expected.numel(), device=expected.device)
    seg = torch.searchsorted(layout.ends, pos, right=True).clamp(max=layout.ends.numel() - 1)
    real = (pos < layout.total) & (pos - layout.starts[seg] < layout.counts[seg])
    fixed_bad = (actual != expected) & ~real
    if bool(fixed_bad.any()):
        i = int(fixed_bad.nonzero()[0])
        return f"{what}: position {i} (padding or past the total) holds {int(actual[i])}, expected {int(expected[i])}"
    numel = layout.expert.numel()
    a, e = actual[real].long(), expected[real].long()
    if bool(((a < 0) | (a >= numel)).any()):
        return f"{what}: a real slot of a segment holds an index outside 0..{numel - 1}"
    span = numel + 1
    a_key = torch.sort(seg[real] * span + a).values
    e_key = torch.sort(seg[real] * span + e).values
    if not torch.equal(a_key, e_key):
        i = int((a_key != e_key).nonzero()[0])
        return (f"{what}: expert {int(e_key[i]) // span}'s segment does not hold exactly its slots "
                f"(sorted, found {int(a_key[i]) % span} where {int(e_key[i]) % span} belongs)")
    return None


def compare_exact(actual: torch.Tensor, expected: torch.Tensor, what: str) -> str | None:
    """Integer outputs: same shape, dtype and values."""
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return f"{what}: shape {tuple(actual.shape)} {actual.dtype}, expected {tuple(expected.shape)} {expected.dtype}"
    bad = actual != expected
    if bool(bad.any()):
        i = tuple(int(x) for x in bad.nonzero()[0])
        return f"{what}: {int(bad.sum())} elements differ; first at {i}: got {actual[i].item()}, expected {expected[i].item()}"
    return None


def compare_topk_choice(
    actual_ids: torch.Tensor, expected_ids: torch.Tensor, score: torch.Tensor, rtol: float, what: str
) -> str | None:
    """Top-k selections with ties: row by row, the chosen experts must be distinct and in
    range, and the j-th chosen expert's `score` (the quantity ranked, float64) must equal
    the j-th expected one's within rtol. Any order among equal scores passes; picking a
    lower-scored expert, or listing them out of order, fails."""
    if actual_ids.shape != expected_ids.shape or actual_ids.dtype != expected_ids.dtype:
        return (f"{what}: shape {tuple(actual_ids.shape)} {actual_ids.dtype}, "
                f"expected {tuple(expected_ids.shape)} {expected_ids.dtype}")
    ids = actual_ids.long()
    n = score.shape[-1]
    if bool(((ids < 0) | (ids >= n)).any()):
        return f"{what}: an index outside 0..{n - 1}"
    ordered = torch.sort(ids, dim=-1).values
    if ordered.shape[-1] > 1 and bool((ordered[:, 1:] == ordered[:, :-1]).any()):
        row = int((ordered[:, 1:] == ordered[:, :-1]).any(-1).nonzero()[0])
        return f"{what}: row {row} selects one expert twice: {ids[row].tolist()}"
    got = score.gather(-1, ids)
    want = score.gather(-1, expected_ids.long())
    bad = (got - want).abs() > rtol * want.abs() + 1e-30
    if bool(bad.any()):
        r, j = (int(x) for x in bad.nonzero()[0])
        return (f"{what}: row {r} position {j} selects expert {int(ids[r, j])} (score {float(got[r, j]):.8g}); "
                f"expected expert {int(expected_ids[r, j])} (score {float(want[r, j]):.8g})")
    return None


def compare_close(actual: torch.Tensor, expected: torch.Tensor, rtol: float, atol: float | torch.Tensor,
                  what: str) -> str | None:
    """|actual - expected| <= atol + rtol |expected| everywhere (NaN fails): for outputs
    recomputed for the candidate's own selection, and for the attention helpers."""
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return f"{what}: shape {tuple(actual.shape)} {actual.dtype}, expected {tuple(expected.shape)} {expected.dtype}"
    a, e = actual.double(), expected.double()
    bad = ~((a - e).abs() <= atol + rtol * e.abs())
    if bool(bad.any()):
        i = tuple(int(x) for x in bad.nonzero()[0])
        return f"{what}: {int(bad.sum())} elements off; first at {i}: got {a[i].item():.8g}, expected {e[i].item():.8g}"
    return None
