"""Paged decode attention: the KV-cache layout, input builder, reference and comparison
shared by `paged_attention_v1` and `paged_attention_v2`.

vLLM's paged KV cache (the layout its CUDA kernels read):
    key_cache   [num_blocks, num_kv_heads, head_size // x, block_size, x]
    value_cache [num_blocks, num_kv_heads, head_size, block_size]
with x = 16 bytes / element size (8 for float16 and bfloat16, 4 for float32): element d of
the key of the token in slot t of a block sits at key_cache[blk, h, d // x, t, d % x], and
element d of its value at value_cache[blk, h, d, t].
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import torch

from kgb.operators import Case, published_tolerance
from kgb.vllm.moe import compare_close  # the elementwise check all vLLM helpers share

PARTITION_SIZE = 512  # tokens per partition of paged_attention_v2


@dataclass(frozen=True)
class PagedShape:
    """One decode batch: `seqs` sequences of at most `max_len` tokens (one of them exactly)."""

    seqs: int
    heads: int
    kv_heads: int
    head_size: int
    block_size: int
    max_len: int
    dtype: str
    alibi: bool = False
    fused_q: bool = False  # the query is a slice of a fused [seqs, heads + 2 kv_heads, head_size] tensor
    spare_blocks: int = 7  # physical blocks no sequence uses


def key_split(dtype: torch.dtype) -> int:
    """x of the key cache layout: how many elements make 16 bytes."""
    return 16 // torch.empty(0, dtype=dtype).element_size()


def rope_cos_sin_cache(max_pos: int, rot_dim: int, dtype: torch.dtype, base: float) -> torch.Tensor:
    """The cache vLLM's rotary embeddings read: [max_pos, rot_dim] cos then sin of position *
    inverse frequency (base 10000 for Llama, 1,000,000 for Qwen3), computed in float64."""
    inv_freq = 1.0 / (base ** (torch.arange(0, rot_dim, 2, dtype=torch.float64) / rot_dim))
    angles = torch.arange(max_pos, dtype=torch.float64)[:, None] * inv_freq[None, :]
    return torch.cat([angles.cos(), angles.sin()], dim=-1).to(dtype)


def paged_case(name: str, tag: str, shape: PagedShape, seed: int = 0) -> Case:
    """A case of paged_attention_v1 / v2 (its reduction: the longest sequence)."""
    return Case(name, tag, dict(shape=shape), seed=seed, reduction=shape.max_len)


def paged_lengths(shape: PagedShape) -> torch.Tensor:
    """Each sequence's length, the longest first: the same in every draw of a case, because
    they set how much work a call does. The judge times a candidate on a draw from a secret
    seed and the baseline on the case's own; with lengths drawn from the draw's generator,
    two timings of one kernel on one case differed by up to 40% on the H200
    (paged_attention_v2 llama3-70b-tp8-32k-f16: 263 to 463 us over six sweeps)."""
    gen = torch.Generator().manual_seed(zlib.crc32(repr(shape).encode()))
    # on the CPU by name: a GPU draw runs under `with torch.device("cuda")` (kgb.evaluate.draws),
    # which a CPU generator refuses (on the H200, session 30: every paged case a runtime error)
    lens = torch.randint(1, shape.max_len + 1, (shape.seqs,), generator=gen, dtype=torch.int32, device="cpu")
    lens[0] = shape.max_len
    return lens


def make_paged_inputs(shape: PagedShape, gen: torch.Generator, device: str) -> dict:
    """Query, paged caches, block tables and lengths of a decode step, with the scalar
    arguments of vLLM's paged attention ops. Only values and the blocks' places come from
    `gen`; the lengths are the case's (`paged_lengths`)."""
    dtype = getattr(torch, shape.dtype)
    s, h, kvh, d, bs = shape.seqs, shape.heads, shape.kv_heads, shape.head_size, shape.block_size
    lens = paged_lengths(shape)
    max_blocks = -(-shape.max_len // bs)
    num_blocks = s * max_blocks + shape.spare_blocks
    # every sequence gets its own physical blocks, scattered over the cache; unused table
    # entries point at real blocks too, so that reading past a sequence's end is wrong, not fatal
    tables = torch.randperm(num_blocks, generator=gen)[: s * max_blocks].view(s, max_blocks).to(torch.int32)
    x = key_split(dtype)
    key_cache = torch.randn(num_blocks, kvh, d // x, bs, x, generator=gen).to(dtype)
    value_cache = torch.randn(num_blocks, kvh, d, bs, generator=gen).to(dtype)
    if shape.fused_q:
        qkv = torch.randn(s, h + 2 * kvh, d, generator=gen).to(dtype).to(device)
        query = qkv[:, :h]
    else:
        query = torch.randn(s, h, d, generator=gen).to(dtype).to(device)
    alibi = None
    if shape.alibi:  # the slopes of ALiBi's geometric series, as MPT and BLOOM use them
        alibi = (2.0 ** (-8.0 * torch.arange(1, h + 1, dtype=torch.float32) / h)).to(device)
    return dict(
        query=query,
        key_cache=key_cache.to(device),
        value_cache=value_cache.to(device),
        num_kv_heads=kvh,
        scale=d**-0.5,
        block_tables=tables.to(device),
        seq_lens=lens.to(device),
        block_size=bs,
        max_seq_len=shape.max_len,
        alibi_slopes=alibi,
        kv_cache_dtype="auto",
        k_scale=torch.ones(1, dtype=torch.float32, device=device),
        v_scale=torch.ones(1, dtype=torch.float32, device=device),
    )


@dataclass(frozen=True)
class Partials:
    """What vLLM's partition pass leaves, per sequence s, head h and partition p of
    `partition_size` tokens (exists[s, p]: the partition holds at least one token)."""

    max_logit: torch.Tensor  # [seqs, heads, parts] float32
    exp_sum: torch.Tensor  # [seqs, heads, parts] float32: sum of exp(logit - max_logit)
    out: torch.Tensor  # [seqs, heads, parts, head_size], the query's dtype, normalised by exp_sum + 1e-6
    exists: torch.Tensor  # [seqs, parts] bool


def paged_attention(query, key_cache, value_cache, scale, block_tables, seq_lens, block_size, alibi_slopes,
                    partition_size: int | None = None, squared: bool = False) -> Partials:
    """Every sequence's attention over consecutive partitions of its tokens (one partition
    covering the whole table when partition_size is None). Vectorised over sequences:
    each sequence's blocks are gathered to the width of the block table and the tokens
    past its length are masked, so no shape depends on the lengths."""
    seqs, heads, d = query.shape
    kvh = key_cache.shape[1]
    group = heads // kvh
    width = block_tables.shape[1] * block_size
    part = partition_size or width
    parts = -(-width // part)
    blocks = block_tables.long()
    k = key_cache[blocks].permute(0, 1, 4, 2, 3, 5).reshape(seqs, width, kvh, d).float()
    v = value_cache[blocks].permute(0, 1, 4, 2, 3).reshape(seqs, width, kvh, d).float()
    q = query.float().reshape(seqs, kvh, group, d)
    logits = scale * torch.einsum("skgd,slkd->skgl", q, k).reshape(seqs, heads, width)
    pos = torch.arange(width, device=query.device)
    lens = seq_lens.long()[:, None]
    if alibi_slopes is not None:
        logits = logits + alibi_slopes[None, :, None] * (pos[None, :] - lens + 1)[:, None, :]
    valid = (pos[None, :] < lens)[:, None, :]  # [seqs, 1, width]
    pad = parts * part - width
    logits = torch.nn.functional.pad(torch.where(valid, logits, float("-inf")), (0, pad), value=float("-inf"))
    logits = logits.reshape(seqs, heads, parts, part)
    m = logits.max(dim=-1).values
    m_safe = torch.where(torch.isfinite(m), m, 0.0)
    e = torch.exp(logits - m_safe[..., None])  # exp(-inf) = 0 for masked tokens
    total = e.sum(dim=-1)
    # the probabilities are rounded to the query's dtype before they weight the values
    probs = (e / (total[..., None] + 1e-6)).to(query.dtype).float()
    if squared:  # sum_j p_j^2 v_j^2: the scale of what rounding each p_j moves (weighted_magnitude)
        probs, v = probs.square(), v.square()
    v = torch.nn.functional.pad(v, (0, 0, 0, 0, 0, pad)).reshape(seqs, parts, part, kvh, d)
    out = torch.einsum("skgpl,splkd->skgpd", probs.reshape(seqs, kvh, group, parts, part), v)
    out = out.reshape(seqs, heads, parts, d)
    out = out if squared else out.to(query.dtype)
    exists = torch.arange(parts, device=query.device)[None, :] * part < lens
    return Partials(m, total, out, exists)


def combine(partials: Partials) -> torch.Tensor:
    """paged_attention_v2's reduction of each sequence's partitions into its output."""
    m = torch.where(partials.exists[:, None, :], partials.max_logit, float("-inf"))
    w = torch.where(partials.exists[:, None, :], partials.exp_sum * torch.exp(m - m.max(dim=-1, keepdim=True).values), 0.0)
    weights = w / (w.sum(dim=-1, keepdim=True) + 1e-6)
    out = (partials.out.float() * weights[..., None]).sum(dim=2).to(partials.out.dtype)
    single = (partials.exists.sum(dim=-1) == 1)[:, None, None]  # one partition: copied as is
    return torch.where(single, partials.out[:, :, 0], out)


# unit roundoff: how much rounding the attention probabilities to the dtype moves them
_UNIT = {torch.float32: 2.0**-24, torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8}


def compare_attention(actual: torch.Tensor, expected: torch.Tensor, reduction: int, what: str,
                      magnitude: torch.Tensor | None = None, rounded: torch.Tensor | None = None) -> str | None:
    """An attention output: the published rtol of its dtype; atol the larger of the
    published one and 4 units of roundoff of the dtype times the RMS of the expected
    values, so that keeping the probabilities in float32 (flash-decoding style) and
    rounding them to the dtype first (vLLM) both pass, and zeros do not.

    With `magnitude` (per element, sqrt(sum_j p_j^2 v_j^2): `weighted_magnitude`), atol is
    at least 4 units of roundoff times it: rounding each p_j moves an output by about
    u p_j |v_j|, which where terms cancel (a short sequence of large values) is far above the
    output's RMS. Found on an H200: a float32-probability kernel 4 elements off, by 0.0018 on a value
    of 0.0156, in a bf16 case whose RMS-based atol was 0.0003.

    `rounded` (per element) is added to atol: what rounding partial results moves beyond that
    (`combine_rounding`)."""
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return f"{what}: {tuple(actual.shape)} {actual.dtype}, expected {tuple(expected.shape)} {expected.dtype}"
    rms = float(expected.double().pow(2).mean().sqrt())
    tol = published_tolerance(str(expected.dtype).removeprefix("torch."), reduction, rms)
    unit = _UNIT[expected.dtype]
    atol: float | torch.Tensor = max(tol.atol, 4 * unit * rms)
    if magnitude is not None:
        atol = (4 * unit * magnitude.double()).clamp(min=atol)
    if rounded is not None:
        atol = atol + rounded.double()
    return compare_close(actual, expected, tol.rtol, atol, what)


def weighted_magnitude(inputs: dict, partition_size: int | None = None) -> torch.Tensor:
    """sqrt(sum_j p_j^2 v_j^2) for every output element (per partition with
    partition_size): the scale by which rounding the probabilities moves it, each p_j's
    rounding error being independent of the others'."""
    partials = paged_attention(inputs["query"], inputs["key_cache"], inputs["value_cache"], inputs["scale"],
                               inputs["block_tables"], inputs["seq_lens"], inputs["block_size"],
                               inputs["alibi_slopes"], partition_size=partition_size, squared=True)
    return partials.out.sqrt()


def combine_rounding(expected: dict, exists: torch.Tensor) -> torch.Tensor:
    """How far rounding the partitions' results to the dtype can move paged_attention_v2's `out`,
    per element: 2 units of roundoff of each partition's tmp_out, weighted as `combine` weights
    it (zero where a sequence has one partition, whose tmp_out is copied). Two kernels round
    partial results that differ by their probabilities' rounding, so where one lands a unit in
    the last place of tmp_out from the other (a bf16 ulp is 2^-10 for values in [0.125, 0.25))
    `out` moves by that ulp times the partition's weight. Found on an H200: a known-good solution
    one element off by 2^-10, on a fresh draw of qwen2-7b-8k-bf16 (a sequence of 1011 tokens, two
    partitions), where the atol from the probabilities alone was 0.0008."""
    tmp = expected["tmp_out"]
    parts = tmp.shape[2]
    exists = exists[:, :parts]
    magnitudes = Partials(expected["max_logits"], expected["exp_sums"],
                          torch.where(exists[:, None, :, None], tmp.float().abs(), 0.0), exists)
    several = (exists.sum(dim=-1) > 1)[:, None, None]
    return torch.where(several, 2 * _UNIT[tmp.dtype] * combine(magnitudes), 0.0)


def compare_v2(actual: dict, expected: dict, reduction: int, inputs: dict) -> str | None:
    """paged_attention_v2's outputs: `out` as compare_attention; the workspace only where
    vLLM writes it (partition p of sequence s exists when p * 512 < seq_lens[s]): exp_sums
    within a relative 1e-4, max_logits within 1e-4 * (1 + |value|), tmp_out as
    compare_attention over 512 tokens."""
    seq_lens = inputs["seq_lens"]
    parts = expected["exp_sums"].shape[-1]
    exists = torch.arange(parts, device=seq_lens.device)[None, :] * PARTITION_SIZE < seq_lens.long()[:, None]
    message = compare_attention(actual["out"], expected["out"], reduction, "out", weighted_magnitude(inputs)[:, :, 0],
                                combine_rounding(expected, exists))
    if message:
        return message
    exists = exists[:, None, :].expand_as(expected["exp_sums"])  # [seqs, heads, parts]
    message = compare_close(actual["exp_sums"][exists], expected["exp_sums"][exists], 1e-4, 0.0, "exp_sums")
    if message:
        return message
    m = expected["max_logits"][exists]
    message = compare_close(actual["max_logits"][exists], m, 1e-4, 1e-4, "max_logits")
    if message:
        return message
    per_part = weighted_magnitude(inputs, PARTITION_SIZE)[:, :, :parts][exists]
    return compare_attention(actual["tmp_out"][exists], expected["tmp_out"][exists], PARTITION_SIZE, "tmp_out", per_part)
