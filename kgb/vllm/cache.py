"""Paged KV caches as vLLM 0.13 lays them out: input builders (slot mappings, block
tables, block mappings, filled caches) and the references of the ops that write, copy and
gather them.

A paged cache holds `num_blocks` blocks of `block_size` token slots. Slot s is slot
s % block_size of block s // block_size; a slot mapping gives each new token its slot
(negative: a padding token that is not stored). A block table lists, per sequence, the
blocks holding its tokens in order: token i of the sequence lives in block
block_table[seq, i // block_size], slot i % block_size.
"""

from __future__ import annotations

import torch

from kgb.vllm.quant import (
    OFF_BY_ONE_SHARE,
    compare_codes,
    compare_floats,
    fp8_bytes_to,
    input_rtol,
    scaled_to_fp8_bytes,
)

FP8_CACHE_DTYPES = ("fp8", "fp8_e4m3")


def is_fp8(kv_cache_dtype: str) -> bool:
    """vLLM's "fp8"/"fp8_e4m3" caches hold e4m3 bit patterns in uint8; "auto" holds the model dtype."""
    return kv_cache_dtype in FP8_CACHE_DTYPES


def random_cache(shape: tuple[int, ...], dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    """Stale cache contents: random values (random finite e4m3 bytes for uint8), which an op
    must leave alone wherever it does not write."""
    if dtype == torch.uint8:
        codes = torch.randint(0, 256, shape, generator=gen, dtype=torch.uint8)
        return torch.where((codes & 0x7F) == 0x7F, codes ^ 0x01, codes)  # no NaN bytes
    return torch.randn(shape, generator=gen).to(dtype)


def new_keys_values(rows: int, heads: int, head_size: int, dtype: torch.dtype, fused: bool,
                    gen: torch.Generator, device: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Keys and values [rows, heads, head_size] of new tokens: separate tensors, or (fused)
    the k and v column slices of one qkv projection output whose rows are 3 * heads *
    head_size long (q taking as many heads as k), views made on the device."""
    if fused:
        qkv = torch.randn(rows, 3 * heads * head_size, generator=gen).to(dtype).to(device)
        width = heads * head_size
        return (qkv[:, width:2 * width].view(rows, heads, head_size),
                qkv[:, 2 * width:].view(rows, heads, head_size))
    key = torch.randn(rows, heads, head_size, generator=gen).to(dtype).to(device)
    return key, torch.randn(rows, heads, head_size, generator=gen).to(dtype).to(device)


def slot_mapping(tokens: int, num_blocks: int, block_size: int, padding: int, gen: torch.Generator) -> torch.Tensor:
    """int64 [tokens]: distinct random slots, the last `padding` tokens -1 (not stored)."""
    slots = torch.randperm(num_blocks * block_size, generator=gen)[:tokens].to(torch.int64)
    if padding:
        slots[tokens - padding:] = -1
    return slots


def cache_scale(value: float, device: str) -> torch.Tensor:
    """A float32 one-element scale tensor, as vLLM's layers hold k_scale and v_scale."""
    return torch.tensor([value], dtype=torch.float32, device=device)


def stored(x: torch.Tensor, kv_cache_dtype: str, scale: torch.Tensor) -> torch.Tensor:
    """What a cache holds for values x: x itself, or its fp8 bytes of x / scale."""
    return scaled_to_fp8_bytes(x, scale) if is_fp8(kv_cache_dtype) else x


def loaded(entries: torch.Tensor, kv_cache_dtype: str, scale: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """What a cache read yields in `dtype`: the entries, or fp8 bytes dequantised by scale."""
    return fp8_bytes_to(entries, scale, dtype) if is_fp8(kv_cache_dtype) else entries.to(dtype)


def kept_tokens(slot_mapping: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(token indices, their slots) of the tokens that are stored (slot >= 0)."""
    keep = slot_mapping >= 0
    tokens = torch.arange(slot_mapping.shape[0], device=slot_mapping.device)[keep]
    return tokens, slot_mapping[keep]


def compare_caches(actual: dict, expected: dict, model_dtype: torch.dtype, quantised: bool = True) -> str | None:
    """Written caches: fp8 bytes as codes (see kgb.vllm.quant.compare_codes; bit for bit
    unless the op quantised them), model-dtype caches within that dtype's rtol (a correct
    copy is exact). Lists of caches element-wise."""
    for key, exp in expected.items():
        if exp is None:
            continue
        got = actual.get(key)
        items = list(zip(got, exp, strict=False)) if isinstance(exp, list | tuple) else [(got, exp)]
        if isinstance(exp, list | tuple) and (not isinstance(got, list | tuple) or len(got) != len(exp)):
            return f"{key}: expected {len(exp)} tensors"
        for i, (a, e) in enumerate(items):
            what = f"{key}[{i}]" if isinstance(exp, list | tuple) else key
            if e.dtype in (torch.uint8, torch.float8_e4m3fn) or not e.is_floating_point():
                message = compare_codes(what, a, e, OFF_BY_ONE_SHARE if quantised else 0.0)
            else:
                message = compare_floats(what, a, e, input_rtol(model_dtype))
            if message:
                return message
    return None


def sequences(seq_lens: list[int], block_size: int, num_blocks: int, gen: torch.Generator,
              starts: list[int] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """int32 block table [batch, max_blocks] and cu_seq_lens [batch + 1] for sequences of
    the given lengths (each optionally beginning `starts[b]` tokens into its blocks), with
    distinct random blocks; unused table entries hold other random blocks."""
    starts = starts or [0] * len(seq_lens)
    need = [-(-(s + n) // block_size) for s, n in zip(starts, seq_lens, strict=True)]
    width = max(need)
    order = torch.randperm(num_blocks, generator=gen)
    if sum(need) > num_blocks:
        raise ValueError("not enough blocks for these sequences")
    table = torch.randint(0, num_blocks, (len(seq_lens), width), generator=gen, dtype=torch.int32)
    used = 0
    for b, n in enumerate(need):
        table[b, :n] = order[used:used + n].to(torch.int32)
        used += n
    cu = torch.zeros(len(seq_lens) + 1, dtype=torch.int32)
    cu[1:] = torch.cumsum(torch.tensor(seq_lens), 0).to(torch.int32)
    return table, cu


def gathered_positions(block_table: torch.Tensor, cu_seq_lens: torch.Tensor, block_size: int,
                       seq_starts: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    """For every gathered token (the concatenation of all sequences, in order): its cache
    (block, slot). Token i of sequence b reads position i + seq_starts[b] of that sequence."""
    cu = cu_seq_lens.tolist()
    blocks, slots = [], []
    for b in range(len(cu) - 1):
        pos = torch.arange(cu[b + 1] - cu[b], device=block_table.device)
        if seq_starts is not None:
            pos = pos + int(seq_starts[b])
        blocks.append(block_table[b, pos // block_size].long())
        slots.append(pos % block_size)
    return torch.cat(blocks), torch.cat(slots)


def block_mapping(pairs: int, num_blocks: int, gen: torch.Generator) -> torch.Tensor:
    """int64 [pairs, 2] of (src, dst) block numbers: distinct destinations that are never
    sources (copies do not depend on their order), sources may repeat."""
    order = torch.randperm(num_blocks, generator=gen)
    dst = order[:pairs]
    sources = order[pairs:]
    src = sources[torch.randint(0, sources.numel(), (pairs,), generator=gen)]
    return torch.stack([src, dst], dim=1).to(torch.int64)


def copy_blocks_(caches: list[torch.Tensor], mapping: torch.Tensor) -> None:
    """Every cache's block dst becomes a copy of its block src, for each (src, dst)."""
    src, dst = mapping[:, 0].long(), mapping[:, 1].long()
    for cache in caches:
        cache[dst] = cache[src]
