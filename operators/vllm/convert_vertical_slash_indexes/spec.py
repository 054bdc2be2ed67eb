"""Sparse-attention index builder of MInference's "vertical-slash" pattern: vLLM's
`convert_vertical_slash_indexes` custom op (vLLM 0.13; Algorithm 4 of
arXiv:2407.02490). For each block of BLOCK_M query rows it turns a head's selected columns
("vertical" lines) and selected diagonals ("slash" lines) into the list of key blocks to
compute densely plus the list of single columns to compute sparsely.

    convert_vertical_slash_indexes(block_count, block_offset, column_count, column_index,
                                   q_seqlens, kv_seqlens, vertical_indexes, slash_indexes,
                                   context_size, block_size_M, block_size_N, causal) -> None

Inputs, per batch b and head h: V = vertical_indexes[b, h] (NNZ_V column positions, sorted
ascending) and S = slash_indexes[b, h] (NNZ_S diagonal offsets, sorted descending; offset o
is the diagonal of cells whose column is o positions left of the row's own diagonal).
With q = q_seqlens[b], kv = kv_seqlens[b], BM = block_size_M, BN = block_size_N, and for
causal attention off = kv - q (the query rows are the last q of the kv positions) while
for non-causal attention every "off + x" below reads "kv + x":

For every row block m with start = m * BM < q (blocks with start >= q are not written),
end = start + BM, the following sequential procedure runs (all integers; `save(a, e)`
appends a, a + BN, a + 2 BN, ... below min(e, kv) to the block list if a < kv):

    v_pos, s_pos = 1, 1;  vi = V[0];  si = S[0];  has_slash = True
    while si >= end + off and s_pos < NNZ_S: si = S[s_pos]; s_pos += 1
    if si > end + off: has_slash = False
    si = max(off + end - si, BM)
    (rs, re) = (si - BM, si) if has_slash else (off + end, off + end + BN)
    finished = False
    loop:
      if vi < re:
        if vi < rs: append vi to the column list
        if v_pos < NNZ_V: vi = V[v_pos]; v_pos += 1
        else: vi = off + end + BN
      else:
        if s_pos < NNZ_S and (causal or S[s_pos] >= start):
          si = max(off + end - S[s_pos], BM); s_pos += 1
        elif v_pos == NNZ_V or (causal and vi > rs):
          if v_pos == NNZ_V and not causal and vi < kv: append vi to the column list
          save(rs, re); stop
        else:
          if causal: (rs, re) = (off + end, off + end + BN)
          else: save(rs, re); (rs, re) = (kv, kv + BN)
          finished = True
        if not finished:
          if si > re + BM: save(rs, re); (rs, re) = (si - BM, si)
          elif si > re: re = re + BM

Outputs, row r = (b, h, m): block_count[b, h, m] = length of the block list, which fills
block_offset[b, h, m, :count]; column_count[b, h, m] = length of the column list, which
fills column_index[b, h, m, :count]. Everything else in the four outputs is left as it
was: they arrive filled with zeros (as vLLM's Python wrapper allocates them) and must keep
those zeros. All four are compared exactly.

Arguments:
- `block_count`, `column_count`: int32 [batch, heads, cdiv(context_size, BM)];
  `block_offset`: int32 [batch, heads, cdiv(context_size, BM), NNZ_S]; `column_index`:
  int32 [batch, heads, cdiv(context_size, BM), NNZ_V]; all contiguous and zero-filled.
- `q_seqlens`, `kv_seqlens`: int32 [batch], q <= context_size, q <= kv.
- `vertical_indexes`: int32 [batch, heads, NNZ_V]; `slash_indexes`: int32
  [batch, heads, NNZ_S]; contiguous, NNZ_V, NNZ_S >= 1, values in [0, kv), distinct.
- `context_size`: int; `block_size_M` = `block_size_N` = 64 (the only configuration vLLM
  builds); `causal`: bool.
Nothing is returned; the inputs are not modified.

Speed baseline: the reference below, a literal sequential Python loop (vllm is not
importable on the GPU host), which is why the bench cases are modest.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def convert_vertical_slash_indexes(
    block_count: torch.Tensor,
    block_offset: torch.Tensor,
    column_count: torch.Tensor,
    column_index: torch.Tensor,
    q_seqlens: torch.Tensor,
    kv_seqlens: torch.Tensor,
    vertical_indexes: torch.Tensor,
    slash_indexes: torch.Tensor,
    context_size: int,
    block_size_M: int,
    block_size_N: int,
    causal: bool,
) -> None:
    """vllm::convert_vertical_slash_indexes(Tensor! block_count, Tensor! block_offset, Tensor! column_count,
    Tensor! column_index, Tensor q_seqlens, Tensor kv_seqlens, Tensor vertical_indexes, Tensor slash_indexes,
    int context_size, int block_size_M, int block_size_N, bool causal) -> ()"""
'''

INOUT_ARGS = ("block_count", "block_offset", "column_count", "column_index")


def _case(name, tag, q_lens, kv_extra, heads, nnz_v, nnz_s, causal=True, block=64, seed=0):
    """q_lens: query rows per batch; kv_extra: kv_seqlen - q_seqlen per batch (a cached prefix)."""
    params = dict(q_lens=q_lens, kv_extra=kv_extra, heads=heads, nnz_v=nnz_v, nnz_s=nnz_s, causal=causal,
                  block=block)
    return Case(name, tag, params, seed=seed)


CASES = [
    _case("smoke-causal", "smoke", (200,), (0,), 2, 6, 5),
    _case("smoke-prefix-noncausal", "smoke", (130, 64), (70, 0), 1, 5, 4, causal=False, seed=1),
    _case("llama3-8b-causal", "check", (2048, 1000), (0, 0), 8, 256, 512),
    _case("chunked-prefill-prefix", "check", (1024,), (3000,), 4, 128, 256),
    _case("noncausal-succ-chunk", "check", (777, 512), (1024, 333), 4, 64, 200, causal=False),
    _case("dense-slashes", "check", (640,), (0,), 2, 16, 600),
    _case("few-lines", "check", (4096,), (0,), 2, 1, 1),
    _case("minference-4k", "bench", (4096,), (0,), 4, 1000, 1024),
    _case("chunk-with-prefix", "bench", (2048,), (6144,), 4, 512, 2048),
]


def _lines(n: int, nnz: int, gen: torch.Generator, anchors: int, spread: int) -> torch.Tensor:
    """nnz distinct positions in [0, min(n, spread)), always holding the `anchors` smallest
    (attention sinks / the local diagonals), sorted ascending."""
    n = min(n, spread)
    nnz = min(nnz, n)
    rest = torch.randperm(max(n - anchors, 0), generator=gen)[: max(nnz - anchors, 0)] + anchors
    return torch.cat([torch.arange(min(anchors, nnz)), rest]).sort().values


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    q = torch.tensor(p["q_lens"], dtype=torch.int32)
    kv = q + torch.tensor(p["kv_extra"], dtype=torch.int32)
    batch, heads, bm = len(p["q_lens"]), p["heads"], p["block"]
    nnz_v, nnz_s = p["nnz_v"], p["nnz_s"]
    context = int(q.max())
    vertical = torch.zeros(batch, heads, nnz_v, dtype=torch.int32)
    slash = torch.zeros(batch, heads, nnz_s, dtype=torch.int32)
    for b in range(batch):
        for h in range(heads):  # every batch shares NNZ: short sequences repeat their last line
            # verticals anywhere; slashes mostly near the diagonal, as MInference finds them
            v = _lines(int(kv[b]), nnz_v, gen, anchors=4, spread=int(kv[b]))
            s = _lines(int(kv[b]), nnz_s, gen, anchors=8, spread=3 * nnz_s).flip(0)
            vertical[b, h] = torch.cat([v, v[-1:].expand(nnz_v - len(v))])
            slash[b, h] = torch.cat([s, s[-1:].expand(nnz_s - len(s))])
    rows = -(-context // bm)
    zeros = dict(dtype=torch.int32, device=device)
    return dict(
        block_count=torch.zeros(batch, heads, rows, **zeros),
        block_offset=torch.zeros(batch, heads, rows, nnz_s, **zeros),
        column_count=torch.zeros(batch, heads, rows, **zeros),
        column_index=torch.zeros(batch, heads, rows, nnz_v, **zeros),
        q_seqlens=q.to(device),
        kv_seqlens=kv.to(device),
        vertical_indexes=vertical.to(device),
        slash_indexes=slash.to(device),
        context_size=context,
        block_size_M=bm,
        block_size_N=bm,
        causal=p["causal"],
    )


def convert_row(V: list[int], S: list[int], q: int, kv: int, m: int, bm: int, bn: int, causal: bool):
    """The block list and the column list of one row block (the procedure of the task text)."""
    nnz_v, nnz_s = len(V), len(S)
    start, end = m * bm, m * bm + bm
    off = kv - q if causal else kv
    blocks: list[int] = []
    cols: list[int] = []

    def save(a: int, e: int) -> None:
        if a < kv:
            blocks.extend(range(a, min(e, kv), bn))

    v_pos, s_pos = 1, 1
    vi, si = V[0], S[0]
    has_slash = True
    while si >= end + off and s_pos < nnz_s:
        si = S[s_pos]
        s_pos += 1
    if si > end + off:
        has_slash = False
    si = max(off + end - si, bm)
    rs, re = (si - bm, si) if has_slash else (off + end, off + end + bn)
    finished = False
    while True:
        if vi < re:
            if vi < rs:
                cols.append(vi)
            if v_pos < nnz_v:
                vi = V[v_pos]
                v_pos += 1
            else:
                vi = off + end + bn
            continue
        if s_pos < nnz_s and (causal or S[s_pos] >= start):
            si = max(off + end - S[s_pos], bm)
            s_pos += 1
        elif v_pos == nnz_v or (causal and vi > rs):
            if v_pos == nnz_v and not causal and vi < kv:
                cols.append(vi)
            save(rs, re)
            return blocks, cols
        else:
            if causal:
                rs, re = off + end, off + end + bn
            else:
                save(rs, re)
                rs, re = kv, kv + bn
            finished = True
        if not finished:
            if si > re + bm:
                save(rs, re)
                rs, re = si - bm, si
            elif si > re:
                re += bm


def reference(block_count, block_offset, column_count, column_index, q_seqlens, kv_seqlens, vertical_indexes,
              slash_indexes, context_size, block_size_M, block_size_N, causal):
    batch, heads, rows = block_count.shape
    qs, kvs = q_seqlens.tolist(), kv_seqlens.tolist()
    vert, slash = vertical_indexes.tolist(), slash_indexes.tolist()
    counts, offsets = block_count.tolist(), block_offset.tolist()
    ccounts, cindex = column_count.tolist(), column_index.tolist()
    for b in range(batch):
        for h in range(heads):
            for m in range(rows):
                if m * block_size_M >= qs[b]:
                    continue
                blocks, cols = convert_row(vert[b][h], slash[b][h], qs[b], kvs[b], m, block_size_M, block_size_N,
                                           causal)
                counts[b][h][m], ccounts[b][h][m] = len(blocks), len(cols)
                offsets[b][h][m][: len(blocks)] = blocks
                cindex[b][h][m][: len(cols)] = cols
    for out, values in ((block_count, counts), (block_offset, offsets), (column_count, ccounts),
                        (column_index, cindex)):
        out.copy_(torch.tensor(values, dtype=out.dtype))
