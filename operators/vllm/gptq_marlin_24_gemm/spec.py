"""Matrix product with 2:4-sparse GPTQ weights in Marlin's layout: vLLM's
`gptq_marlin_24_gemm` custom op (vLLM 0.13), the GEMM of "marlin_24" checkpoints (GPTQ
weights pruned to 2:4 sparsity, served on NVIDIA's sparse tensor cores).

    gptq_marlin_24_gemm(a, b_q_weight, b_meta, b_scales, workspace, b_q_type_id,
                        size_m, size_n, size_k) -> Tensor

out = a @ W, M = size_m, N = size_n, K = size_k, where W [K, N] is a 2:4-sparse matrix:
in every column n, each group of four consecutive rows 4g .. 4g + 3 holds two stored
values (at rows 4g + i0 and 4g + i1, 0 <= i0 < i1 <= 3) and two zeros. Only the stored
values are in `b_q_weight` ("compressed": K / 2 rows), their positions in `b_meta`.

- b_q_type_id 1125899907892224 (vLLM's scalar type uint4b8): 4-bit codes q, value q - 8;
- b_q_type_id 1125899923621888 (uint8b128): 8-bit codes q, value q - 128.

Arguments (all contiguous):
- `a`: float16 [M, K]. K is a multiple of 128; N a multiple of 128 (of 256 when M > 16).
- `b_q_weight`: int32 [K / 32, N * 16 / pf], pf = 32 / bits codes per word. Let c[kc, n]
  (kc in 0 .. K/2 - 1) be the compressed codes: c[2g, n] is the code stored at row
  4g + i0 of W and c[2g + 1, n] the one at row 4g + i1 (the positions of group g of
  column n). Row t of b_q_weight holds compressed rows 16t .. 16t + 15; inside it, the
  columns come in chunks of 64, chunk h = n // 64 filling words [h * wc, (h + 1) * wc),
  wc = 1024 / pf. For r = kc % 16 and j = n % 64 let
      i = 4 * (j // 8) + (r % 8) // 2,  e = 4 * ((j % 8) // 4) + (r % 2) + 2 * (r // 8).
  4 bits: the code is field f = (e % 2) * 4 + e // 2 of word i * 4 + j % 4 of the chunk;
  8 bits: it is field (0, 2, 1, 3)[e % 4] of word i * 8 + (j % 4) * 2 + e // 4.
  Field f of a word is bits [f * bits, (f + 1) * bits), read as an unsigned code.
- `b_meta`: int16 [K / 32, 2 * N], the positions. For column n and the group g of four
  rows, the 4-bit value i0 + 4 * i1 is nibble g % 4 (bits [4 (g % 4), 4 (g % 4) + 4)) of
  the meta element (n, cm = g // 4), which sits at b_meta[C // 2, 2 * R + C % 2] with
      R = 64 * (n // 64) + 32 * ((n // 2) % 2) + 4 * ((n % 64) // 8) + 2 * (n % 2) + (n // 4) % 2,
      C = cm,
  except that inside each 2 x 2 block the off-diagonal elements swap: when R is even
  and C odd, use (R + 1, C - 1); when R is odd and C even, use (R - 1, C + 1). (Read
  the element's 16 bits as unsigned.) Every nibble in the cases is one of the six
  valid pairs i0 < i1: 0x4, 0x8, 0xC, 0x9, 0xD, 0xE.
- `b_scales`: float16 [G, N]. G = 1 ("channelwise": one scale per column, natural column
  order) or G = K / 128 (groups of 128 rows of W: row k uses scale row k // 128); with
  G > 1 the columns are permuted inside every chunk of 64: position 8 * u + v holds the
  scale of column 8 * u + (0, 4, 1, 5, 2, 6, 3, 7)[v] of the chunk.
- `workspace`: int32 scratch (vLLM's kernel keeps its split-K locks there), zero-filled,
  at least N / 128 * 64 elements; it does not affect the result; leave it unchanged.
- `size_m`, `size_n`, `size_k`: M, N, K.

Arithmetic (as the Marlin 2:4 kernel does it), with w[k, n] = code - 8 (or - 128) at a
stored position and W = 0 elsewhere; products accumulated in float32:
- G > 1: each stored weight is dequantised to float16 first:
  W[k, n] = f16(w[k, n] * s[k // 128, n]) (one rounding), out = f16(sum_k a[m, k] W[k, n]).
- G = 1, 4 bits: the float32 sum is rounded to float16, then scaled in float16:
  out = f16(f16(sum_k a[m, k] w[k, n]) * s[n]) (the product of two float16 rounded once).
- G = 1, 8 bits: out = f16(float32(sum_k a[m, k] w[k, n]) * s[n]).
(vLLM's kernel may also round split-K partial sums to float16; the tolerance absorbs
that, and the single float32 sum above is what the reference computes.)

The result is a new float16 [M, N] tensor; the inputs must not be modified.

Marlin 2:4 is an NVIDIA sparse-tensor-core kernel (mma.sp, which Triton's language does not
expose); what it computes is an ordinary dequantise-and-multiply with a dense W that is
half zeros, and a Triton kernel can rebuild W's tiles from the code and metadata layouts
above with index arithmetic and run a dense tl.dot on them.
"""

import torch

from kgb.operators import Case
from kgb.vllm.packing import pack_fields, unpack_fields

VERSION = 1
# No speed_baseline: vllm is not importable on the GPU host, so the reference is the baseline.

UINT4B8 = 1125899907892224  # vllm.scalar_type.scalar_types.uint4b8.id
UINT8B128 = 1125899923621888  # scalar_types.uint8b128.id
_BITS = {UINT4B8: 4, UINT8B128: 8}
GROUP = 128  # the only group size the kernel accepts besides channelwise
PAIRS = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]  # the valid (i0, i1) of a group of four

SIGNATURES = '''
def gptq_marlin_24_gemm(a: torch.Tensor, b_q_weight: torch.Tensor, b_meta: torch.Tensor, b_scales: torch.Tensor, workspace: torch.Tensor, b_q_type_id: int, size_m: int, size_n: int, size_k: int) -> torch.Tensor:
    """vllm::gptq_marlin_24_gemm(Tensor a, Tensor b_q_weight, Tensor b_meta, Tensor b_scales, Tensor workspace, int b_q_type_id, SymInt size_m, SymInt size_n, SymInt size_k) -> Tensor"""
'''


def _case(name, tag, m, k, n, bits=4, channelwise=False, seed=0):
    params = dict(m=m, k=k, n=n, bits=bits, channelwise=channelwise)
    return Case(name, tag, params, seed=seed, reduction=k // 2)  # K / 2 stored terms per output


CASES = [
    _case("smoke-4bit-g128", "smoke", 3, 256, 128),
    _case("smoke-4bit-channel", "smoke", 4, 128, 128, channelwise=True, seed=1),
    _case("smoke-8bit-g128", "smoke", 1, 256, 128, bits=8, seed=2),
    _case("smoke-8bit-channel-m17", "smoke", 17, 128, 256, bits=8, channelwise=True, seed=3),
    _case("llama8b-qkv-decode", "check", 1, 4096, 6144),
    _case("llama8b-o-channel", "check", 16, 4096, 4096, channelwise=True),
    _case("llama8b-down-8bit", "check", 33, 14336, 4096, bits=8),
    _case("qwen2-7b-up-channel", "check", 100, 3584, 18944, channelwise=True),
    _case("odd-m-8bit-channel", "check", 77, 1024, 512, bits=8, channelwise=True),
    _case("llama8b-gate-up-decode", "bench", 1, 4096, 28672),
    _case("llama8b-down-batch", "bench", 64, 14336, 4096),
    _case("llama70b-qkv-prefill", "bench", 2048, 8192, 10240),
    _case("llama8b-o-8bit", "bench", 16, 4096, 4096, bits=8),
]


# --- layouts ------------------------------------------------------------------------------

def weight_offsets(k_half: int, n: int, bits: int, device="cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """For compressed code (kc, n): the flat int32 word of b_q_weight and the field it sits
    in, each [K / 2, N]."""
    pf = 32 // bits
    kc = torch.arange(k_half, device=device)[:, None]
    nn = torch.arange(n, device=device)[None, :]
    r, j = kc % 16, nn % 64
    i = 4 * (j // 8) + (r % 8) // 2
    e = 4 * ((j % 8) // 4) + r % 2 + 2 * (r // 8)
    if bits == 4:
        word, field = i * 4 + j % 4, (e % 2) * 4 + e // 2
    else:
        word, field = i * 8 + (j % 4) * 2 + e // 4, torch.tensor([0, 2, 1, 3], device=device)[e % 4]
    row_words = n * 16 // pf
    return (kc // 16) * row_words + (nn // 64) * (1024 // pf) + word, field


def meta_offsets(k: int, n: int, device="cpu") -> torch.Tensor:
    """Flat index into b_meta of meta element (n, cm), cm = 0 .. K / 16 - 1: [N, K / 16]."""
    nn = torch.arange(n, device=device)[:, None]
    cm = torch.arange(k // 16, device=device)[None, :]
    r = 64 * (nn // 64) + 32 * ((nn // 2) % 2) + 4 * ((nn % 64) // 8) + 2 * (nn % 2) + (nn // 4) % 2
    swap = (r % 2 == 0) & (cm % 2 == 1)
    back = (r % 2 == 1) & (cm % 2 == 0)
    r = r + swap.long() - back.long()
    c = cm - swap.long() + back.long()
    return (c // 2) * (2 * n) + 2 * r + c % 2


def scale_columns(n: int, device="cpu") -> torch.Tensor:
    """Grouped scales: which column's scale position p of a row holds ([N])."""
    p = torch.arange(n, device=device)
    v = p % 8
    return p - p % 64 + 8 * ((p % 64) // 8) + torch.tensor([0, 4, 1, 5, 2, 6, 3, 7], device=device)[v]


def _tile_order(bits: int) -> torch.Tensor:
    """The layout repeats in tiles of 16 compressed rows x 64 columns, each filling one chunk
    of words: for every (word, field) slot of a chunk in order, the position r * 64 + j of
    the tile's code it holds ([1024])."""
    pf = 32 // bits
    word, field = weight_offsets(16, 64, bits)
    order = torch.empty(1024, dtype=torch.int64)
    order[(word * pf + field).reshape(-1)] = torch.arange(1024)
    return order


def pack_weight(codes: torch.Tensor, bits: int) -> torch.Tensor:
    """Compressed codes [K / 2, N] -> b_q_weight [K / 32, N * 16 / pf]."""
    k_half, n = codes.shape
    pf = 32 // bits
    # int32 (all pack_fields keeps of a code) halves the bytes the tile gather moves
    tiles = codes.to(torch.int32).reshape(k_half // 16, 16, n // 64, 64).transpose(1, 2)
    slots = tiles.reshape(k_half // 16, n // 64, 1024)[..., _tile_order(bits).to(codes.device)]
    return pack_fields(slots, bits).reshape(k_half // 16, n * 16 // pf)


def unpack_weight(b_q_weight: torch.Tensor, bits: int, k: int, n: int) -> torch.Tensor:
    word, field = weight_offsets(k // 2, n, bits, b_q_weight.device)
    fields = unpack_fields(b_q_weight.reshape(-1, 1), bits)  # [words, pf]
    return fields[word, field]


def _meta_order() -> torch.Tensor:
    """Meta elements (n, cm) land in the row cm // 2 of b_meta, and a block of 64 columns x
    2 elements in 128 consecutive entries of it: for each such entry, the position
    cm % 2 * 64 + n % 64 in the block of the element it holds ([128])."""
    dest = meta_offsets(32, 64)  # [64 columns, 2 elements], all in row 0
    order = torch.empty(128, dtype=torch.int64)
    order[dest.reshape(-1)] = (torch.arange(2)[None, :] * 64 + torch.arange(64)[:, None]).reshape(-1)
    return order


def pack_meta(pairs: torch.Tensor) -> torch.Tensor:
    """pairs: int64 [K / 4, N] of i0 + 4 * i1 -> b_meta int16 [K / 32, 2 N]."""
    k4, n = pairs.shape
    nib = pairs.reshape(k4 // 4, 4, n).to(torch.int32)
    # int32 sums wrap to the same low 16 bits as the int64 ones
    elems = (nib[:, 0] + (nib[:, 1] << 4) + (nib[:, 2] << 8) + (nib[:, 3] << 12)).to(torch.int16)  # [K / 16, N]
    blocks = elems.reshape(k4 // 8, 2, n // 64, 64).transpose(1, 2).reshape(k4 // 8, n // 64, 128)
    return blocks[..., _meta_order().to(pairs.device)].reshape(k4 // 8, 2 * n)


def unpack_meta(b_meta: torch.Tensor, k: int, n: int) -> torch.Tensor:
    """b_meta -> (i0, i1), each int64 [K / 4, N]."""
    elems = b_meta.reshape(-1).long()[meta_offsets(k, n, b_meta.device)] & 0xFFFF  # [N, K / 16]
    nib = (elems[..., None] >> torch.tensor([0, 4, 8, 12], device=b_meta.device)) & 0xF
    nib = nib.reshape(n, k // 4).t()
    return nib % 4, nib // 4


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    m, k, n, bits = p["m"], p["k"], p["n"], p["bits"]
    groups = 1 if p["channelwise"] else k // GROUP
    a = torch.randn(m, k, generator=gen).to(torch.float16)
    codes = torch.randint(0, 2**bits, (k // 2, n), generator=gen)
    choice = torch.randint(0, len(PAIRS), (k // 4, n), generator=gen)
    pairs = torch.tensor([i0 + 4 * i1 for i0, i1 in PAIRS])[choice]
    s = ((0.5 + torch.rand(groups, n, generator=gen)) * 2.0 / 2**bits).to(torch.float16)
    if groups > 1:
        s = s[:, scale_columns(n)]
    return dict(
        a=a.to(device), b_q_weight=pack_weight(codes, bits).to(device), b_meta=pack_meta(pairs).to(device),
        b_scales=s.contiguous().to(device), workspace=torch.zeros(n // 128 * 64, dtype=torch.int32, device=device),
        b_q_type_id=UINT4B8 if bits == 4 else UINT8B128, size_m=m, size_n=n, size_k=k,
    )


def dense_weight(b_q_weight, b_meta, bits: int, k: int, n: int) -> torch.Tensor:
    """The integer values w [K, N] (code - bias at stored positions, 0 elsewhere), int64."""
    codes = unpack_weight(b_q_weight, bits, k, n) - 2 ** (bits - 1)  # [K / 2, N]
    i0, i1 = unpack_meta(b_meta, k, n)
    base = 4 * torch.arange(k // 4, device=b_q_weight.device)[:, None]
    cols = torch.arange(n, device=b_q_weight.device)[None, :].expand(k // 4, n)
    w = torch.zeros(k, n, dtype=torch.int64, device=b_q_weight.device)
    w[base + i0, cols] = codes[0::2]
    w[base + i1, cols] = codes[1::2]
    return w


def reference(a, b_q_weight, b_meta, b_scales, workspace, b_q_type_id, size_m, size_n, size_k):
    bits = _BITS[b_q_type_id]
    w = dense_weight(b_q_weight, b_meta, bits, size_k, size_n).float()
    x = a.float()
    if b_scales.shape[0] == 1:
        s = b_scales.float()[0]
        acc = x @ w
        if bits == 4:
            return (acc.half().float() * s).half()
        return (acc * s).half()
    s = torch.empty_like(b_scales)
    s[:, scale_columns(size_n, b_scales.device)] = b_scales
    group = torch.arange(size_k, device=a.device) // GROUP
    wq = (w * s.float()[group]).half().float()
    return (x @ wq).half()
