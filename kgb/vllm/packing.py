"""Packed integer weight formats of vLLM's quantised GEMMs: GPTQ, AWQ, exllama and Marlin.

Every format stores `32 // bits` unsigned `bits`-wide values in one int32 word. They
differ in which axis is packed and in which order the values sit inside the word:

- GPTQ: qweight [K // pf, N]; value (k, n) is field k % pf of word [k // pf, n].
  qzeros [groups, N // pf]; zero (g, n) is field n % pf of word [g, n // pf].
- AWQ: qweight [K, N // pf]; value (k, n) is field AWQ_FIELD[n % pf] of word [k, n // pf]
  (4-bit: fields 0..7 hold columns 0, 2, 4, 6, 1, 3, 5, 7). qzeros use the same order.
- exllama (what `gptq_shuffle` makes of GPTQ): rows first reordered by a permutation,
  then, for 4 bits, the fields of each word reordered so that field p holds row
  EXLLAMA4_ROW[p] = 0, 2, 4, 6, 1, 3, 5, 7 of the word's eight rows.
- Marlin: tiles of 16 rows x 64 columns, each tile's values scattered so that one GPU
  thread's tensor-core fragment is one word; see `marlin_sources`.

Field i of a word occupies bits [i * bits, (i + 1) * bits). The functions here are the
specs' references and input builders, written for clarity, not speed.
"""

from __future__ import annotations

import torch

TILE_K = 16  # Marlin tile: 16 rows of K ...
TILE_N = 64  # ... by 64 columns of N


def pack_factor(bits: int) -> int:
    return 32 // bits


def field_of_awq_column(bits: int) -> list[int]:
    """AWQ: which field of a word holds column n % pf (4-bit: 0, 4, 1, 5, 2, 6, 3, 7)."""
    pf = pack_factor(bits)
    return [(p % 2) * (pf // 2) + p // 2 for p in range(pf)]


def pack_fields(values: torch.Tensor, bits: int, fields: list[int] | None = None, dim: int = -1) -> torch.Tensor:
    """Pack dimension `dim` (a multiple of pf) into int32 words: the j-th value of each
    group of pf goes to field fields[j] (default: field j)."""
    pf = pack_factor(bits)
    fields = fields if fields is not None else list(range(pf))
    dim = dim % values.dim()
    v = values.unflatten(dim, (values.shape[dim] // pf, pf))
    # int32 shifts and sums wrap modulo 2**32: the words keep the low 32 bits of the int64 sums
    words = torch.zeros(v.select(dim + 1, 0).shape, dtype=torch.int32, device=values.device)
    for j, f in enumerate(fields):
        words += v.select(dim + 1, j).to(torch.int32) << (f * bits)
    return words


def unpack_fields(words: torch.Tensor, bits: int, fields: list[int] | None = None) -> torch.Tensor:
    """Inverse of pack_fields: int32 words [..., W] -> int64 values [..., W * pf]."""
    pf = pack_factor(bits)
    fields = fields if fields is not None else list(range(pf))
    shifts = torch.tensor(fields, dtype=torch.int64, device=words.device) * bits
    v = (words.to(torch.int64)[..., None] >> shifts) & ((1 << bits) - 1)
    return v.reshape(*words.shape[:-1], words.shape[-1] * pf)


# --- GPTQ -------------------------------------------------------------------------------

def gptq_pack_weight(q: torch.Tensor, bits: int) -> torch.Tensor:
    """q [K, N] of values in [0, 2**bits) -> GPTQ qweight [K // pf, N] (packed along K)."""
    return pack_fields(q, bits, dim=0)


def gptq_unpack_weight(qweight: torch.Tensor, bits: int) -> torch.Tensor:
    """GPTQ qweight [K // pf, N] -> values [K, N] (int64)."""
    return unpack_fields(qweight.t(), bits).t()


def pack_columns(q: torch.Tensor, bits: int) -> torch.Tensor:
    """GPTQ qzeros: q [G, N] -> [G, N // pf] (packed along N, natural order)."""
    return pack_fields(q, bits)


def unpack_columns(words: torch.Tensor, bits: int) -> torch.Tensor:
    return unpack_fields(words, bits)


# --- AWQ --------------------------------------------------------------------------------

def awq_pack(q: torch.Tensor, bits: int) -> torch.Tensor:
    """q [R, N] -> AWQ words [R, N // pf] in AWQ's interleaved field order."""
    return pack_fields(q, bits, field_of_awq_column(bits))


def awq_unpack(words: torch.Tensor, bits: int) -> torch.Tensor:
    return unpack_fields(words, bits, field_of_awq_column(bits))


# --- exllama (gptq_shuffle) -------------------------------------------------------------

def exllama_shuffle(qweight: torch.Tensor, perm: torch.Tensor | None, bits: int) -> torch.Tensor:
    """What gptq_shuffle writes: GPTQ rows reordered (new row k = old row perm[k]), then
    for 4 bits each word's fields reordered so field p holds row (p % 4) * 2 + p // 4 of
    its eight rows (8-bit words keep their order)."""
    return exllama_pack(gptq_unpack_weight(qweight, bits), perm, bits)


def exllama_pack(q: torch.Tensor, perm: torch.Tensor | None, bits: int) -> torch.Tensor:
    """exllama_shuffle of the GPTQ packing of values q [K, N], without packing them twice."""
    if perm is not None and perm.numel() > 0:
        q = q[perm.long()]
    if bits == 4:
        return pack_fields(q, bits, [(j % 2) * 4 + j // 2 for j in range(8)], dim=0)
    return gptq_pack_weight(q, bits)


def exllama_unshuffle(qweight: torch.Tensor, bits: int) -> torch.Tensor:
    """Values [K, N] of an exllama-shuffled weight, in its (sequential) row order."""
    if bits == 4:
        return unpack_fields(qweight.t(), bits, [(j % 2) * 4 + j // 2 for j in range(8)]).t()
    return gptq_unpack_weight(qweight, bits)


# --- Marlin -----------------------------------------------------------------------------

def marlin_sources(bits: int, device: torch.device | str = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """For each word j of a Marlin tile and each field i of it, the (row, column) inside
    the 16 x 64 tile whose value it holds. Shapes [words_per_tile, pf].

    A tile is served by 4 warps w of 32 threads t. Thread (w, t) owns rows
    r[0..3] = (t % 4) * 2 + (0, 1, 8, 9) and columns c = w * 16 + t // 4 and c + 8: eight
    values v[0..3] = tile[r[0..3], c], v[4..7] = tile[r[0..3], c + 8].
    - 4 bits: word t * 4 + w; field i holds v[(0, 2, 4, 6, 1, 3, 5, 7)[i]].
    - 8 bits: words t * 8 + w * 2 (fields i = v[(0, 2, 1, 3)[i]]) and t * 8 + w * 2 + 1
      (fields i = v[4 + (0, 2, 1, 3)[i]]).
    """
    pf = pack_factor(bits)
    j = torch.arange(TILE_K * TILE_N // pf, device=device)[:, None]
    i = torch.arange(pf, device=device)[None, :]
    if bits == 4:
        t, w = j // 4, j % 4
        v = (i % 4) * 2 + i // 4
    else:
        t, w = j // 8, (j % 8) // 2
        v = (j % 2) * 4 + (i % 2) * 2 + i // 2
    sub = v % 4
    rows = (t % 4) * 2 + sub % 2 + (sub // 2) * 8
    cols = w * 16 + t // 4 + (v // 4) * 8
    return rows, cols


def marlin_pack(q: torch.Tensor, bits: int) -> torch.Tensor:
    """Values [..., K, N] -> Marlin words [..., K // 16, N * 16 // pf]: tile (kt, nt) fills
    words [nt * wpt, (nt + 1) * wpt) of row kt, wpt = 1024 // pf words per tile."""
    *lead, k, n = q.shape
    rows, cols = marlin_sources(bits, q.device)
    # int32 (all pack_fields keeps of a value) halves the bytes the tile gather moves
    tiles = q.to(torch.int32).reshape(*lead, k // TILE_K, TILE_K, n // TILE_N, TILE_N).transpose(-3, -2)
    vals = tiles[..., rows, cols]  # [..., kt, nt, wpt, pf]
    return pack_fields(vals, bits).reshape(*lead, k // TILE_K, -1)


def marlin_unpack(words: torch.Tensor, bits: int, k: int, n: int) -> torch.Tensor:
    """Inverse of marlin_pack (for one [K // 16, N * 16 // pf] matrix)."""
    rows, cols = marlin_sources(bits, words.device)
    pf = pack_factor(bits)
    vals = unpack_fields(words.reshape(k // TILE_K, n // TILE_N, -1, 1), bits)
    vals = vals.reshape(k // TILE_K, n // TILE_N, -1, pf)
    tiles = torch.empty(k // TILE_K, n // TILE_N, TILE_K, TILE_N, dtype=torch.int64, device=words.device)
    tiles[:, :, rows, cols] = vals
    return tiles.permute(0, 2, 1, 3).reshape(k, n)


# --- Marlin int4 weights for fp8 activations ---------------------------------------------

def fp8_preprocess(qweight: torch.Tensor, qzeros: torch.Tensor | None) -> torch.Tensor:
    """marlin_int4_fp8_preprocess: every 4-bit value v with zero z becomes v - z when
    v >= z, else 15 - v (z = 8 without zeros; with AWQ zeros, z is the same field of the
    zero word of the row's group)."""
    v = unpack_fields(qweight.reshape(-1, qweight.shape[-1]), 4).reshape(*qweight.shape[:-1], -1)
    if qzeros is None:
        z = torch.full_like(v, 8)
    else:
        group = qweight.shape[0] // qzeros.shape[0]
        z = unpack_fields(qzeros, 4).repeat_interleave(group, dim=0)
    return pack_fields(torch.where(v >= z, v - z, 15 - v), 4)



def marlin_scale_perm(channelwise: bool) -> list[int]:
    """Marlin's scale layout: position p of every chunk of 64 (grouped scales) holds column
    (p % 8) * 8 + p // 8 of the chunk (an 8 x 8 transpose); with one scale row
    (channelwise, and for the bias), position p of every chunk of 32 holds column
    2 * (p // 8) + (0, 1, 8, 9, 16, 17, 24, 25)[p % 8]."""
    if channelwise:
        return [2 * i + j for i in range(4) for j in (0, 1, 8, 9, 16, 17, 24, 25)]
    return [i + 8 * j for i in range(8) for j in range(8)]


def marlin_permute(s: torch.Tensor, channelwise: bool) -> torch.Tensor:
    """Scales [G, N] (or a bias [N]) in their natural order -> Marlin's order."""
    perm = marlin_scale_perm(channelwise)
    return s.reshape(-1, len(perm))[:, perm].reshape(s.shape).contiguous()


def marlin_unpermute(s: torch.Tensor, channelwise: bool) -> torch.Tensor:
    perm = torch.tensor(marlin_scale_perm(channelwise))
    return s.reshape(-1, len(perm))[:, torch.argsort(perm).to(s.device)].reshape(s.shape)


# --- AllSpark (n32k16 order) ---------------------------------------------------------------

def allspark_weight_offsets(k: int, n: int, device: torch.device | str = "cpu") -> torch.Tensor:
    """int64 [K, N]: where allspark_repack_weight puts weight (k, n) in the flat
    [ceil(N / 32) * 32 / 4, K * 4] result (see the allspark_w8a16_gemm spec)."""
    kk = torch.arange(k, device=device)[:, None]
    nn = torch.arange(n, device=device)[None, :]
    kq, nr = kk % 16, nn % 128
    lane = (nr // 32) * 8 + ((kq % 8) // 2) * 2 + (nr % 32) // 16
    j = nr % 16
    row = (nn // 128) * 32 + (lane // 8) * 8 + j % 8
    col = (kk // 64) * 256 + ((kk % 64) // 16) * 64 + (lane % 8) * 8 + (kq // 8) * 2 + kq % 2 + (j // 8) * 4
    return row * (4 * k) + col


def allspark_scale_offsets(n: int, device: torch.device | str = "cpu") -> torch.Tensor:
    """int64 [N]: where the scale (or zero) of column n goes in the reordered [1, N32]."""
    nn = torch.arange(n, device=device)
    nr = nn % 128
    lane = nr % 32
    return nn - nr + (nr // 32) * 32 + (lane % 8) * 4 + lane // 8


def _allspark_block_order(device: torch.device | str = "cpu") -> torch.Tensor:
    """The layout repeats in blocks of 16 rows (k) x 128 columns (n), each filling a
    32 x 64 block of the [N32 / 4, 4K] result: for each entry of that block in order, the
    position kq * 128 + nr in the block of the weight it holds ([2048])."""
    dest = allspark_weight_offsets(16, 128, device)  # row * 64 + col: 4K = 64 for K = 16
    order = torch.empty(2048, dtype=torch.int64, device=device)
    order[dest.reshape(-1)] = torch.arange(2048, device=device)
    return order


def allspark_reorder(q: torch.Tensor, params: list[torch.Tensor]) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """q uint8 [K, N] (K a multiple of 16) and per-column [N] tensors -> the reordered
    [N32, K] weight and [1, N32] parameters (padding columns are zero)."""
    k, n = q.shape
    n32, n128 = -(-n // 32) * 32, -(-n // 128) * 128
    padded = torch.nn.functional.pad(q, (0, n128 - n))
    blocks = padded.reshape(k // 16, 16, n128 // 128, 128).permute(2, 0, 1, 3).reshape(n128 // 128, k // 16, 2048)
    flat = blocks[..., _allspark_block_order(q.device)].reshape(n128 // 128, k // 16, 32, 64).transpose(1, 2)
    # the rows past N32 / 4 hold only padding columns
    weight = flat.reshape(n128 // 4, 4 * k)[: n32 // 4].reshape(n32, k)
    out = []
    for p in params:
        r = torch.zeros(n32, dtype=p.dtype, device=p.device)
        r[allspark_scale_offsets(n, p.device)] = p.reshape(-1)
        out.append(r.reshape(1, n32))
    return weight, out


def allspark_restore(qr: torch.Tensor, k: int, n: int) -> torch.Tensor:
    return qr.reshape(-1)[allspark_weight_offsets(k, n, qr.device)]


def allspark_restore_params(p: torch.Tensor, n: int) -> torch.Tensor:
    return p.reshape(-1)[allspark_scale_offsets(n, p.device)]
