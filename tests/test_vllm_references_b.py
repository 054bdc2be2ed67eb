"""The references of fifteen vLLM operator specs against values worked out by hand on tiny
inputs, and their custom comparisons against answers that must pass or fail. A wrong
reference would make every candidate look wrong, so each is pinned here independently of
the Triton solutions."""

from __future__ import annotations

import math

import pytest
import torch

from kgb import operators
from kgb.operators import Case
from kgb.vllm.attention import PagedShape, key_split
from kgb.vllm.moe import segment_layout


def spec(name: str):
    return operators.load(f"vllm::{name}").module


def i32(values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.int32)


# ---- simple data movement and elementwise ops ---------------------------------------


def test_permute_cols_gathers_columns():
    A = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=torch.float16)
    out = spec("permute_cols").reference(A, i32([2, 0, 1]))
    assert out.tolist() == [[3.0, 1.0, 2.0], [6.0, 4.0, 5.0]]


def test_shuffle_rows_repeats_and_drops_rows_bit_exactly():
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]).to(torch.float8_e4m3fn)
    out = torch.empty(3, 2, dtype=torch.float8_e4m3fn)
    spec("shuffle_rows").reference(x, i32([2, 0, 2]), out)
    assert out.float().tolist() == [[5.0, 6.0], [1.0, 2.0], [5.0, 6.0]]


def test_moe_sum_rounds_each_addition_for_small_topk_only():
    ref = spec("moe_sum").reference
    # 2048 + 1 is a tie in float16 (spacing 2) and rounds to even 2048; twice over, the
    # sequential half-precision sum stays 2048, while a float32 sum gives 2050
    three = torch.tensor([[[2048.0], [1.0], [1.0]]], dtype=torch.float16)
    out = torch.empty(1, 1, dtype=torch.float16)
    ref(three, out)
    assert out.item() == 2048.0
    five = torch.tensor([[[2048.0], [1.0], [1.0], [0.0], [0.0]]], dtype=torch.float16)
    ref(five, out)
    assert out.item() == 2050.0


def test_repetition_penalty_divides_positive_and_multiplies_the_rest():
    logits = torch.tensor([[2.0, -2.0, 0.0, 3.0, -1.0]])
    prompt = torch.tensor([[True, False, True, False, False]])
    output = torch.tensor([[False, True, False, False, False]])
    spec("apply_repetition_penalties_cuda").reference(logits, prompt, output, torch.tensor([2.0]))
    assert logits.tolist() == [[1.0, -4.0, 0.0, 3.0, -1.0]]


# ---- routers ---------------------------------------------------------------------------


def _topk_softmax(gating, k, renormalize):
    t = gating.shape[0]
    out = dict(topk_weights=torch.empty(t, k), topk_indices=torch.empty(t, k, dtype=torch.int32),
               token_expert_indices=torch.empty(t, k, dtype=torch.int32))
    spec("topk_softmax").reference(**out, gating_output=gating, renormalize=renormalize)
    return out


def test_topk_softmax_picks_the_largest_probabilities_lower_index_on_ties():
    gating = torch.log(torch.tensor([[1.0, 2.0, 3.0, 2.0], [4.0, 1.0, 1.0, 2.0]]))  # probs x/8
    out = _topk_softmax(gating, 2, renormalize=False)
    assert out["topk_indices"].tolist() == [[2, 1], [0, 3]]
    assert torch.allclose(out["topk_weights"], torch.tensor([[0.375, 0.25], [0.5, 0.25]]))
    assert out["token_expert_indices"].tolist() == [[0, 2], [1, 3]]
    renormed = _topk_softmax(gating, 2, renormalize=True)
    assert torch.allclose(renormed["topk_weights"], torch.tensor([[0.6, 0.4], [2 / 3, 1 / 3]]))


def test_topk_softmax_compare_accepts_either_tied_expert_and_nothing_else():
    mod = spec("topk_softmax")
    gating = torch.log(torch.tensor([[1.0, 2.0, 3.0, 2.0]]))
    expected = _topk_softmax(gating, 2, renormalize=False)
    case = Case("t", "smoke", reduction=4)
    inputs = dict(gating_output=gating, renormalize=False)
    tie = {**expected, "topk_indices": i32([[2, 3]])}
    assert mod.compare(tie, expected, case, inputs) is None
    wrong = {**expected, "topk_indices": i32([[2, 0]])}
    assert "topk_indices" in mod.compare(wrong, expected, case, inputs)
    twice = {**expected, "topk_indices": i32([[2, 2]])}
    assert "twice" in mod.compare(twice, expected, case, inputs)
    zeros = {**expected, "topk_weights": torch.zeros(1, 2)}
    assert "topk_weights" in mod.compare(zeros, expected, case, inputs)


def test_grouped_topk_restricts_the_choice_to_the_best_groups():
    # group 0 sums its two best to 0.8, group 1 to 0.85: only group 1 may be chosen,
    # although expert 1 has the highest score of all
    scores = torch.tensor([[0.1, 0.5, 0.2, 0.3, 0.4, 0.45, 0.0, 0.05]])
    ref = spec("grouped_topk").reference
    values, ids = ref(scores, 2, 1, 2, True, 2.0, torch.zeros(8), 0)
    assert ids.tolist() == [[5, 4]]
    assert torch.allclose(values, torch.tensor([[0.45 / 0.85 * 2.0, 0.4 / 0.85 * 2.0]]))
    values, ids = ref(scores, 2, 1, 2, False, 1.0, torch.zeros(8), 0)
    assert torch.allclose(values, torch.tensor([[0.45, 0.4]]))


def test_grouped_topk_bias_steers_selection_but_not_weights():
    scores = torch.tensor([[0.0, 0.0, 0.0, 0.0]])  # sigmoid: every s = 0.5
    bias = torch.tensor([0.0, 0.3, 0.0, 0.1])
    values, ids = spec("grouped_topk").reference(scores, 1, 1, 2, False, 1.0, bias, 1)
    assert ids.tolist() == [[1, 3]]
    assert values.tolist() == [[0.5, 0.5]]


def test_grouped_topk_compare_rejects_an_expert_of_a_dropped_group():
    mod = spec("grouped_topk")
    scores = torch.tensor([[0.1, 0.5, 0.2, 0.3, 0.4, 0.45, 0.0, 0.05]])
    inputs = dict(scores=scores, n_group=2, topk_group=1, topk=2, renormalize=False, routed_scaling_factor=1.0,
                  bias=torch.zeros(8), scoring_func=0)
    expected = {"return": mod.reference(**inputs)}
    assert mod.compare(expected, expected, Case("t", "smoke"), inputs) is None
    wrong = {"return": (torch.tensor([[0.5, 0.45]]), i32([[1, 5]]))}
    assert "topk_indices" in mod.compare(wrong, expected, Case("t", "smoke"), inputs)


# ---- moe align -----------------------------------------------------------------------------

# vLLM's own docstring example: 4 tokens, top-3, block 4 (ids up to 4, so 5 experts)
DOC_IDS = i32([[2, 3, 4], [1, 2, 4], [1, 3, 4], [1, 2, 3]])
DOC_SORTED = [3, 6, 9, 12, 0, 4, 10, 12, 1, 7, 11, 12, 2, 5, 8, 12] + [12] * 11


def _align(topk_ids, num_experts, block, expert_map=None):
    n = topk_ids.numel() + num_experts * (block - 1)
    out = dict(sorted_token_ids=torch.empty(n, dtype=torch.int32),
               experts_ids=torch.empty(-(-n // block), dtype=torch.int32),
               num_tokens_post_pad=torch.empty(1, dtype=torch.int32))
    spec("moe_align_block_size").reference(topk_ids, num_experts, block, **out, expert_map=expert_map)
    return out


def test_moe_align_block_size_matches_vllms_worked_example():
    out = _align(DOC_IDS, 5, 4)
    assert out["sorted_token_ids"].tolist() == DOC_SORTED
    assert out["experts_ids"].tolist() == [1, 2, 3, 4, 0, 0, 0]
    assert out["num_tokens_post_pad"].tolist() == [16]


def test_moe_align_block_size_with_an_expert_map_drops_other_shards():
    expert_map = i32([-1, -1, -1, 0, 1])  # experts 3 and 4 live here as 0 and 1
    out = _align(DOC_IDS, 5, 4, expert_map)
    assert out["sorted_token_ids"].tolist()[:8] == [1, 7, 11, 12, 2, 5, 8, 12]
    assert set(out["sorted_token_ids"].tolist()[8:]) == {12}
    assert out["experts_ids"].tolist() == [0, 1, 0, 0, 0, 0, 0]
    assert out["num_tokens_post_pad"].tolist() == [8]


def test_moe_align_compare_accepts_any_order_inside_a_segment_only():
    mod = spec("moe_align_block_size")
    expected = _align(DOC_IDS, 5, 4)
    inputs = dict(topk_ids=DOC_IDS, num_experts=5, block_size=4, expert_map=None)
    case = Case("t", "smoke")

    def with_sorted(values):
        return {**expected, "sorted_token_ids": i32(values)}

    shuffled = DOC_SORTED.copy()
    shuffled[0:3] = [9, 3, 6]
    assert mod.compare(with_sorted(shuffled), expected, case, inputs) is None
    padding_first = DOC_SORTED.copy()
    padding_first[0:4] = [12, 3, 6, 9]
    assert "position 3 (padding" in mod.compare(with_sorted(padding_first), expected, case, inputs)
    swapped = DOC_SORTED.copy()
    swapped[0], swapped[4] = swapped[4], swapped[0]  # slot 0 (expert 2) in expert 1's segment
    assert "segment" in mod.compare(with_sorted(swapped), expected, case, inputs)
    duplicated = DOC_SORTED.copy()
    duplicated[1] = 3
    assert "segment" in mod.compare(with_sorted(duplicated), expected, case, inputs)


def test_batched_moe_align_block_size_lays_out_batches_in_order():
    out = dict(sorted_token_ids=torch.empty(40, dtype=torch.int32), experts_ids=torch.empty(10, dtype=torch.int32),
               num_tokens_post_pad=torch.empty(1, dtype=torch.int32))
    spec("batched_moe_align_block_size").reference(8, 4, i32([2, 3, 0, 6, 8]), **out)
    assert out["sorted_token_ids"].tolist() == (
        [0, 1, 40, 40, 8, 9, 10, 40, 24, 25, 26, 27, 28, 29, 40, 40] + list(range(32, 40)) + [40] * 16
    )
    assert out["experts_ids"].tolist() == [0, 1, 3, 3, 4, 4, -1, -1, -1, -1]
    assert out["num_tokens_post_pad"].tolist() == [24]


def test_moe_lora_align_block_size_fills_only_the_active_adapters_rows():
    topk_ids = i32([[0, 1], [1, 0], [1, 0]])
    kept = dict(sorted_token_ids=torch.full((16,), -5, dtype=torch.int32),
                experts_ids=torch.full((8,), -5, dtype=torch.int32),
                num_tokens_post_pad=torch.full((2,), -5, dtype=torch.int32))
    spec("moe_lora_align_block_size").reference(
        topk_ids, i32([1, -1, 1]), 2, 2, 2, 8, 4, **kept, adapter_enabled=i32([1, 1, 1]), lora_ids=i32([1, -1, -1]))
    # adapter 1 owns tokens 0 and 2: slots 0 (expert 0), 1 (expert 1), 4 (expert 1), 5 (expert 0)
    assert kept["sorted_token_ids"].tolist() == [-5] * 8 + [0, 5, 1, 4, 6, 6, 6, 6]
    assert kept["experts_ids"].tolist() == [-5] * 4 + [0, 1, -1, -1]
    assert kept["num_tokens_post_pad"].tolist() == [-5, 4]


def test_a_disabled_adapter_is_skipped():
    kept = dict(sorted_token_ids=torch.full((16,), -5, dtype=torch.int32),
                experts_ids=torch.full((8,), -5, dtype=torch.int32),
                num_tokens_post_pad=torch.full((2,), -5, dtype=torch.int32))
    spec("moe_lora_align_block_size").reference(
        i32([[0, 1], [1, 0], [1, 0]]), i32([1, -1, 1]), 2, 2, 2, 8, 4, **kept, adapter_enabled=i32([1, 0, 1]),
        lora_ids=i32([1, -1, -1]))
    assert set(kept["sorted_token_ids"].tolist()) == {-5} and set(kept["num_tokens_post_pad"].tolist()) == {-5}


def test_segment_layout_counts_only_masked_tokens():
    layout = segment_layout(DOC_IDS, 5, 4, token_mask=torch.tensor([True, False, False, True]))
    assert layout.counts.tolist() == [0, 1, 2, 2, 1]
    assert layout.ends.tolist() == [0, 4, 8, 12, 16]


# ---- paged attention ------------------------------------------------------------------------


def _paged(keys, values, tables, lens, block, alibi=None):
    """Caches in vLLM's layout from per-slot keys/values [num_blocks, block, head_size]
    (one KV head), the query e_0 and scale 1."""
    blocks, _, d = keys.shape
    x = key_split(keys.dtype)
    key_cache = keys.view(blocks, block, d // x, x).permute(0, 2, 1, 3).reshape(blocks, 1, d // x, block, x)
    value_cache = values.permute(0, 2, 1).reshape(blocks, 1, d, block).contiguous()
    query = torch.zeros(len(lens), 1, d)
    query[:, 0, 0] = 1.0
    return dict(query=query, key_cache=key_cache.contiguous(), value_cache=value_cache, num_kv_heads=1, scale=1.0,
                block_tables=i32(tables), seq_lens=i32(lens), block_size=block, max_seq_len=max(lens),
                alibi_slopes=alibi, kv_cache_dtype="auto", k_scale=torch.ones(1), v_scale=torch.ones(1))


def test_paged_attention_v1_follows_the_block_table():
    # one sequence of 3 tokens in physical blocks 1 then 0; key dim 0 = ln(weight):
    # weights 1, 2, 1 -> probabilities 1/4, 1/2, 1/4; value dim 0 = token index + 1
    keys, values = torch.zeros(2, 2, 32), torch.zeros(2, 2, 32)
    for j, (blk, slot) in enumerate([(1, 0), (1, 1), (0, 0)]):
        keys[blk, slot, 0] = math.log([1.0, 2.0, 1.0][j])
        values[blk, slot, 0] = j + 1.0
    keys[0, 1, 0], values[0, 1, 0] = 50.0, 1000.0  # slot past the end: must be ignored
    args = _paged(keys, values, [[1, 0]], [3], 2)
    out = torch.empty(1, 1, 32)
    spec("paged_attention_v1").reference(out, **args)
    assert out[0, 0, 0].item() == pytest.approx(2.0, rel=1e-5)
    assert out[0, 0, 1:].abs().max().item() == 0.0


def test_paged_attention_alibi_adds_a_distance_bias():
    keys, values = torch.zeros(1, 4, 32), torch.zeros(1, 4, 32)
    values[0, :3, 0] = torch.tensor([1.0, 2.0, 3.0])
    slope = math.log(2.0)  # biases -2 ln2, -ln2, 0: weights 1/4, 1/2, 1
    args = _paged(keys, values, [[0]], [3], 4, alibi=torch.tensor([slope]))
    out = torch.empty(1, 1, 32)
    spec("paged_attention_v1").reference(out, **args)
    assert out[0, 0, 0].item() == pytest.approx((0.25 * 1 + 0.5 * 2 + 1 * 3) / 1.75, rel=1e-5)


def test_paged_attention_v2_writes_each_partition_and_combines_them():
    length = 600  # partitions of 512 and 88 tokens, all keys equal
    keys, values = torch.zeros(length // 8, 8, 32), torch.zeros(length // 8, 8, 32)
    values.view(length, 32)[:512, 0] = 1.0
    values.view(length, 32)[512:, 0] = 3.0
    args = _paged(keys, values, [list(range(length // 8))], [length], 8)
    ws = dict(out=torch.empty(1, 1, 32), exp_sums=torch.full((1, 1, 2), -1.0), max_logits=torch.full((1, 1, 2), -1.0),
              tmp_out=torch.empty(1, 1, 2, 32))
    spec("paged_attention_v2").reference(**ws, **args)
    assert ws["exp_sums"].flatten().tolist() == [512.0, 88.0]
    assert ws["max_logits"].flatten().tolist() == [0.0, 0.0]
    assert ws["tmp_out"][0, 0, :, 0].tolist() == pytest.approx([1.0, 3.0], rel=1e-5)
    assert ws["out"][0, 0, 0].item() == pytest.approx((512 + 88 * 3) / 600, rel=1e-5)


def test_paged_attention_v2_compare_ignores_partitions_that_do_not_exist():
    mod = spec("paged_attention_v2")
    case = next(c for c in mod.CASES if c.tag == "smoke")
    inputs = mod.make_inputs(case, torch.Generator().manual_seed(0), "cpu")
    inputs["seq_lens"][1] = 100  # the second sequence has one partition only
    mod.reference(**inputs)
    expected = {k: inputs[k] for k in mod.OUTPUT_ARGS}
    actual = {k: v.clone() for k, v in expected.items()}
    actual["exp_sums"][1, :, 1] = float("nan")
    assert mod.compare(actual, expected, case, inputs) is None
    actual["exp_sums"][0, :, 1] = float("nan")
    assert "exp_sums" in mod.compare(actual, expected, case, inputs)


def test_paged_shape_builds_gqa_caches_in_vllms_layout():
    shape = PagedShape(2, 4, 2, 64, 16, 40, "bfloat16")
    args = spec("paged_attention_v1").make_inputs(Case("t", "smoke", dict(shape=shape)), torch.Generator(), "cpu")
    assert args["key_cache"].shape[1:] == (2, 8, 16, 8) and args["value_cache"].shape[1:] == (2, 64, 16)
    assert args["block_tables"].shape == (2, 3) and args["seq_lens"].max().item() == 40


def test_a_paged_case_has_the_same_lengths_in_every_draw_and_new_values():
    """The lengths set a call's work: a timing on a draw from a secret seed must do the same
    work as the baseline's on the case's seed."""
    mod = spec("paged_attention_v2")
    case = next(c for c in mod.CASES if c.tag == "check" and c.params["shape"].seqs > 2)
    one, two = (mod.make_inputs(case, torch.Generator().manual_seed(seed), "cpu") for seed in (1, 2))
    assert torch.equal(one["seq_lens"], two["seq_lens"])
    assert len(set(one["seq_lens"].tolist())) > 1  # still lengths of different sequences
    assert not torch.equal(one["query"], two["query"])


def test_a_paged_cases_lengths_are_drawn_on_the_cpu_whatever_the_default_device():
    """A GPU draw runs under `with torch.device("cuda")` (kgb.evaluate.draws); the lengths'
    own generator is a CPU one. Here the meta device stands in for the GPU."""
    from kgb.vllm.attention import paged_lengths

    shape = PagedShape(4, 4, 2, 64, 16, 40, "bfloat16")
    with torch.device("meta"):
        lens = paged_lengths(shape)
    assert lens.device.type == "cpu" and torch.equal(lens, paged_lengths(shape))


# ---- selective scan --------------------------------------------------------------------------


def _scan_inputs(**over):
    args = dict(u=torch.tensor([[2.0, 3.0]]), delta=torch.tensor([[0.5, 1.0]]), A=torch.tensor([[-1.0]]),
                B=torch.tensor([[[1.0, 1.0]]]), C=torch.tensor([[[1.0, 2.0]]]), D_=None, z_=None, delta_bias_=None,
                delta_softplus=False, query_start_loc=i32([0, 2]), cache_indices=i32([1]),
                has_initial_state=torch.tensor([False]), ssm_states=torch.full((2, 1, 1), 7.0), pad_slot_id=-1)
    args.update(over)
    return args


def test_selective_scan_recurrence_by_hand():
    args = _scan_inputs()
    spec("selective_scan_fwd").reference(**args)
    h2 = math.exp(-1.0) * 1.0 + 3.0  # h1 = 0.5 * 2 = 1
    assert args["delta"].flatten().tolist() == pytest.approx([1.0, 2 * h2])
    assert args["ssm_states"].flatten().tolist() == pytest.approx([7.0, h2])  # slot 1 only


def test_selective_scan_initial_state_skip_term_gate_and_softplus():
    args = _scan_inputs(has_initial_state=torch.tensor([True]), D_=torch.tensor([1.0]),
                        z_=torch.tensor([[0.0, 1.0]]))
    spec("selective_scan_fwd").reference(**args)
    h1 = 7.0 * math.exp(-0.5) + 1.0
    h2 = math.exp(-1.0) * h1 + 3.0
    y = [h1 + 2.0, 2 * h2 + 3.0]
    assert args["delta"].flatten().tolist() == pytest.approx(y)
    assert args["z_"].flatten().tolist() == pytest.approx([0.0, y[1] / (1 + math.exp(-1.0))])
    soft = _scan_inputs(delta=torch.tensor([[0.0, 0.0]]), delta_softplus=True)
    spec("selective_scan_fwd").reference(**soft)
    dt = math.log(2.0)
    assert soft["delta"][0, 0].item() == pytest.approx(dt * 2.0)


def test_selective_scan_skips_padding_sequences():
    args = _scan_inputs(cache_indices=i32([-1]))
    spec("selective_scan_fwd").reference(**args)
    assert args["delta"].flatten().tolist() == [0.5, 1.0] and args["ssm_states"].flatten().tolist() == [7.0, 7.0]


def test_selective_scan_speed_baseline_computes_what_the_reference_does_on_every_checked_case():
    """The speed baseline batches the sequences (one loop over tokens for all); it must write
    what the reference writes, padding, groups, ragged lengths and missing extras included."""
    from kgb.evaluate.correctness import clone_exact
    from kgb.evaluate.draws import draw_inputs

    scan = operators.load("vllm::selective_scan_fwd")
    assert scan.module.speed_baseline("selective_scan_fwd", "cuda") == ("torch", scan.module.batched_scan)
    for case in (c for c in scan.cases if c.tag != "bench"):
        drawn = draw_inputs(scan, case, case.seed, "cpu")
        ref, batched = clone_exact(drawn), clone_exact(drawn)
        scan.module.reference(**ref)
        scan.module.batched_scan(**batched)
        for name in scan.inout_args:
            if ref[name] is not None:
                torch.testing.assert_close(batched[name], ref[name], rtol=1e-5, atol=1e-5, msg=f"{case.name}: {name}")


def _scan_token_by_token(u, delta, A, B, C, D, z, bias, softplus, h):
    """The oracle: the reference's scan until session 68, everything computed token by token
    (its inputs widened and its outputs finished as the spec's helpers do)."""
    module = spec("selective_scan_fwd")
    Bd, Cd, dt, uf = module._widened(u, delta, B, C, bias, softplus)
    ys = []
    for t in range(u.shape[1]):
        h.mul_(torch.exp(dt[:, t, None] * A)).add_(dt[:, t, None] * Bd[:, :, t] * uf[:, t, None])
        ys.append((h * Cd[:, :, t]).sum(dim=1))
    return module._outputs(torch.stack(ys, dim=1) if ys else torch.zeros_like(uf), uf, D, z)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU"))])  # benchmarks/gpu_check.sh runs the GPU's
def test_selective_scan_writes_what_the_token_by_token_scan_wrote_bit_for_bit(device, monkeypatch):
    """The reference computes a pass of tokens' decays, inputs and outputs at once (two launches a
    token on a GPU where there were eight); its results are those of the scan token by token, bit
    for bit, on every case that is not benched, and on one that spans several passes unevenly."""
    from kgb.evaluate.correctness import clone_exact, same_bits
    from kgb.evaluate.draws import draw_inputs

    scan = operators.load("vllm::selective_scan_fwd")
    cases = [c for c in scan.cases if c.tag != "bench"]
    assert max(sum(c.params["lens"]) for c in cases) > 2 * scan.module.TOKENS_A_PASS
    for case in cases:
        drawn = draw_inputs(scan, case, case.seed, device)
        ours, oracle = clone_exact(drawn), clone_exact(drawn)
        scan.module.reference(**ours)
        with monkeypatch.context() as m:
            m.setattr(scan.module, "_scan", _scan_token_by_token)
            scan.module.reference(**oracle)
        for name in scan.inout_args:
            if oracle[name] is not None:
                assert same_bits(ours[name], oracle[name]), (case.name, name)


# ---- sparse attention indexes -----------------------------------------------------------------


def _vertical_slash(q: int, vertical: int, slash: int) -> dict:
    """One head, two row blocks of 64, one vertical line and one slash line, causal."""
    out = dict(block_count=torch.zeros(1, 1, 2, dtype=torch.int32),
               block_offset=torch.zeros(1, 1, 2, 1, dtype=torch.int32),
               column_count=torch.zeros(1, 1, 2, dtype=torch.int32),
               column_index=torch.zeros(1, 1, 2, 1, dtype=torch.int32))
    spec("convert_vertical_slash_indexes").reference(
        **out, q_seqlens=i32([q]), kv_seqlens=i32([q]), vertical_indexes=i32([[[vertical]]]),
        slash_indexes=i32([[[slash]]]), context_size=128, block_size_M=64, block_size_N=64, causal=True)
    return out


def test_vertical_slash_sink_column_and_diagonal_by_hand():
    out = _vertical_slash(128, 0, 0)
    # row block 0: the diagonal block 0 holds column 0; row block 1: diagonal block 64
    # plus column 0 as a single column
    assert out["block_count"].flatten().tolist() == [1, 1]
    assert out["block_offset"].flatten().tolist() == [0, 64]
    assert out["column_count"].flatten().tolist() == [0, 1]
    assert out["column_index"].flatten().tolist() == [0, 0]


def test_vertical_slash_rows_past_the_query_stay_zero():
    out = _vertical_slash(60, 5, 0)
    assert out["block_count"].flatten().tolist() == [1, 0]


# ---- hardware-format ops ----------------------------------------------------------------------


def test_hadamard_transform_small_sizes():
    ref = spec("hadacore_transform").reference
    x = torch.tensor([[3.0, 1.0]], dtype=torch.float16)
    assert ref(x.clone(), False).float()[0].tolist() == pytest.approx([4 / math.sqrt(2), 2 / math.sqrt(2)], rel=1e-3)
    e0 = torch.tensor([[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]], dtype=torch.float16)
    assert ref(e0.clone(), False).float().tolist() == [[0.5, 0.5, 0.5, 0.5], [2.0, 0.0, 0.0, 0.0]]
    x = torch.tensor([[0.0, 0.0, 0.0, 1.0]], dtype=torch.bfloat16)  # the last row of H_4: + - - +
    y = ref(x, True)
    assert y is x and x.float().tolist() == [[0.5, -0.5, -0.5, 0.5]]


def test_hadamard_transform_is_its_own_inverse():
    x = torch.randn(3, 256)
    walsh = spec("hadacore_transform").walsh_hadamard
    assert torch.allclose(walsh(walsh(x)) / 256, x, atol=1e-5)


def test_pack_scale_fp8_products_rounded_to_nearest_even():
    mod = spec("cutlass_pack_scale_fp8")
    one = mod.reference(torch.tensor([1.0]).to(torch.float8_e4m3fn)).float().tolist()
    assert one == [-8.0, -7.0, -6.0, -5.0, -4.0, -3.0, -2.0, -1.0]
    # 1.125 x 7 = 7.875 -> 8; x 6 = 6.75, a tie -> 7 (even); x 5 = 5.625 -> 5.5;
    # x 3 = 3.375, a tie -> 3.5 (even)
    packed = mod.reference(torch.tensor([1.125]).to(torch.float8_e4m3fn)).float().tolist()
    assert packed == [-9.0, -8.0, -7.0, -5.5, -4.5, -3.5, -2.25, -1.125]


def test_pack_scale_fp8_compare_is_bit_exact():
    mod = spec("cutlass_pack_scale_fp8")
    expected = {"return": mod.reference(torch.tensor([1.125]).to(torch.float8_e4m3fn))}
    assert mod.compare(expected, expected, Case("t", "smoke"), {}) is None
    off = expected["return"].clone()
    off[2] = torch.tensor(-6.5).to(torch.float8_e4m3fn)  # the other neighbour of the tie
    assert "differ" in mod.compare({"return": off}, expected, Case("t", "smoke"), {})
