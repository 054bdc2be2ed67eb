"""Rare false verdicts that benchmarks/verdict_search.py found: draws on which an operator's
known-good solution failed its own spec's check in Triton's interpreter, as the judge's
re-check on fresh inputs would have failed it, for a freedom the spec leaves (the order of a
sum's additions). Each check now admits that freedom, and still rejects wrong answers.

- aten::sum's smoke-all-f32, seed 5930 (and 14942, 19542, 32488 of seeds 0-39999): the 231
  values sum to 0.0021212 exactly; PyTorch's order gives 0.0021257, the solution's 0.0021210;
  the published atol, 1e-4 sqrt(231) |result| = 3.2e-6, scaled with a result that cancels.
- aten::matmul's smoke-dot-f32, seed 9340 (and six others of 0-39999): 33 products add to
  about 2e-6; PyTorch's 1.907e-06 against the solution's 2.712e-06, an atol of 1.1e-9.
- rms_norm_dynamic_per_token_quant's smoke-bf16-fp8-residual, seed 12920: token 3's inv_rms
  in the solution's order, 0.69272977, is one float32 ulp below the reference's 0.69272983;
  its absmax value 5.6953125 times it is 3.9453125, the bfloat16 midpoint, which rounds to
  even, 3.9375, where the reference's 3.945312977 rounds to 3.953125. Times the weight
  1.3515625, y is 5.3125 against 5.34375: the token's scale moves 0.59% (within bfloat16's
  rtol) and 10 of its 96 codes move a step with it, beyond the 4 allowed. The same in
  rms_norm_per_block_quant's smoke-bf16-fp8-residual-t, seeds 10479 and 12853 (5 and 12
  codes). The codes are now judged over the candidate's own scale, which must lie where an
  inv_rms a little off the reference's puts it.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys

import pytest
import torch

from kgb import operators
from kgb.evaluate.correctness import compare_values
from kgb.operators import REPO_ROOT
from kgb.vllm import quant

DRAWS = {  # (operator, case, seed) the known-good solution failed in the interpreter
    "sum": ("aten::sum", "smoke-all-f32", 5930),
    "dot": ("aten::matmul", "smoke-dot-f32", 9340),
    "per_token": ("vllm::rms_norm_dynamic_per_token_quant", "smoke-bf16-fp8-residual", 12920),
    "per_block": ("vllm::rms_norm_per_block_quant", "smoke-bf16-fp8-residual-t", 10479),
}


def _case(op: str, name: str):
    spec = operators.load(op)
    return spec, next(c for c in spec.cases if c.name == name)


def _draw(op: str, name: str, seed: int):
    spec, case = _case(op, name)
    return spec, case, spec.module.make_inputs(case, torch.Generator().manual_seed(seed), "cpu")


@functools.cache
def _interpreter_verdicts() -> dict[str, str]:
    """The known-good solutions in Triton's interpreter, each judged on its draw as the judge
    judges a fresh draw (benchmarks/fresh_draws.py): one process for the four."""
    script = f"""
import sys
sys.path.insert(0, {str(REPO_ROOT / 'benchmarks')!r})
from fresh_draws import judged
from kgb import operators
from kgb.evaluate.case_runner import CaseRunner
from kgb.evaluate.interpreter import prepare_interpreter
prepare_interpreter()
for key, (op, name, seed) in {DRAWS!r}.items():
    spec = operators.load(op)
    case = next(c for c in spec.cases if c.name == name)
    print(key, "verdict:", judged(CaseRunner(spec, None, "cpu"), case, spec.solution_module(), seed))
"""
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", script], capture_output=True, text=True,
                          timeout=600, cwd=REPO_ROOT, env={**os.environ, "TRITON_INTERPRET": "1"})
    assert done.returncode == 0, done.stderr
    return dict(line.split(" verdict: ", 1) for line in done.stdout.splitlines() if " verdict: " in line)


@pytest.mark.parametrize("key", list(DRAWS))
def test_the_solution_passes_the_draw_it_failed_in_the_interpreter(key):
    assert _interpreter_verdicts()[key] == "None"


# ---------------------------------------------------------------- sums that cancel


@pytest.mark.parametrize("key", ["sum", "dot"])
def test_a_sum_that_cancels_is_judged_by_its_terms(key):
    """The exact sum rounded once to float32 is what a kernel that rounds nothing on the way
    answers: the reference's order errs from it by more than the rule before allowed."""
    spec, case, inputs = _draw(*DRAWS[key])
    terms = inputs["self"].double().reshape(-1) * (inputs["other"].double() if "other" in inputs else 1)
    expected = spec.reference_for(spec.entry_of(case).name)(**inputs)
    exact = terms.sum().float()  # float32 x float32 products are exact in float64, and so nearly is their sum
    assert compare_values("return value", exact, expected, case.reduction)[0] is not None
    assert spec.module.compare({"return": exact}, {"return": expected}, case, inputs) is None
    # the floor: 1e-4 sqrt(sum of squares of the terms); twice that off still fails (zero passes
    # here, the sum within 1e-4 of its terms' magnitude: test_wrong_sums_still_fail for the rest)
    floor = 1e-4 * float(terms.pow(2).sum().sqrt())
    assert abs(expected.item()) < floor
    for wrong in (expected.double() + 2 * floor, expected.double() - 2 * floor):
        assert spec.module.compare({"return": wrong.float()}, {"return": expected}, case, inputs)


@pytest.mark.parametrize("op,name", [("aten::sum", "smoke-all-f32"), ("aten::matmul", "smoke-dot-f32"),
                                     ("aten::mean", "smoke-all-f32"), ("aten::sum", "smoke-dim-f16"),
                                     ("aten::bmm", "smoke-f32"), ("aten::linear", "smoke-f32")])
def test_wrong_sums_still_fail(op, name):
    """Zeros, a result 1% off and a result off by a term of RMS size fail on every draw of 20."""
    spec, case = _case(op, name)
    entry = spec.entry_of(case).name
    for seed in range(20):
        inputs = spec.module.make_inputs(case, torch.Generator().manual_seed(seed), "cpu")
        expected = spec.reference_for(entry)(**inputs)
        e = expected.double()
        term = float(next(v for v in inputs.values() if isinstance(v, torch.Tensor)).double().pow(2).mean().sqrt())
        for wrong in (torch.zeros_like(e), e + 0.01 * (e.abs() + e.abs().mean()), e + term):
            assert spec.module.compare({"return": wrong.to(expected.dtype)}, {"return": expected}, case, inputs), (
                seed, wrong)


# ---------------------------------------------------------------- rms_norm + quantisation


def _ulps_off(t: torch.Tensor, ulps: int) -> torch.Tensor:
    for _ in range(abs(ulps)):
        t = torch.nextafter(t, torch.full_like(t, float("inf") if ulps > 0 else float("-inf")))
    return t


def _outputs(spec, case, inputs, ulps: int = 0) -> dict:
    """What a kernel writes whose inv_rms is `ulps` float32 ulps off the reference's (a sum of
    squares in another order), and the sum the reference's norm returns."""
    written = {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in inputs.items()}
    rsqrt = torch.rsqrt
    torch.rsqrt = lambda v: _ulps_off(rsqrt(v), ulps)
    try:
        summed = spec.module.reference(**written)
    finally:
        torch.rsqrt = rsqrt
    return {"return": summed, **{k: written[k] for k in spec.written_args if written.get(k) is not None}}


@pytest.mark.parametrize("key,ulps", [("per_token", -1), ("per_block", 1)])  # the solution's inv_rms, in ulps
def test_a_scale_moved_by_an_inv_rms_one_ulp_off_is_admitted(key, ulps):
    """seed 10479 of per_block: row 2's inv_rms one ulp up puts -3.43359375 * inv_rms on the
    bfloat16 midpoint -2.6171875 (rounded to even, -2.625): group 1's scale moves 0.54%."""
    spec, case, inputs = _draw(*DRAWS[key])
    expected = _outputs(spec, case, inputs)
    one_ulp = _outputs(spec, case, inputs, ulps)
    after = {**inputs, "residual": one_ulp["residual"]}  # what the call left in the residual
    moved = one_ulp["scale"] != expected["scale"]
    assert int(moved.sum()) == 1
    assert abs(one_ulp["scale"][moved].item() / expected["scale"][moved].item() - 1) > 0.005
    # the rule before: codes counted from the band around the reference's scale
    group = inputs.get("group_size", inputs["input"].shape[-1])
    norm = (expected["return"], inputs["input"], inputs["weight"], inputs["epsilon"], inputs["scale_ub"], group,
            expected["result"].dtype)
    low, high = quant.code_band(quant.rms_norm_quant_quotients(*norm), quant.to_fp8)
    shape = expected["result"].shape
    before = quant.compare_codes("argument result", one_ulp["result"], expected["result"],
                                 band=(low.view(shape), high.view(shape)))
    assert before is not None and "codes are one step away" in before
    assert spec.module.compare({**one_ulp, "return": None}, expected, case, after) is None
    # a few ulps either way, as an approximate rsqrt or another order of the sum may give
    for ulps in (-4, -2, 2, 4):
        other = _outputs(spec, case, inputs, ulps)
        assert spec.module.compare({**other, "return": None}, expected, case,
                                   {**inputs, "residual": other["residual"]}) is None


@pytest.mark.parametrize("key", ["per_token", "per_block"])
@pytest.mark.parametrize("factor", [0.98, 1.01, 1.03])
def test_a_wrong_scale_with_codes_that_follow_it_still_fails(key, factor):
    """A scale that no inv_rms near the reference's gives (group 0 of token 0 here, whose absmax
    lies nowhere near a rounding boundary), within bfloat16's rtol, its codes quantised over it:
    the check allowed its scale before and allows it now, but not the codes. (A scale under
    about 0.6% off moves too few codes of a smoke case's group to fail, now as before.)"""
    spec, case, inputs = _draw(*DRAWS[key])
    expected = _outputs(spec, case, inputs)
    group = inputs.get("group_size", inputs["input"].shape[-1])
    norm = (expected["return"], inputs["input"], inputs["weight"], inputs["epsilon"], inputs["scale_ub"], group,
            expected["result"].dtype)
    least, greatest = quant.rms_norm_quant_scale_interval(*norm)
    assert greatest[0, 0] / least[0, 0] < 1 + 2.0**-16  # one scale only
    scales = expected["scale"].reshape(least.shape).clone()
    scales[0, 0] *= factor
    y = quant.rms_norm_quant_quotients(*norm) * expected["scale"].reshape(least.shape)[..., None]
    codes = quant.to_fp8(y / scales[..., None]).view(expected["result"].shape)
    wrong = {**expected, "return": None, "result": codes, "scale": scales.view(expected["scale"].shape)}
    message = spec.module.compare(wrong, expected, case, {**inputs, "residual": expected.get("residual")})
    assert message is not None  # within rtol (1.01) on the codes, past it on the scale itself
    assert ("argument result" if abs(factor - 1) < 0.016 else "argument scale") in message
