"""Hand-computed checks of the quantised-GEMM and weight-format references of the vLLM
source (kgb.vllm.packing, kgb.vllm.ggml and the specs that use them). A wrong field order
here would make every candidate look wrong, so each layout is pinned by values worked out
by hand from vLLM's CUDA kernels."""

from __future__ import annotations

import torch

from kgb import operators
from kgb.vllm import ggml, packing


def _ref(op):
    return operators.load(f"vllm::{op}").module.reference


def _word(fields: list[int], bits: int = 4) -> int:
    """The int32 with fields[i] in bits [i * bits, (i + 1) * bits)."""
    value = sum(f << (i * bits) for i, f in enumerate(fields))
    return value - 2**32 if value >= 2**31 else value


# --- packed integer layouts ---------------------------------------------------------------

def test_gptq_packs_rows_into_ascending_fields():
    q = torch.arange(8).reshape(8, 1)  # rows 0..7 of one column
    packed = packing.gptq_pack_weight(q, 4)
    assert packed.tolist() == [[0x76543210]]
    assert packing.gptq_unpack_weight(packed, 4).reshape(-1).tolist() == list(range(8))


def test_awq_interleaves_columns():
    q = torch.arange(8).reshape(1, 8)  # columns 0..7 of one row
    # fields 0..7 hold columns 0, 2, 4, 6, 1, 3, 5, 7
    assert packing.awq_pack(q, 4).tolist() == [[_word([0, 2, 4, 6, 1, 3, 5, 7])]]
    q8 = torch.tensor([[10, 11, 12, 13]])
    assert packing.awq_pack(q8, 8).tolist() == [[_word([10, 12, 11, 13], 8)]]
    assert packing.awq_unpack(packing.awq_pack(q, 4), 4).tolist() == q.tolist()


def test_exllama_shuffle_reorders_rows_then_fields():
    q = torch.arange(8).reshape(8, 1) + 2  # row k holds k + 2
    word = packing.gptq_pack_weight(q, 4)
    # no permutation: field p holds row (0, 2, 4, 6, 1, 3, 5, 7)[p]
    assert packing.exllama_shuffle(word, None, 4).tolist() == [[_word([2, 4, 6, 8, 3, 5, 7, 9])]]
    # with a permutation, row k of the result is row perm[k] first
    perm = torch.tensor([7, 6, 5, 4, 3, 2, 1, 0], dtype=torch.int32)
    assert packing.exllama_shuffle(word, perm, 4).tolist() == [[_word([9, 7, 5, 3, 8, 6, 4, 2])]]
    q8 = torch.tensor([[1], [2], [3], [4]])
    perm8 = torch.tensor([2, 0, 3, 1], dtype=torch.int32)
    assert packing.exllama_shuffle(packing.gptq_pack_weight(q8, 8), perm8, 8).tolist() == [[_word([3, 1, 4, 2], 8)]]


def test_gptq_shuffle_reference_writes_in_place():
    w = packing.gptq_pack_weight(torch.arange(8).reshape(8, 1).repeat(4, 3), 4)  # [4, 3] words
    expected = packing.exllama_shuffle(w, None, 4)
    _ref("gptq_shuffle")(w, torch.empty(0, dtype=torch.int32), 4)
    assert w.tolist() == expected.tolist()
    assert w[0, 0].item() == _word([0, 2, 4, 6, 1, 3, 5, 7])


def test_marlin_fragment_sources():
    rows, cols = packing.marlin_sources(4)
    # word 0 (thread 0, warp 0): rows 0, 1, 8, 9 of columns 0 and 8, fields v0 v2 v4 v6 v1 v3 v5 v7
    assert rows[0].tolist() == [0, 8, 0, 8, 1, 9, 1, 9]
    assert cols[0].tolist() == [0, 0, 8, 8, 0, 0, 8, 8]
    # word 5 = thread 1, warp 1: rows start at 2, column 16
    assert rows[5].tolist() == [2, 10, 2, 10, 3, 11, 3, 11]
    assert cols[5].tolist() == [16, 16, 24, 24, 16, 16, 24, 24]
    # word 4 * 31 + 3 = thread 31 (rows from 6, column 3 * 16 + 7), warp 3
    assert rows[127].tolist() == [6, 14, 6, 14, 7, 15, 7, 15]
    assert cols[127].tolist() == [55, 55, 63, 63, 55, 55, 63, 63]
    rows8, cols8 = packing.marlin_sources(8)
    # 8 bits: words 2w and 2w + 1 of thread 0: v0 v2 v1 v3, then v4 v6 v5 v7
    assert rows8[0].tolist() == [0, 8, 1, 9] and cols8[0].tolist() == [0, 0, 0, 0]
    assert rows8[1].tolist() == [0, 8, 1, 9] and cols8[1].tolist() == [8, 8, 8, 8]
    assert rows8[2].tolist() == [0, 8, 1, 9] and cols8[2].tolist() == [16, 16, 16, 16]


def test_marlin_pack_places_tiles_row_by_row():
    q = torch.zeros(32, 128, dtype=torch.int64)
    q[16, 64] = 5  # tile (1, 1), its element (0, 0): word 0, field 0 of that tile
    q[17, 72] = 3  # tile (1, 1), element (1, 8): v[5] of thread 0 warp 0, field 6
    packed = packing.marlin_pack(q, 4)
    assert packed.shape == (2, 256)
    assert packed[1, 128].item() == _word([5, 0, 0, 0, 0, 0, 3, 0])
    assert int(packed.count_nonzero()) == 1
    q = torch.randint(0, 256, (48, 192), generator=torch.Generator().manual_seed(0))
    assert torch.equal(packing.marlin_unpack(packing.marlin_pack(q, 8), 8, 48, 192), q)


def test_marlin_repack_references_follow_the_source_layouts():
    q = torch.randint(0, 16, (32, 64), generator=torch.Generator().manual_seed(1))
    perm = torch.randperm(32, generator=torch.Generator().manual_seed(2)).to(torch.int32)
    gptq = _ref("gptq_marlin_moe_repack")(packing.gptq_pack_weight(q, 4)[None], perm[None], 32, 64, 4)
    assert torch.equal(gptq[0], packing.marlin_pack(q[perm.long()], 4))
    awq = _ref("awq_marlin_moe_repack")(packing.awq_pack(q, 4)[None], torch.empty(1, 0, dtype=torch.int32), 32, 64, 4)
    assert torch.equal(awq[0], packing.marlin_pack(q, 4))


def test_marlin_scale_orders():
    s = torch.arange(64.0).reshape(1, 64)
    grouped = packing.marlin_permute(s, channelwise=False)
    assert grouped[0, :3].tolist() == [0, 8, 16] and grouped[0, 8].item() == 1
    single = packing.marlin_permute(torch.arange(32.0), channelwise=True)
    assert single[:10].tolist() == [0, 1, 8, 9, 16, 17, 24, 25, 2, 3]
    assert torch.equal(packing.marlin_unpermute(grouped, False), s)


def test_fp8_preprocess_codes():
    w = torch.tensor([_word([0, 7, 8, 15, 3, 5, 2, 9])], dtype=torch.int32).repeat(32)
    # without zeros z = 8: v >= 8 -> v - 8, else 15 - v
    out = _ref("marlin_int4_fp8_preprocess")(w)
    assert out[0].item() == _word([15, 8, 0, 7, 12, 10, 13, 1])
    # AWQ: zero 3 for every value of the group
    zeros = torch.tensor([[_word([3] * 8)]], dtype=torch.int32)
    out = _ref("marlin_int4_fp8_preprocess")(w.reshape(32, 1), zeros)
    assert out[5, 0].item() == _word([15, 4, 5, 12, 0, 2, 13, 6])


# --- quantised GEMMs ----------------------------------------------------------------------

def test_awq_gemm_dequantises_with_interleaved_zeros():
    q = torch.full((32, 64), 3)
    q[4, 1] = 11
    z = torch.ones(1, 64, dtype=torch.int64)
    z[0, 1] = 2
    s = torch.full((1, 64), 0.5, dtype=torch.float16)
    x = torch.zeros(2, 32, dtype=torch.float16)
    x[0] = 1
    x[1, 4] = 2
    out = _ref("awq_gemm")(x, packing.awq_pack(q, 4), s, packing.awq_pack(z, 4), 2)
    # row 0 sums column n of W: 32 * (3 - 1) * 0.5 = 32, column 1: 31 * 0.5 + 9 * 0.5 = 20
    assert out[0, 0].item() == 32 and out[0, 1].item() == 20
    # row 1 picks 2 * W[4]: column 1 is (11 - 2) * 0.5 = 4.5
    assert out[1, 1].item() == 9 and out[1, 2].item() == 2


def test_gptq_gemm_v1_zero_offset_and_act_order():
    k, n = 32, 8
    q = (torch.arange(k)[:, None] + torch.arange(n)[None, :]) % 16
    zs = torch.full((2, n), 7)  # v1 stores zero - 1: the zero point is 8
    s = torch.tensor([[0.25] * n, [0.5] * n], dtype=torch.float16)
    g_idx = (torch.arange(k) // 16).to(torch.int32)
    x = torch.zeros(1, k, dtype=torch.float16)
    x[0, 20] = 1  # row 20, group 1: (q - 8) * 0.5
    args = (packing.pack_columns(zs, 4), s)
    out = _ref("gptq_gemm")(x, packing.gptq_pack_weight(q, 4), *args, g_idx, False, False, 4)
    assert out[0].tolist() == [((20 + j) % 16 - 8) * 0.5 for j in range(n)]
    out = _ref("gptq_gemm")(x, packing.gptq_pack_weight(q, 4), *args, g_idx, False, True, 4)  # v2: zero 7
    assert out[0].tolist() == [((20 + j) % 16 - 7) * 0.5 for j in range(n)]
    # exllama with act-order: packed row r is row perm[r]; its group is r // 16
    perm = torch.arange(k - 1, -1, -1, dtype=torch.int32)
    shuffled = packing.exllama_shuffle(packing.gptq_pack_weight(q, 4), perm, 4)
    out = _ref("gptq_gemm")(x, shuffled, *args, perm, True, False, 4)
    # row 20 sits at sequential position 11, group 0: scale 0.25
    assert out[0].tolist() == [((20 + j) % 16 - 8) * 0.25 for j in range(n)]


def test_gptq_marlin_gemm_reference():
    spec = operators.load("vllm::gptq_marlin_gemm").module
    q = torch.full((16, 64), 9)  # uint4b8: value 1
    q[3, 5] = 0  # value -8
    a = torch.zeros(1, 16, dtype=torch.float16)
    a[0, 3] = 1
    a[0, 4] = 2
    s = torch.arange(1, 65, dtype=torch.float16).reshape(1, 64) / 64
    args = dict(
        a=a, c_or_none=None, b_q_weight=packing.marlin_pack(q, 4), b_bias_or_none=None,
        b_scales=packing.marlin_permute(s, True), a_scales=None, global_scale=None, b_zeros_or_none=None,
        g_idx_or_none=None, perm_or_none=None, workspace=torch.zeros(4, dtype=torch.int32),
        b_type_id=spec.UINT4B8, size_m=1, size_n=64, size_k=16, is_k_full=True, use_atomic_add=False,
        use_fp32_reduce=True, is_zp_float=False,
    )
    out = spec.reference(**args)
    assert out[0, 0].item() == 3 / 64 and out[0, 5].item() == (-8 + 2) * 6 / 64
    # act-order: packed row k multiplies column perm[k] of a
    perm = torch.arange(15, -1, -1, dtype=torch.int32)
    out = spec.reference(**{**args, "perm_or_none": perm, "g_idx_or_none": torch.zeros(16, dtype=torch.int32)})
    assert out[0, 5].item() == (1 * 1 + 2 * 1) * 6 / 64  # packed row 3 now meets a[0, 12] = 0


# --- GGML ---------------------------------------------------------------------------------

def _block(*head: float, tail: list[int]) -> torch.Tensor:
    halves = torch.tensor(head, dtype=torch.float16).view(torch.int16).view(torch.uint8)
    return torch.cat([halves, torch.tensor(tail, dtype=torch.uint8)])


def test_ggml_dequantize_block_formats():
    qs = [0x9F] + [0x88] * 15
    q4_0 = _ref("ggml_dequantize")(_block(0.5, tail=qs), 2, 1, 32, torch.float32)
    assert q4_0[0, 0].item() == 3.5 and q4_0[0, 16].item() == 0.5 and q4_0[0, 1].item() == 0
    q4_1 = _ref("ggml_dequantize")(_block(0.5, -1.0, tail=qs), 3, 1, 32, torch.float32)
    assert q4_1[0, 0].item() == 6.5 and q4_1[0, 16].item() == 3.5
    q8 = [0] * 32
    q8[3] = 256 - 5
    q8_0 = _ref("ggml_dequantize")(_block(2.0, tail=q8), 8, 1, 32, None)
    assert q8_0.dtype == torch.float16 and q8_0[0, 3].item() == -10 and q8_0[0, 0].item() == 0


def test_q8_1_quantisation_rounds_halves_away_from_zero():
    x = torch.zeros(1, 32)
    x[0, :6] = torch.tensor([127.0, 0.5, -0.5, 1.5, -2.5, 3.2])
    q, d, s = ggml.quantize_q8_1(x)
    assert q[0, 0, :6].tolist() == [127, 1, -1, 2, -3, 3]
    assert d.item() == 1 and s.item() == 129.25  # the sum 129.2 kept as float16


def test_ggml_mul_mat_a8_block_dot():
    x = torch.zeros(1, 32)
    x[0, 0] = 127  # d8 = 1, q = (127, 0, ...), s8 = 127
    w4_0 = _block(2.0, tail=[0x8A] + [0x88] * 15)  # nib_0 = 10: value (10 - 8) * 2
    y = _ref("ggml_mul_mat_a8")(w4_0[None], x, 2, 1)
    assert y.item() == 2 * (10 * 127 - 8 * 127)  # d4 * (sumi * d8 - 8 * s8) = 508
    w4_1 = _block(2.0, -1.0, tail=[0x8A] + [0x88] * 15)
    y = _ref("ggml_mul_mat_vec_a8")(w4_1[None], x, 3, 1)
    assert y.item() == 10 * 127 * 2 - 127  # sumi * d4 * d8 + m4 * s8
    w8 = [0] * 32
    w8[0] = 3
    y = _ref("ggml_mul_mat_a8")(_block(0.5, tail=w8)[None], x, 8, 1)
    assert y.item() == 0.5 * 3 * 127


def test_ggml_moe_references_route_tokens_to_experts():
    x = torch.zeros(2, 32)
    x[0, 0], x[1, 0] = 127, 254  # token 1 quantises to d8 = 2
    w = torch.stack([
        _block(1.0, tail=[0x89] + [0x88] * 15)[None],  # expert 0: value 1
        _block(3.0, tail=[0x89] + [0x88] * 15)[None],  # expert 1: value 3
    ])
    topk = torch.tensor([[1, 0], [0, 1]], dtype=torch.int32)
    y = _ref("ggml_moe_a8_vec")(x, w, topk, 2, 2, 1, 2)
    assert y.reshape(-1).tolist() == [381, 127, 254, 762]
    ids, experts, used = ggml.align_for_experts(topk, 2, 4)
    # expert 0 gets pairs 1 and 2, expert 1 pairs 0 and 3, each padded to 4 with the value 4
    assert ids[:8].tolist() == [1, 2, 4, 4, 0, 3, 4, 4] and experts[:2].tolist() == [0, 1] and used.item() == 8
    y = _ref("ggml_moe_a8")(x, w, ids, experts, used, 2, 1, 2, 2)
    assert y.reshape(-1).tolist() == [381, 127, 254, 762]


# --- W8A8 ---------------------------------------------------------------------------------

def test_cutlass_scaled_mm_epilogue():
    a = torch.tensor([[1, 2], [3, -4]], dtype=torch.int8)
    b = torch.tensor([[3, 1], [4, 2]], dtype=torch.int8).t().contiguous().t()
    out = torch.empty(2, 2, dtype=torch.float32)
    bias = torch.tensor([1.0, -1.0])
    _ref("cutlass_scaled_mm")(out, a, b, torch.tensor([[0.5], [2.0]]), torch.tensor([[2.0, 1.0]]), bias)
    # acc = [[11, 5], [-7, -5]]
    assert out.tolist() == [[12.0, 1.5], [-27.0, -11.0]]
    azp_out = torch.empty(2, 2, dtype=torch.float32)
    ref = _ref("cutlass_scaled_mm_azp")
    ref(azp_out, a, b, torch.tensor([1.0]), torch.tensor([1.0]), torch.tensor([7, 3], dtype=torch.int32))
    assert azp_out.tolist() == [[4.0, 2.0], [-14.0, -8.0]]
    ref(azp_out, a, b, torch.tensor([1.0]), torch.tensor([1.0]), torch.tensor([7, 3], dtype=torch.int32),
        torch.tensor([1, -2], dtype=torch.int32))
    assert azp_out.tolist() == [[4.0, 2.0], [7.0, 1.0]]
