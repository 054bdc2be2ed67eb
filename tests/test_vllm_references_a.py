"""The references of the vLLM quantisation, cache and attention-merge operators against
values worked out by hand on tiny inputs: a wrong reference would make every candidate
look wrong (or a wrong candidate look right)."""

from __future__ import annotations

import math

import pytest
import torch

from kgb import operators
from kgb.vllm.quant import compare_codes, to_fp8, to_int8


def _ref(name):
    return operators.load(f"vllm::{name}").module.reference


def _fp8(values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float32).to(torch.float8_e4m3fn)


def test_fp8_rounds_to_nearest_even_and_saturates():
    x = torch.tensor([1.0625, 1.1875, 500.0, -1000.0, -1.5 * 2**-9, 2**-10, 149.33])
    # ties go to the even mantissa; subnormals step by 2**-9; [128, 256) by 16; beyond 448 saturates
    assert to_fp8(x).float().tolist() == [1.0, 1.25, 448.0, -448.0, -(2**-8), 0.0, 144.0]
    assert to_fp8(torch.tensor([2.0, 4.0])).view(torch.uint8).tolist() == [0x40, 0x48]


def test_int8_rounds_half_to_even_and_saturates():
    x = torch.tensor([0.5, 1.5, 2.5, -0.5, -63.5, 130.0, -200.0])
    assert to_int8(x).tolist() == [0, 2, 2, 0, -64, 127, -128]


def test_compare_codes_allows_only_rare_neighbours():
    e = _fp8([1.0] * 2000)
    one_off = e.clone().view(torch.uint8)
    one_off[0] += 1
    assert compare_codes("x", one_off.view(torch.float8_e4m3fn), e) is None
    two_off = e.clone().view(torch.uint8)
    two_off[0] += 2
    assert compare_codes("x", two_off.view(torch.float8_e4m3fn), e)
    many = e.clone().view(torch.uint8)
    many[:10] += 1
    assert compare_codes("x", many.view(torch.float8_e4m3fn), e)
    assert compare_codes("x", one_off.view(torch.float8_e4m3fn), e, off_by_one_share=0.0)


def test_compare_codes_lets_a_small_output_have_a_few_neighbours_but_not_many():
    """On the H200 a correct kernel had 1 of a smoke case's 480 codes one step away (a scale
    one ulp off, a value on a rounding tie): 0.2%, over the share, yet no sign of a bug."""
    e = _fp8([1.0] * 480)
    few = e.clone().view(torch.uint8)
    few[:4] += 1
    assert compare_codes("x", few.view(torch.float8_e4m3fn), e) is None
    many = e.clone().view(torch.uint8)
    many[:5] += 1
    assert "5 of 480 codes are one step away" in compare_codes("x", many.view(torch.float8_e4m3fn), e)
    assert compare_codes("x", few.view(torch.float8_e4m3fn), e, off_by_one_share=0.0)  # bit for bit stays so


def test_rms_norm_dynamic_per_token_quant_by_hand():
    ref = _ref("rms_norm_dynamic_per_token_quant")
    # x = [1, 2]: rms = sqrt(2.5), y = x / rms, absmax 2 / sqrt(2.5); fp8 codes 224 and 448
    x = torch.tensor([[1.0, 2.0]])
    out, scale = torch.empty(1, 2, dtype=torch.float8_e4m3fn), torch.empty(1, 1)
    ref(out, x, torch.ones(2), scale, 0.0, None, None)
    assert out.float().tolist() == [[224.0, 448.0]]
    assert scale.item() == pytest.approx(2 / math.sqrt(2.5) / 448, rel=1e-6)
    # int8 with a residual: x = [1, 1] + [0, 2] = [1, 3]; codes round(127 / 3) = 42 and 127
    out8, res = torch.empty(1, 2, dtype=torch.int8), torch.tensor([[0.0, 2.0]])
    ref(out8, torch.tensor([[1.0, 1.0]]), torch.ones(2), scale, 0.0, None, res)
    assert out8.tolist() == [[42, 127]] and res.tolist() == [[1.0, 3.0]]
    assert scale.item() == pytest.approx(3 / math.sqrt(5) / 127, rel=1e-6)
    # an upper bound on absmax clips: y = [1, 1] / 1 with ub 0.5 -> scale 0.5 / 448, codes 448
    ref(out, torch.tensor([[1.0, 1.0]]), torch.ones(2), scale, 0.0, torch.tensor([0.5]), None)
    assert out.float().tolist() == [[448.0, 448.0]] and scale.item() == pytest.approx(0.5 / 448)


def test_rms_norm_dynamic_per_token_quant_rounds_before_the_weight():
    ref = _ref("rms_norm_dynamic_per_token_quant")
    # bfloat16 x = [1, 3]: 3 / sqrt(5) = 1.34164 rounds to 1.34375; times w = 0.900390625
    # (bf16 of 0.9) = 1.20990 rounds to 1.2109375, the absmax (unrounded: 1.20800)
    out, scale = torch.empty(1, 2, dtype=torch.float8_e4m3fn), torch.empty(1, 1)
    ref(out, torch.tensor([[1.0, 3.0]]).bfloat16(), torch.tensor([1.1, 0.9]).bfloat16(), scale, 0.0,
        None, None)
    assert scale.item() == torch.tensor(1.2109375 / 448, dtype=torch.float32).item()
    assert out.float()[0, 1].item() == 448.0


def test_rms_norm_per_block_quant_by_hand():
    ref = _ref("rms_norm_per_block_quant")
    # x = [1, 3, 2, 2]: rms = sqrt(4.5); groups of two: [1, 3] / rms -> codes 448/3 -> 144, 448;
    # [2, 2] / rms -> 448, 448. Scales are each group's absmax / 448, stored transposed.
    x = torch.tensor([[1.0, 3.0, 2.0, 2.0]])
    out = torch.empty(1, 4, dtype=torch.float8_e4m3fn)
    scale = torch.empty(2, 1).t()
    ref(out, x, torch.ones(4), scale, 0.0, None, None, 2, True)
    assert out.float().tolist() == [[144.0, 448.0, 448.0, 448.0]]
    rms = math.sqrt(4.5)
    assert scale.flatten().tolist() == pytest.approx([3 / rms / 448, 2 / rms / 448], rel=1e-6)


def test_scaled_fp8_quant_modes_by_hand():
    ref = _ref("scaled_fp8_quant")
    out, s = ref(torch.tensor([[1.0, -2.0, 1000.0]]), torch.tensor([0.5]))
    assert out.float().tolist() == [[2.0, -4.0, 448.0]] and s.tolist() == [0.5]
    out, s = ref(torch.tensor([[2.0, -896.0]]))  # per tensor: scale 896 / 448 = 2
    assert out.float().tolist() == [[1.0, -448.0]] and s.tolist() == [2.0]
    out, s = ref(torch.tensor([[1.0, 2.0], [0.0, 0.0]]), use_per_token_if_dynamic=True, num_token_padding=3)
    assert out.shape == (3, 2) and out[:2].float().tolist() == [[224.0, 448.0], [0.0, 0.0]]
    assert s[:2, 0].tolist() == pytest.approx([2 / 448, 1 / (448 * 512)])


def test_scaled_int8_quant_modes_by_hand():
    ref = _ref("scaled_int8_quant")
    x = torch.tensor([[0.25, 0.75, 100.0]])
    q, _, azp = ref(x, torch.tensor([0.5]))
    assert q.tolist() == [[0, 2, 127]] and azp is None
    q, _, azp = ref(x, torch.tensor([0.5]), torch.tensor([-10], dtype=torch.int32), symmetric=False)
    assert q.tolist() == [[-10, -8, 127]]
    q, s, _ = ref(torch.tensor([[1.0, -2.0, 4.0]]))  # multiplier 127 / 4 = 31.75; -63.5 -> -64
    assert q.tolist() == [[32, -64, 127]] and s.item() == pytest.approx(4 / 127)
    q, s, azp = ref(torch.tensor([[-1.0, 0.0, 3.0]]), symmetric=False)
    # s = 4 / 255, zero point rn(-128 + 63.75) = -64
    assert q.tolist() == [[-128, -64, 127]] and azp.tolist() == [[-64]]
    assert s.item() == pytest.approx(4 / 255)


def test_reshape_and_cache_layout_by_hand():
    ref = _ref("reshape_and_cache")
    key = torch.arange(16, dtype=torch.float32).view(2, 1, 8)
    value = -key
    key_cache = torch.zeros(2, 1, 2, 2, 4)  # float32: x = 4; block_size 2
    value_cache = torch.zeros(2, 1, 8, 2)
    one = torch.tensor([1.0])
    ref(key, value, key_cache, value_cache, torch.tensor([3, -1]), "auto", one, one)
    # token 0 -> slot 3 = block 1, offset 1; token 1 is padding
    assert key_cache[1, 0, 0, 1].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert key_cache[1, 0, 1, 1].tolist() == [4.0, 5.0, 6.0, 7.0]
    assert value_cache[1, 0, :, 1].tolist() == [-float(i) for i in range(8)]
    assert int((key_cache != 0).sum()) == 7 and int((value_cache != 0).sum()) == 7
    k8 = torch.zeros(2, 1, 1, 2, 16, dtype=torch.uint8)
    v8 = torch.zeros(2, 1, 16, 2, dtype=torch.uint8)
    ref(torch.ones(1, 1, 16), torch.ones(1, 1, 16), k8, v8, torch.tensor([0]), "fp8",
        torch.tensor([0.5]), torch.tensor([0.25]))
    assert k8[0, 0, 0, 0].tolist() == [0x40] * 16 and v8[0, 0, :, 0].tolist() == [0x48] * 16


def test_reshape_and_cache_flash_and_mla_by_hand():
    flash = _ref("reshape_and_cache_flash")
    key = torch.arange(8, dtype=torch.float32).view(1, 2, 4)
    both = torch.zeros(3, 2, 2, 2, 4)  # [blocks, k/v, block_size, heads, head_size]
    key_cache, value_cache = both.unbind(1)
    one = torch.tensor([1.0])
    flash(key, -key, key_cache, value_cache, torch.tensor([5]), "auto", one, one)
    assert both[2, 0, 1].flatten().tolist() == list(range(8))
    assert both[2, 1, 1].flatten().tolist() == [-float(i) for i in range(8)]
    assert int((both != 0).sum()) == 14  # element 0 of each is +-0
    mla = _ref("concat_and_cache_mla")
    cache = torch.zeros(2, 2, 5)
    mla(torch.tensor([[1.0, 2.0, 3.0]]), torch.tensor([[4.0, 5.0]]), cache, torch.tensor([2]), "auto", one)
    assert cache[1, 0].tolist() == [1.0, 2.0, 3.0, 4.0, 5.0] and int((cache != 0).sum()) == 5


def test_convert_fp8_both_ways_by_hand():
    ref = _ref("convert_fp8")
    dst = torch.empty(2, dtype=torch.uint8)
    ref(dst, torch.tensor([2.0, 1000.0], dtype=torch.bfloat16), 0.5, "fp8")
    assert dst.tolist() == [0x48, 0x7E]  # 4.0 and the saturated 448
    back = torch.empty(2, dtype=torch.float16)
    ref(back, torch.tensor([0x48, 0xC0], dtype=torch.uint8), 0.5, "fp8")
    assert back.tolist() == [2.0, -1.0]


def test_block_copies_by_hand():
    caches = [torch.arange(12.0).view(4, 3), torch.arange(12.0).view(4, 3) + 100]
    values = [c.clone() for c in caches]
    _ref("copy_blocks")(caches, values, torch.tensor([[0, 2], [3, 1]]))
    assert caches[0].tolist() == [[0, 1, 2], [9, 10, 11], [0, 1, 2], [9, 10, 11]]
    assert caches[1][2].tolist() == [100, 101, 102]
    mla = [torch.arange(8.0).view(2, 2, 2)]
    _ref("copy_blocks_mla")(mla, torch.tensor([[1, 0]]))
    assert mla[0][0].tolist() == [[4, 5], [6, 7]]
    src, dst = torch.arange(6.0).view(3, 2), torch.zeros(2, 2)
    _ref("swap_blocks")(src, dst, torch.tensor([[2, 0]]))
    assert dst.tolist() == [[4, 5], [0, 0]]


def test_cache_gathers_by_hand():
    cache = torch.arange(3 * 2 * 2, dtype=torch.float32).view(3, 2, 2)  # 3 blocks of 2 slots
    table = torch.tensor([[2, 0]], dtype=torch.int32)
    cu = torch.tensor([0, 3], dtype=torch.int32)
    dst = torch.empty(3, 2)
    _ref("cp_gather_cache")(cache, dst, table, cu, 1, None)  # (2,0) (2,1) (0,0)
    assert dst.tolist() == [[8, 9], [10, 11], [0, 1]]
    _ref("cp_gather_cache")(cache, dst, table, cu, 1, torch.tensor([1], dtype=torch.int32))
    assert dst.tolist() == [[10, 11], [0, 1], [2, 3]]  # positions 1, 2, 3
    codes = torch.tensor([[[0x40, 0x48]], [[0xC0, 0x00]]], dtype=torch.uint8)  # 2 blocks of 1 slot
    out = torch.full((3, 2), 7.0)
    _ref("gather_and_maybe_dequant_cache")(
        codes, out, torch.tensor([[1, 0]], dtype=torch.int32), torch.tensor([0, 2], dtype=torch.int32),
        torch.tensor([0, 0], dtype=torch.int32), 2, "fp8", torch.tensor([0.5]), None)
    assert out.tolist() == [[-1.0, 0.0], [1.0, 2.0], [7.0, 7.0]]


def test_indexer_gather_reads_keys_then_scales_by_hand():
    kv = torch.arange(2 * 2 * 132, dtype=torch.int32).remainder(251).to(torch.uint8).view(2, 2, 132)
    flat = kv.view(2, -1)  # a block: 2 x 128 key bytes, then 2 x 4 scale bytes
    dst_k = torch.empty(2, 128, dtype=torch.uint8)
    dst_scale = torch.empty(2, 4, dtype=torch.uint8)
    _ref("cp_gather_indexer_k_quant_cache")(kv, dst_k, dst_scale, torch.tensor([[1]], dtype=torch.int32),
                                            torch.tensor([0, 2], dtype=torch.int32))
    assert torch.equal(dst_k[1], flat[1, 128:256])
    assert torch.equal(dst_scale, flat[1, 256:264].view(2, 4))


def test_merge_attn_states_by_hand():
    prefix = torch.tensor([[[4.0, 8.0]]]).repeat(4, 1, 1)  # 4 tokens, 1 head, head_size 2
    suffix = torch.tensor([[[0.0, 4.0]]]).repeat(4, 1, 1)
    inf = float("inf")
    p_lse = torch.tensor([[0.0, -inf, -inf, inf]])
    s_lse = torch.tensor([[math.log(3.0), 0.0, -inf, 0.0]])
    out, out_lse = torch.empty(4, 1, 2), torch.empty(1, 4)
    _ref("merge_attn_states")(out, out_lse, prefix, p_lse, suffix, s_lse)
    # weights 1/4 and 3/4; only the suffix; neither (the prefix is copied); +inf counts as empty
    assert out[:, 0].flatten().tolist() == pytest.approx([1.0, 5.0, 0.0, 4.0, 4.0, 8.0, 0.0, 4.0])
    assert out_lse[0].tolist() == pytest.approx([math.log(4.0), 0.0, -inf, 0.0])


@pytest.mark.parametrize("neox", [True, False])
def test_fused_qk_norm_rope_by_hand(neox):
    x = torch.tensor([1.0, 2.0, 3.0, 4.0])
    qkv = torch.cat([x, x, x]).view(1, 12).to(torch.bfloat16)  # one q, one k, one v head of 4
    cache = torch.tensor([[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]])  # position 1: cos 0, sin 1
    _ref("fused_qk_norm_rope")(qkv, 1, 1, 1, 4, 0.0, torch.ones(4).bfloat16(),
                               (2 * torch.ones(4)).bfloat16(), cache, neox, torch.tensor([1]))
    y = x / math.sqrt(7.5)
    # a 90-degree turn: (a, b) -> (-b, a); NeoX pairs (0, 2), (1, 3), GPT-J pairs (0, 1), (2, 3)
    turned = torch.stack([-y[2], -y[3], y[0], y[1]]) if neox else torch.stack([-y[1], y[0], -y[3], y[2]])
    got = qkv.float().view(3, 4)
    assert got[0].tolist() == pytest.approx(turned.tolist(), rel=4e-3)
    assert got[1].tolist() == pytest.approx((2 * turned).tolist(), rel=4e-3)
    assert got[2].tolist() == x.tolist()
