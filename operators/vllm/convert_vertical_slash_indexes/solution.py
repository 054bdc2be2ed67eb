import triton
import triton.language as tl


@triton.jit
def _save(offset_ptr, count, a, e, kv, BN: tl.constexpr):
    """Append the block starts a, a + BN, ... below min(e, kv); return the new count."""
    n = tl.where(a < kv, tl.cdiv(tl.minimum(e, kv) - a, BN), 0)
    for i in range(0, n):
        tl.store(offset_ptr + count + i, a + i * BN)
    return count + n


@triton.jit
def _vertical_slash_kernel(
    q_ptr, kv_ptr, v_ptr, s_ptr, block_count_ptr, block_offset_ptr, column_count_ptr, column_index_ptr,
    n_heads, n_rows, NNZ_V, NNZ_S, CAUSAL: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
):
    # One program per (head, batch, row block): the row's sequential merge of vertical
    # points and slash ranges, as scalar code.
    h = tl.program_id(0)
    b = tl.program_id(1)
    m = tl.program_id(2)
    q = tl.load(q_ptr + b)
    kv = tl.load(kv_ptr + b)
    start = m * BM
    if start < q:
        end = start + BM
        if CAUSAL:
            off = kv - q
        else:
            off = kv
        bh = b * n_heads + h
        V = v_ptr + bh.to(tl.int64) * NNZ_V
        S = s_ptr + bh.to(tl.int64) * NNZ_S
        row = bh.to(tl.int64) * n_rows + m
        offsets = block_offset_ptr + row * NNZ_S
        columns = column_index_ptr + row * NNZ_V
        v_pos = 1
        s_pos = 1
        vi = tl.load(V)
        si = tl.load(S)
        while (si >= end + off) & (s_pos < NNZ_S):
            si = tl.load(S + s_pos)
            s_pos += 1
        has_slash = si <= end + off
        si = tl.maximum(off + end - si, BM)
        rs = tl.where(has_slash, si - BM, off + end)
        re = tl.where(has_slash, si, off + end + BN)
        n_cols = 0
        n_blocks = 0
        finished = 0
        done = 0
        while done == 0:
            if vi < re:
                if vi < rs:
                    tl.store(columns + n_cols, vi)
                    n_cols += 1
                if v_pos < NNZ_V:
                    vi = tl.load(V + v_pos)
                    v_pos += 1
                else:
                    vi = off + end + BN
            else:
                more = s_pos < NNZ_S
                if not CAUSAL:
                    more = more & (tl.load(S + tl.minimum(s_pos, NNZ_S - 1)) >= start)
                if more:
                    si = tl.maximum(off + end - tl.load(S + s_pos), BM)
                    s_pos += 1
                else:
                    stop = v_pos == NNZ_V
                    if CAUSAL:
                        stop = stop | (vi > rs)
                    if stop:
                        if not CAUSAL:
                            if (v_pos == NNZ_V) & (vi < kv):
                                tl.store(columns + n_cols, vi)
                                n_cols += 1
                        n_blocks = _save(offsets, n_blocks, rs, re, kv, BN)
                        done = 1
                    else:
                        if CAUSAL:
                            rs = off + end
                            re = off + end + BN
                        else:
                            n_blocks = _save(offsets, n_blocks, rs, re, kv, BN)
                            rs = kv
                            re = kv + BN
                        finished = 1
                if (finished == 0) & (done == 0):
                    if si > re + BM:
                        n_blocks = _save(offsets, n_blocks, rs, re, kv, BN)
                        rs = si - BM
                        re = si
                    elif si > re:
                        re += BM
        tl.store(block_count_ptr + row, n_blocks)
        tl.store(column_count_ptr + row, n_cols)


def convert_vertical_slash_indexes(block_count, block_offset, column_count, column_index, q_seqlens, kv_seqlens,
                                   vertical_indexes, slash_indexes, context_size, block_size_M, block_size_N,
                                   causal):
    batch, heads, rows = block_count.shape
    grid = (heads, batch, rows)
    _vertical_slash_kernel[grid](
        q_seqlens, kv_seqlens, vertical_indexes, slash_indexes, block_count, block_offset, column_count,
        column_index, heads, rows, vertical_indexes.shape[-1], slash_indexes.shape[-1], CAUSAL=bool(causal),
        BM=block_size_M, BN=block_size_N,
    )
