"""The vLLM quantisation comparisons admit what a scale a float32 ulp off does to values on a
rounding tie (found on an H200, where CUDA PyTorch divides by a Python number through its
rounded reciprocal), and still reject codes and outputs that no such scale explains."""

from __future__ import annotations

import pytest
import torch

from kgb import operators
from kgb.operators import Case, published_tolerance
from kgb.vllm import ggml
from kgb.vllm.moe import compare_close
from kgb.vllm.quant import compare_quantised, input_rtol


def _spec(name):
    return operators.load(f"vllm::{name}").module


def _ulp_up(t: torch.Tensor) -> torch.Tensor:
    return torch.nextafter(t, torch.full_like(t, float("inf")))


def _ulp_down(t: torch.Tensor) -> torch.Tensor:
    return torch.nextafter(t, torch.full_like(t, float("-inf")))


def _rms_block_outputs(inputs, scale_of=None, residual=None):
    """fp8 (result, scale) as a kernel computes them, every group's scale taken through
    `scale_of`; with a residual, of input + residual unrounded."""
    out, scale = inputs["result"].clone(), inputs["scale"].clone()
    x = inputs["input"].float() + (0 if residual is None else residual.float())
    inv_rms = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + inputs["epsilon"])
    y = ((x * inv_rms).to(inputs["input"].dtype) * inputs["weight"]).float()
    groups = y.view(y.shape[0], -1, inputs["group_size"])
    s = torch.clamp_min(groups.abs().amax(-1) / 448.0, 1 / (448 * 512))
    if scale_of is not None:
        s = scale_of(s)
    out.copy_((groups / s[..., None]).clamp(-448, 448).to(torch.float8_e4m3fn).view(out.shape))
    scale.copy_(s)
    return {"result": out, "scale": scale, "residual": None}


def test_rms_norm_per_block_quant_admits_a_scale_one_ulp_off():
    spec = _spec("rms_norm_per_block_quant")
    case = Case("t", "smoke", dict(tokens=8, hidden=1024, dtype="bfloat16", quant="float8_e4m3fn", group=128,
                                   transposed=False, residual=False, ub=False, eps=1e-6), seed=0, reduction=1024)
    inputs = spec.make_inputs(case, torch.Generator().manual_seed(0), "cpu")
    expected = {"result": inputs["result"].clone(), "scale": inputs["scale"].clone(), "residual": None}
    expected["return"] = spec.reference(expected["result"], inputs["input"], inputs["weight"], expected["scale"],
                                        inputs["epsilon"], None, None, 128, False)
    assert _rms_block_outputs(inputs)["result"].view(torch.uint8).equal(expected["result"].view(torch.uint8))
    # every scale one ulp up: about half of the 0.5% of codes on ties round down instead
    up = _rms_block_outputs(inputs, _ulp_up)
    assert compare_quantised(up, expected, input_rtol(torch.bfloat16))  # the former rule: too many moved
    assert spec.compare(up, expected, case, inputs) is None
    assert spec.compare(_rms_block_outputs(inputs, _ulp_down), expected, case, inputs) is None
    # a scale 0.2% off moves codes that lie nowhere near a tie
    assert spec.compare(_rms_block_outputs(inputs, lambda s: s * 1.002), expected, case, inputs)
    two = up["result"].clone().view(torch.uint8)
    two[3, 17] += 2
    assert "more than one step" in spec.compare({**up, "result": two.view(torch.float8_e4m3fn)}, expected, case, inputs)


def test_rms_norm_per_block_quant_with_a_16_bit_residual_admits_a_scale_one_ulp_off():
    """The residual then holds the sum rounded to bfloat16, from which the band cannot be
    recomputed: the reference returns the unrounded sum (on the H200, without a band, 0.115%
    of a correct kernel's codes were one step away, over the 0.1% allowed)."""
    spec = _spec("rms_norm_per_block_quant")
    case = Case("t", "smoke", dict(tokens=8, hidden=1024, dtype="bfloat16", quant="float8_e4m3fn", group=128,
                                   transposed=False, residual=True, ub=False, eps=1e-6), seed=0, reduction=1024)
    inputs = spec.make_inputs(case, torch.Generator().manual_seed(0), "cpu")
    original = inputs["residual"].clone()
    expected = {"result": inputs["result"].clone(), "scale": inputs["scale"].clone(), "residual": original.clone()}
    expected["return"] = spec.reference(expected["result"], inputs["input"], inputs["weight"], expected["scale"],
                                        inputs["epsilon"], None, expected["residual"], 128, False)
    after = {**inputs, "residual": expected["residual"].clone()}  # what the call left in the residual

    def kernel(scale_of=None):
        return {**_rms_block_outputs(inputs, scale_of, original), "residual": expected["residual"].clone()}

    assert kernel()["result"].view(torch.uint8).equal(expected["result"].view(torch.uint8))
    assert spec.compare(kernel(_ulp_up), expected, case, after) is None
    assert spec.compare(kernel(_ulp_down), expected, case, after) is None
    assert spec.compare(kernel(lambda s: s * 1.002), expected, case, after)


def _int8_azp(x: torch.Tensor, s: torch.Tensor):
    """Dynamic asymmetric int8 as a kernel computes it from the row scale s."""
    zp = torch.round(-128.0 - x.amin(1, keepdim=True) / s)
    return (torch.round(x * (1.0 / s)) + zp).clamp(-128, 127).to(torch.int8), s, zp.to(torch.int32)


def test_scaled_int8_quant_admits_a_zero_point_moved_by_a_scale_ulp():
    spec = _spec("scaled_int8_quant")
    # row min -1 - 2**-8 and max - min = 255 * 2**-7: s = 2**-7 exactly, -128 - min / s = 0.5 (a tie,
    # to 0) and x / s = 4k - 127.5: every code sits on a tie, which rounds to even, down
    x = torch.full((2, 64), -1.0 - 2**-8)
    x[:, 1] += 255 * 2**-7
    x[:, 2:] += (torch.arange(1, 63, dtype=torch.float32) * 4 + 1) * 2**-7
    inputs = {"input": x, "scale": None, "azp": None, "symmetric": False}
    case = Case("t", "smoke", {}, reduction=64)
    expected = {"return": spec.reference(**inputs)}
    assert expected["return"][2].tolist() == [[0], [0]]
    # s one ulp down: the zero point rounds to 1 and every tie code up, two steps from the reference's
    down = _int8_azp(x, _ulp_down(expected["return"][1]))
    assert down[2].tolist() == [[1], [1]]
    assert ((down[0].int() - expected["return"][0].int()).abs() == 2).any()
    assert compare_quantised({"return": down}, expected, 1e-5)  # the former rule
    assert spec.compare({"return": down}, expected, case, inputs) is None
    assert spec.compare({"return": _int8_azp(x, _ulp_up(expected["return"][1]))}, expected, case, inputs) is None
    # a zero point one off on the side no scale reaches (the tie is between 0 and 1), codes with it
    codes, s, zp = expected["return"]
    lower = (codes.int() - 1).clamp(-128, 127).to(torch.int8)
    assert "return value[2]" in spec.compare({"return": (lower, s, zp - 1)}, expected, case, inputs)
    # a row of codes one step up, the zero point left as it was: nothing moves codes off a tie this way
    x[:, 2:] += 0.25 * 2**-7
    expected = {"return": spec.reference(**inputs)}
    codes, s, zp = expected["return"]
    assert spec.compare({"return": ((codes.int() + 1).clamp(-128, 127).to(torch.int8), s, zp)}, expected, case, inputs)


_MOE = dict(type=2, tokens=4, experts=3, top_k=2, row=16, col=64, dtype="float32")
_MUL_MAT = dict(type=2, batch=4, row=16, col=64, dtype="float32")


@pytest.mark.parametrize("name,params", [("ggml_moe_a8", _MOE), ("ggml_moe_a8_vec", _MOE),
                                         ("ggml_mul_mat_a8", _MUL_MAT), ("ggml_mul_mat_vec_a8", _MUL_MAT)])
def test_ggml_a8_ops_admit_codes_moved_on_halves_by_a_scale_ulp(monkeypatch, name, params):
    """Found on an H200: ggml_moe_a8_vec's correct solution failed one of 49152 outputs on
    fresh inputs, a code on a half moved (the other three share its activations' arithmetic)."""
    spec = _spec(name)
    case = Case("t", "smoke", params, reduction=64)
    inputs = spec.make_inputs(case, torch.Generator().manual_seed(0), "cpu")
    # amax 127 * 2**-6 makes d = 2**-6 exact; the other values (k + 0.5) * 2**-6 lie on halves
    x = (torch.randint(-120, 120, (4, 64), generator=torch.Generator().manual_seed(1)) + 0.5) * 2**-6
    x[:, ::32] = 127 * 2**-6
    inputs["X"] = x
    expected = {"return": spec.reference(**inputs)}
    exact_q8_1 = ggml.quantize_q8_1

    def q8_1_with_d_up(rows):  # d one ulp up: every half rounds towards zero instead of away
        q, d8, s8 = exact_q8_1(rows)
        xb = rows.float().reshape(rows.shape[0], -1, 32)
        d = _ulp_up(xb.abs().amax(-1) / 127)
        return ggml.round_half_away(xb / d[..., None]).long(), d8, s8

    monkeypatch.setattr(ggml, "quantize_q8_1", q8_1_with_d_up)
    moved = {"return": spec.reference(**inputs)}
    monkeypatch.undo()
    e = expected["return"]
    tol = published_tolerance("float32", 64, float(e.double().pow(2).mean().sqrt()))
    assert compare_close(moved["return"], e, tol.rtol, tol.atol, "y")  # the former rule
    assert spec.compare(moved, expected, case, inputs) is None
    # on values off the halves, the same outputs are wrong
    inputs["X"] = x + 0.25 * 2**-6 * torch.sign(x)
    inputs["X"][:, ::32] = 127 * 2**-6
    assert spec.compare(moved, {"return": spec.reference(**inputs)}, case, inputs)


def test_the_q8_1_reference_divides_exactly():
    """The specs say d = amax / 127 exactly rounded; CUDA PyTorch's `amax / 127` multiplies
    by float32(1 / 127) instead, which is what let the reference's codes move on a GPU."""
    amax = torch.arange(1, 20001, dtype=torch.float32) * 2**-10
    exact = (amax.double() / 127).float()
    by_reciprocal = amax * torch.tensor(1 / 127, dtype=torch.float32)
    assert bool((exact != by_reciprocal).any())  # such amax exist
    x = torch.zeros(len(amax), 32)
    x[:, 0] = amax
    x[:, 1] = exact * 63.5  # a half under the exact d; near one under the reciprocal
    q, _, _ = ggml.quantize_q8_1(x)
    assert torch.equal(q[:, 0, 1], ggml.round_half_away(x[:, 1] / exact).long())
    # and these inputs tell the two apart (the GPU's old reference failed here)
    assert not torch.equal(q[:, 0, 1], ggml.round_half_away(x[:, 1] / by_reciprocal).long())


def test_ggml_moe_a8_rejects_a_dropped_block():
    spec = _spec("ggml_moe_a8")
    case = Case("t", "smoke", dict(type=8, tokens=6, experts=4, top_k=2, row=24, col=128, dtype="bfloat16"),
                reduction=128)
    inputs = spec.make_inputs(case, torch.Generator().manual_seed(2), "cpu")
    expected = {"return": spec.reference(**inputs)}
    assert spec.compare(expected, expected, case, inputs) is None
    short = dict(inputs, X=inputs["X"].clone())
    short["X"][:, 96:] = 0  # the last block of K left out of every dot product
    assert spec.compare({"return": spec.reference(**short)}, expected, case, inputs)


def test_fp8_codes_of_tied_quotients_may_round_either_way():
    # Every value on an fp8 rounding tie (1.0625 lies halfway between codes 1.0 and 1.125):
    # a kernel whose quotient is one float32 ulp above the reference's rounds all of them up.
    spec = operators.load("vllm::scaled_fp8_quant")
    x = torch.full((4, 64), 1.0625, dtype=torch.bfloat16)
    scale = torch.ones(1)
    inputs = dict(input=x, scale=scale, num_token_padding=None, scale_ub=None, use_per_token_if_dynamic=False,
                  output=None)
    codes, _ = spec.module.reference(**inputs)
    tied_up = _ulp_up(x.float() / scale).to(torch.float8_e4m3fn)
    assert (tied_up.float() != codes.float()).all()  # a share would not cover these
    case = Case("ties", "check", {}, seed=0)
    assert spec.module.compare({"return": (tied_up, scale)}, {"return": (codes, scale)}, case, inputs) is None
    zeros = torch.zeros_like(codes)
    assert spec.module.compare({"return": (zeros, scale)}, {"return": (codes, scale)}, case, inputs)
    two_up = (x.float() + 0.125).to(torch.float8_e4m3fn)  # a code no float32 error explains
    assert spec.module.compare({"return": (two_up, scale)}, {"return": (codes, scale)}, case, inputs)
