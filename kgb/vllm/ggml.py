"""GGML block formats and vLLM's GGUF kernels' arithmetic, for the ggml_* specs.

The specs cover three GGML quantisation types (the simple 32-value blocks that every
llama.cpp build supports); their ids are GGML's:

| type | id | bytes | block of 32 weights                                 | value j              |
|------|----|-------|-----------------------------------------------------|----------------------|
| Q4_0 | 2  | 18    | float16 d; uint8 qs[16]                              | d * (nib_j - 8)      |
| Q4_1 | 3  | 20    | float16 d; float16 m; uint8 qs[16]                   | d * nib_j + m        |
| Q8_0 | 8  | 34    | float16 d; int8 qs[32]                               | d * qs[j]            |

nib_j = qs[j] & 15 for j < 16 and qs[j - 16] >> 4 for j >= 16. A weight matrix
[rows, cols] is stored row by row, each row as cols / 32 consecutive blocks (uint8).

The a8 kernels first quantise every activation row to Q8_1 (per block of 32 values x:
d = max|x| / 127, q = round-half-away(x / d) as int8 (0 when max|x| = 0), and the block
keeps float16(d) and float16(sum x)), then take integer dot products with the weight
codes; see `q8_1_matmul`. How far a kernel may stray from it is kgb.vllm.q8_1_check's.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from kgb.operators import Case
from kgb.vllm.quant import exact_div

QK = 32  # values per block, for every type here


@dataclass(frozen=True)
class BlockType:
    name: str
    id: int
    nbytes: int


Q4_0 = BlockType("Q4_0", 2, 18)
Q4_1 = BlockType("Q4_1", 3, 20)
Q8_0 = BlockType("Q8_0", 8, 34)
TYPES = {t.id: t for t in (Q4_0, Q4_1, Q8_0)}


def halves(raw: torch.Tensor, start: int) -> torch.Tensor:
    """float16 stored little-endian at bytes [start, start + 2) of each block (as float32)."""
    lo = raw[..., start].to(torch.int32)
    hi = raw[..., start + 1].to(torch.int32)
    bits = (hi << 8) | lo
    return torch.where(bits >= 2**15, bits - 2**16, bits).to(torch.int16).view(torch.float16).float()


# d of about max|w| / 8 (Q4) or max|w| / 127 (Q8) for weights of magnitude 0.1 to 0.3
WEIGHT_SCALE = {Q4_0.id: 0.02, Q4_1.id: 0.02, Q8_0.id: 0.002}


def random_blocks(type_id: int, rows: int, cols: int, gen: torch.Generator) -> torch.Tensor:
    """Random blocks of a weight [rows, cols] as uint8 [rows, cols / 32 * nbytes]: every
    code is random and d (and m) are float16 numbers of about WEIGHT_SCALE[type_id]."""
    t = TYPES[type_id]
    scale = WEIGHT_SCALE[type_id]
    nblocks = rows * cols // QK
    d = (scale * (0.5 + torch.rand(nblocks, generator=gen))).to(torch.float16)
    d = torch.where(torch.rand(nblocks, generator=gen) < 0.5, -d, d) if t is not Q4_1 else d
    head = [d.view(torch.int16).view(torch.uint8).reshape(nblocks, 2)]
    if t is Q4_1:
        m = (-8 * scale * torch.rand(nblocks, generator=gen)).to(torch.float16)
        head.append(m.view(torch.int16).view(torch.uint8).reshape(nblocks, 2))
    codes = torch.randint(0, 256, (nblocks, t.nbytes - 2 * len(head)), generator=gen, dtype=torch.uint8)
    return torch.cat([*head, codes], dim=1).reshape(rows, cols // QK * t.nbytes)


def codes(raw: torch.Tensor, type_id: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """Blocks [..., nblocks * nbytes] -> (codes [..., nblocks, 32] int64, d, m) where d and m
    are float32 [..., nblocks] (m None except for Q4_1). Q4 codes are the raw nibbles 0..15."""
    t = TYPES[type_id]
    blocks = raw.reshape(*raw.shape[:-1], -1, t.nbytes)
    d = halves(blocks, 0)
    if t is Q8_0:
        return blocks[..., 2:].view(torch.int8).to(torch.int64), d, None
    qs = blocks[..., 4:] if t is Q4_1 else blocks[..., 2:]
    nib = torch.cat([qs & 15, qs >> 4], dim=-1).to(torch.int64)
    return nib, d, halves(blocks, 2) if t is Q4_1 else None


def dequantize(raw: torch.Tensor, type_id: int) -> torch.Tensor:
    """Blocks -> values [..., nblocks * 32] as float16, rounded as vLLM's half kernels do:
    Q4_0 half((q - 8) * d); Q4_1 half(half(q * d) + m); Q8_0 half(q * d)."""
    q, d, m = codes(raw, type_id)
    if type_id == Q4_0.id:
        v = ((q - 8).float() * d[..., None]).half()
    elif type_id == Q4_1.id:
        v = ((q.float() * d[..., None]).half().float() + m[..., None]).half()
    else:
        v = (q.float() * d[..., None]).half()
    return v.reshape(*v.shape[:-2], -1)


def round_half_away(x: torch.Tensor) -> torch.Tensor:
    return torch.sign(x) * torch.floor(x.abs() + 0.5)


def block_scales(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Rows [R, C] -> (blocks [R, C/32, 32] float32, their amax, the exact Q8_1 scale d =
    amax / 127 in float32), as the specs say (CUDA's `amax / 127` is one ulp off for many amax)."""
    xb = x.float().reshape(x.shape[0], -1, QK)
    amax = xb.abs().amax(-1)
    return xb, amax, exact_div(amax, 127.0)


def quantize_q8_1(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Rows [R, C] (C a multiple of 32) -> (q [R, C/32, 32] int64, d, s) with d, s float32
    [R, C/32] holding the float16-rounded scale and block sum."""
    xb, amax, d = block_scales(x)
    safe = torch.where(amax == 0, torch.ones_like(d), d)
    q = torch.where(amax[..., None] == 0, 0.0, round_half_away(xb / safe[..., None]))
    return q.to(torch.int64), d.half().float(), xb.sum(-1).half().float()


def q8_1_matmul(w_raw: torch.Tensor, type_id: int, x: torch.Tensor) -> torch.Tensor:
    """float32 [R, N]: row r of x (quantised to Q8_1) against every weight row of w_raw
    [N, C/32 * nbytes], block by block in float32:
    Q4_0: d4 * (sumi * d8 - 8 * s8); Q4_1: sumi * half(d4 * d8) + half(m4 * s8);
    Q8_0: d_w * d8 * sumi; with sumi the integer dot of the raw codes."""
    qx, dx, sx = quantize_q8_1(x)
    qw, dw, mw = codes(w_raw, type_id)
    rows, n, nblocks = qx.shape[0], qw.shape[0], qx.shape[1]
    out = torch.zeros(rows, n, dtype=torch.float64, device=x.device)
    step = max(1, 2**25 // max(1, rows * n))  # blocks per pass, bounding the [R, N, b] temporaries
    for b0 in range(0, nblocks, step):
        b = slice(b0, b0 + step)
        sumi = torch.einsum("rbj,nbj->rnb", qx[:, b].double(), qw[:, b].double()).float()  # exact
        d8, s8, d4 = dx[:, None, b], sx[:, None, b], dw[None, :, b]
        if type_id == Q4_0.id:
            per_block = d4 * (sumi * d8 - 8 * s8)
        elif type_id == Q4_1.id:
            per_block = sumi * (d4 * d8).half().float() + (mw[None, :, b] * s8).half().float()
        else:
            per_block = d4 * d8 * sumi
        out += per_block.double().sum(-1)
    return out.float()


def mul_mat_case(name, tag, type_id, batch, row, col, dtype="float16", seed=0) -> Case:
    """A case of ggml_mul_mat_a8 / ggml_mul_mat_vec_a8 (its reduction: the col products of an output)."""
    return Case(name, tag, dict(type=type_id, batch=batch, row=row, col=col, dtype=dtype), seed=seed, reduction=col)


def mul_mat_inputs(params: dict, gen: torch.Generator, device: str) -> dict:
    """ggml_mul_mat_a8 / ggml_mul_mat_vec_a8 arguments for params type, batch, row, col, dtype."""
    w = random_blocks(params["type"], params["row"], params["col"], gen)
    x = torch.randn(params["batch"], params["col"], generator=gen).to(getattr(torch, params["dtype"]))
    return dict(W=w.to(device), X=x.to(device), type=params["type"], row=params["row"])


def moe_case(name, tag, type_id, tokens, experts, top_k, row, col, dtype="float16", seed=0) -> Case:
    """A case of ggml_moe_a8 / ggml_moe_a8_vec."""
    params = dict(type=type_id, tokens=tokens, experts=experts, top_k=top_k, row=row, col=col, dtype=dtype)
    return Case(name, tag, params, seed=seed, reduction=col)


def moe_inputs(params: dict, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Expert weights [E, row, bytes], activations [tokens, col] and top-k expert ids
    (distinct per token, as a router's top-k gives) for params type, tokens, experts,
    top_k, row, col, dtype; on the CPU."""
    e, row, col = params["experts"], params["row"], params["col"]
    w = random_blocks(params["type"], e * row, col, gen).reshape(e, row, -1)
    x = torch.randn(params["tokens"], col, generator=gen).to(getattr(torch, params["dtype"]))
    topk = torch.stack([torch.randperm(e, generator=gen)[: params["top_k"]] for _ in range(params["tokens"])])
    return w, x, topk.to(torch.int32)


def align_for_experts(topk_ids: torch.Tensor, num_experts: int, block: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """moe_align_block_size's result for ggml_moe_a8: the flat indices z of topk_ids
    grouped by expert, each expert's list padded with the value topk_ids.numel() to a
    multiple of `block`; the expert of every block; and the padded length."""
    flat = topk_ids.reshape(-1).long()
    pad = flat.numel()
    sorted_ids, experts = [], []
    for e in range(num_experts):
        ids = (flat == e).nonzero().reshape(-1)
        if ids.numel() == 0:
            continue
        n_blocks = -(-ids.numel() // block)
        padded = torch.full((n_blocks * block,), pad, dtype=torch.int64)
        padded[: ids.numel()] = ids
        sorted_ids.append(padded)
        experts += [e] * n_blocks
    total = sum(s.numel() for s in sorted_ids)
    # vLLM allocates the worst case; the tail beyond `total` is padding with expert -1
    capacity = flat.numel() + num_experts * (block - 1)
    capacity = -(-capacity // block) * block
    ids = torch.full((capacity,), pad, dtype=torch.int64)
    ids[:total] = torch.cat(sorted_ids)
    exp = torch.full((capacity // block,), -1, dtype=torch.int64)
    exp[: len(experts)] = torch.tensor(experts, dtype=torch.int64)
    return ids.to(torch.int32), exp.to(torch.int32), torch.tensor([total], dtype=torch.int32)
