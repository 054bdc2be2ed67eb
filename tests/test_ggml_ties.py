"""The ggml a8 checks admit s8 = float16(float32 sum of a block of activations) rounded either
way where adding the block in some order can land on either side of a float16 rounding
boundary (the specs leave that order free), and still reject a wrong s8.

Found in CI: vllm::ggml_moe_a8's known-good solution failed smoke-q4_1-f32 on fresh inputs, 2
elements off (got -0.05363, expected -0.05168: 2**-9). Seed 9947 of that case does the same
here: token 1's first block sums exactly to -8.3398425; PyTorch adds it (the reference) to
float32 -8.3398418, float16 -8.3359375; Triton's interpreter (tl.sum is numpy's pairwise sum)
to -8.33984375, the float16 midpoint, which rounds to even, -8.34375. With m4 = -0.1378,
half(m4 s8) is 1.1484375 against 1.1503906: the 48 outputs of token 1 move, (4, 10) and
(5, 11) by 2**-9, past an atol of 0.00137. About one block in 2400 of float32 randn rounds
apart so, and about one draw of the case in 13000 failed by it (4 of seeds 0-59999, and 1 of
3000 secret seeds; benchmarks/ggml_s8_search.py finds such seeds)."""

from __future__ import annotations

import functools
import os
import random
import subprocess
import sys

import numpy as np
import pytest
import torch

from kgb import operators
from kgb.operators import REPO_ROOT, published_tolerance
from kgb.vllm import ggml, q8_1_check
from kgb.vllm.moe import compare_close
from kgb.vllm.quant import QUOTIENT_RTOL

SEED = 9947  # a draw of ggml_moe_a8's smoke-q4_1-f32 that the solution failed in the interpreter


def _case(op: str, name: str):
    spec = operators.load(op)
    return spec, next(c for c in spec.cases if c.name == name)


def _sequential(v: np.ndarray) -> np.float32:
    s = np.float32(0)
    for a in v:
        s = np.float32(s + a)
    return s


def _pairwise8(v: np.ndarray) -> np.float32:
    """numpy's float32 sum of 32 contiguous values (eight running sums, then a tree), as
    Triton's interpreter computes tl.sum."""
    r = [np.float32(a) for a in v[:8]]
    for i in range(8, len(v), 8):
        r = [np.float32(r[k] + v[i + k]) for k in range(8)]
    return np.float32(np.float32(np.float32(r[0] + r[1]) + np.float32(r[2] + r[3]))
                      + np.float32(np.float32(r[4] + r[5]) + np.float32(r[6] + r[7])))


def _reference_summing_by(monkeypatch, spec, inputs, order) -> torch.Tensor:
    """The spec's reference with every block's s8 summed in `order` (each order is one a kernel may take)."""
    exact_q8_1 = ggml.quantize_q8_1

    def q8_1(rows):
        q, d8, _ = exact_q8_1(rows)
        xb = rows.float().reshape(rows.shape[0], -1, 32).numpy()
        s = np.array([[order(b) for b in row] for row in xb], dtype=np.float32)
        return q, d8, torch.from_numpy(s).half().float()

    monkeypatch.setattr(ggml, "quantize_q8_1", q8_1)
    try:
        return spec.module.reference(**inputs)
    finally:
        monkeypatch.undo()


def test_the_draw_that_failed_passes_with_s8_summed_in_either_order(monkeypatch):
    spec, case = _case("vllm::ggml_moe_a8", "smoke-q4_1-f32")
    inputs = spec.module.make_inputs(case, torch.Generator().manual_seed(SEED), "cpu")
    block = inputs["X"][1, :32].numpy()
    assert float(np.float16(_sequential(block))) == -8.3359375 and float(np.float16(_pairwise8(block))) == -8.34375
    by_sequence = _reference_summing_by(monkeypatch, spec, inputs, _sequential)
    by_pairs = _reference_summing_by(monkeypatch, spec, inputs, _pairwise8)
    # the rule before: the published tolerance and the tie bound turn two outputs away
    e = by_sequence.double()
    tol = published_tolerance("float32", case.reduction, float(e.pow(2).mean().sqrt()))
    routes = spec.module._routes(inputs["sorted_token_ids"], inputs["expert_ids"], inputs["num_tokens_post_padded"],
                                 inputs["top_k"], inputs["tokens"])
    ties = torch.zeros_like(e)
    for ex, z in routes:
        ties[z] = q8_1_check.q8_1_tie_bound(inputs["W"][ex], inputs["type"], inputs["X"][z // 3], QUOTIENT_RTOL).double()
    before = compare_close(by_pairs, by_sequence, tol.rtol, tol.atol + (1 + tol.rtol) * ties, "return value")
    assert before is not None and before.startswith("return value: 2 elements off; first at (4, 10)")
    assert (by_pairs.double() - e).abs().max().item() == 2.0**-9
    # the spec's check now: either order against either
    assert spec.module.compare({"return": by_pairs}, {"return": by_sequence}, case, inputs) is None
    assert spec.module.compare({"return": by_sequence}, {"return": by_pairs}, case, inputs) is None
    low, high = q8_1_check.s8_interval(inputs["X"])  # the block that some orders round either way
    assert (low[1, 0].item(), high[1, 0].item()) == (-8.34375, -8.3359375)


def test_the_solution_passes_the_draw_it_failed_in_the_interpreter():
    """The CI failure itself: the known-good solution in Triton's interpreter, judged on the
    draw from SEED as the judge judges a fresh draw (benchmarks/fresh_draws.py)."""
    script = f"""
import sys
sys.path.insert(0, {str(REPO_ROOT / 'benchmarks')!r})
from fresh_draws import judged
from kgb import operators
from kgb.evaluate.case_runner import CaseRunner
from kgb.evaluate.interpreter import prepare_interpreter
prepare_interpreter()
spec = operators.load("vllm::ggml_moe_a8")
case = next(c for c in spec.cases if c.name == "smoke-q4_1-f32")
print("verdict:", judged(CaseRunner(spec, None, "cpu"), case, spec.solution_module(), {SEED}))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          cwd=REPO_ROOT, env={**os.environ, "TRITON_INTERPRET": "1"})
    assert done.returncode == 0, done.stderr
    assert "verdict: None" in done.stdout, done.stdout


def _wrong_s8(kind: str):
    exact_q8_1 = ggml.quantize_q8_1

    def q8_1(rows):
        q, d8, s8 = exact_q8_1(rows)
        if kind == "from codes":  # ggml's CPU quantize_row_q8_1: d * sum(q), not sum(x)
            d = rows.float().reshape(rows.shape[0], -1, 32).abs().amax(-1) / 127
            return q, d8, (q.sum(-1).float() * d).half().float()
        if kind == "a float16 step up":
            return q, d8, torch.nextafter(s8.half(), torch.full_like(s8, torch.inf).half()).float()
        return q, d8, torch.zeros_like(s8)

    return q8_1


@pytest.mark.parametrize(("op", "name"), [("vllm::ggml_moe_a8", "smoke-q4_0"), ("vllm::ggml_moe_a8", "smoke-q4_1-f32"),
                                          ("vllm::ggml_mul_mat_a8", "smoke-q4_0"), ("vllm::ggml_mul_mat_a8", "smoke-q4_1-f32"),
                                          ("vllm::ggml_mul_mat_a8", "odd-q4_0-f32")])  # the last beside the scale bound
@pytest.mark.parametrize("kind", ["from codes", "a float16 step up", "zero"])
def test_a_wrong_s8_still_fails(monkeypatch, op, name, kind):
    spec, case = _case(op, name)
    failed = 0
    for seed in range(10):
        inputs = spec.module.make_inputs(case, torch.Generator().manual_seed(seed), "cpu")
        expected = spec.module.reference(**inputs)
        monkeypatch.setattr(ggml, "quantize_q8_1", _wrong_s8(kind))
        wrong = spec.module.reference(**inputs)
        monkeypatch.undo()
        failed += spec.module.compare({"return": wrong}, {"return": expected}, case, inputs) is not None
    assert failed >= 8, f"{kind}: {failed} of 10 draws failed"


def _random_tree_sum(v: list[np.float32], rng: random.Random) -> np.float32:
    v = list(v)
    while len(v) > 1:
        i = rng.randrange(len(v) - 1)
        v[i:i + 2] = [np.float32(v[i] + v[i + 1])]
    return v[0]


def test_every_order_of_a_blocks_sum_rounds_into_its_interval():
    rng = random.Random(0)
    gen = torch.Generator().manual_seed(0)
    x = torch.cat([
        torch.randn(300, 32, generator=gen),
        torch.randn(100, 32, generator=gen) * torch.logspace(-6, 3, 32)[torch.randperm(32, generator=gen)],  # wide ranges
        torch.randn(100, 32, generator=gen).half().float(),
    ])
    # blocks whose exact sum lies within a float32 ulp or two of a float16 midpoint
    near = torch.randn(200, 32, generator=gen)
    mid = (near.double().sum(-1) / 2**-7).floor() * 2**-7 + 2**-8  # a float16 midpoint for sums in [8, 16)
    near[:, 0] += (mid + 8 * torch.sign(mid) - near.double().sum(-1)).float()  # the sum moved to about +-8 off it
    x = torch.cat([x, near])
    low, high = q8_1_check.s8_interval(x)
    assert bool((ggml.quantize_q8_1(x)[2] >= low).all() and (ggml.quantize_q8_1(x)[2] <= high).all())
    straddled = 0
    for r in range(x.shape[0]):
        v = [np.float32(a) for a in x[r].numpy()]
        sums = [_random_tree_sum(v, rng) for _ in range(10)]
        sums += [_sequential(np.array(v)[p]) for p in (np.argsort(-np.abs(v)), np.argsort(np.abs(v)))]
        sums += [_pairwise8(np.array(v)), np.sum(np.array(v)), np.float32(x[r].sum().item())]
        s8 = {float(np.float16(s)) for s in sums}
        assert low[r, 0].item() <= min(s8) and max(s8) <= high[r, 0].item(), (r, s8, low[r, 0], high[r, 0])
        straddled += len(s8) > 1
    assert straddled > 0  # some orders did round apart


@functools.cache
def _depths(n: int) -> frozenset[tuple[int, ...]]:
    """The leaf depths (largest first) of every binary tree of n leaves."""
    if n == 1:
        return frozenset({(0,)})
    return frozenset(tuple(sorted((d + 1 for d in a + b), reverse=True))
                     for k in range(1, n) for a in _depths(k) for b in _depths(n - k))


def test_the_chains_depths_bound_every_trees():
    """s8_interval's bound: the k largest leaf depths of a tree sum to no more than the chain's."""
    for n in range(2, 15):
        chain = np.cumsum([n - 1, *range(n - 1, 0, -1)])
        assert all((np.cumsum(d) <= chain).all() for d in _depths(n)), n
    assert q8_1_check.CHAIN_DEPTHS == (31, 31, *range(30, 0, -1))


def test_half_precision_rows_have_one_s8_where_every_sum_is_exact():
    """Values that are multiples of a power of two g with sum |x| <= 2**24 g add exactly in
    any order: most float16 and bfloat16 blocks, so their outputs keep the tolerance alone."""
    gen = torch.Generator().manual_seed(0)
    for dtype in (torch.float16, torch.bfloat16):
        x = torch.randn(1000, 32, generator=gen).to(dtype)
        low, high = q8_1_check.s8_interval(x)
        assert (low != high).float().mean().item() < 0.01
    # but not all: 1 + 2**-11 + 2 * 2**-24 (float16's least subnormal, twice) is 1 + 2**-10 in
    # float16 if the two small ones go first, and 1 (the tie rounded to even) if the 1 goes first
    x = torch.zeros(1, 32, dtype=torch.float16)
    x[0, :4] = torch.tensor([1.0, 2.0**-11, 2.0**-24, 2.0**-24])
    v = x[0].float().numpy()
    assert float(np.float16(_sequential(v))) == 1.0 and float(np.float16(_sequential(v[::-1]))) == 1 + 2.0**-10
    low, high = q8_1_check.s8_interval(x)
    assert (low.item(), high.item()) == (1.0, 1 + 2.0**-10)


def _reciprocal_scale_check(monkeypatch, op: str, name: str, seed: int):
    """The spec's message on a kernel whose d is amax * float32(1/127), seed `seed`
    (benchmarks/ggml_inexact_scale.py's judgement)."""
    sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
    from ggml_inexact_scale import judged

    spec, case = _case(op, name)
    return judged(spec, case, seed), spec, case


def test_a_scale_that_rounds_to_the_other_float16_passes(monkeypatch):
    """ggml_mul_mat_a8's odd-q4_0-f32, seed 19542 (one failure in 20,000 draws): in one block
    amax * float32(1/127) and the exact quotient round to float16 neighbours, and 21 outputs
    of that row moved past the tie and sum bounds. The scale bound takes d8's move in."""
    spec, case = _case("vllm::ggml_mul_mat_a8", "odd-q4_0-f32")
    inputs = spec.module.make_inputs(case, torch.Generator().manual_seed(19542), "cpu")
    message, _, _ = _reciprocal_scale_check(monkeypatch, "vllm::ggml_mul_mat_a8", "odd-q4_0-f32", 19542)
    assert message is None, message
    w = inputs["W"].reshape(inputs["row"], -1)
    bound = q8_1_check.q8_1_scale_bound(w, inputs["type"], inputs["X"], QUOTIENT_RTOL)
    moving = (bound > 0).any(1).nonzero().reshape(-1).tolist()
    assert 1 in moving and len(moving) <= 3  # the flipped block's row, and two more within rtol of a boundary
    monkeypatch.setattr(q8_1_check, "q8_1_scale_bound", lambda *a: torch.zeros_like(bound))
    before, _, _ = _reciprocal_scale_check(monkeypatch, "vllm::ggml_mul_mat_a8", "odd-q4_0-f32", 19542)
    assert before is not None and before.startswith("return value: 21 elements off")


def test_a_scale_a_float16_step_off_in_every_block_still_fails(monkeypatch):
    spec, case = _case("vllm::ggml_mul_mat_a8", "odd-q4_0-f32")
    exact_q8_1 = ggml.quantize_q8_1

    def d8_up(rows):
        q, d8, s8 = exact_q8_1(rows)
        return q, torch.nextafter(d8.half(), torch.full_like(d8, torch.inf).half()).float(), s8

    failed = 0
    for seed in range(10):
        inputs = spec.module.make_inputs(case, torch.Generator().manual_seed(seed), "cpu")
        expected = spec.module.reference(**inputs)
        monkeypatch.setattr(ggml, "quantize_q8_1", d8_up)
        wrong = spec.module.reference(**inputs)
        monkeypatch.undo()
        failed += spec.module.compare({"return": wrong}, {"return": expected}, case, inputs) is not None
    assert failed >= 8, f"{failed} of 10 draws failed"
