"""Quantisation of activations to int8, symmetric or with a zero point, with a static
per-tensor or dynamic per-token scale: vLLM's `scaled_int8_quant` (vLLM 0.13, the Python
entry point over its `static_scaled_int8_quant` and `dynamic_scaled_int8_quant` kernels).

    scaled_int8_quant(input, scale=None, azp=None, symmetric=True) -> (output, scale, azp)

`input` is a contiguous float16, bfloat16 or float32 tensor [..., hidden]; a token is one
row of hidden elements. `output` is a new contiguous int8 tensor of input's shape. Below,
rn(v) rounds a float32 to the nearest integer, ties to even, and sat8 clamps an integer to
[-128, 127]; all arithmetic is float32.

- static symmetric (`scale` a one-element float32 tensor, azp None, symmetric True):
  output = sat8(rn(x / scale)) (a division). Returns (output, scale, None).
- static asymmetric (`scale` and `azp`, a one-element int32 tensor, symmetric False):
  output = sat8(rn(x * (1 / scale)) + azp) with the float32 reciprocal computed once.
  Returns (output, scale, azp).
- dynamic symmetric (`scale` None, symmetric True): per token, absmax = max |x|,
  scale[t] = absmax / 127 and output = sat8(rn(x * m)) with m = 127 / absmax (m = 0 when
  absmax is 0). Returns (output, scales, None), scales a new float32 [num_tokens, 1].
- dynamic asymmetric (`scale` None, symmetric False): per token, mn = min x, mx = max x,
  s = (mx - mn) / 255, zero point zp = rn(-128 - mn / s), output = sat8(rn(x * (1 / s)) + zp).
  Returns (output, scales, azps): float32 scales [num_tokens, 1] holding s and int32 azps
  [num_tokens, 1] holding zp. (No token is constant, so s > 0.)

num_tokens = input.numel() // hidden. `input`, `scale` and `azp` are not modified.

Checked: scales within float32 rtol 1e-5. Zero points equal the reference's, except one
step away where -128 - mn / s lies within 2**-20 (relatively) of a half-integer: a scale a
few float32 ulps off (an approximate division) may round it the other way. Codes as the
reference's quotient v (x / scale, x * (1 / scale), x * m) rounds plus the candidate's own
zero point, except that a code may be one step away where v lies within 2**-20 of a
half-integer, and at most 0.1% of the others may be one step away.
"""

import torch

from kgb.operators import Case
from kgb.vllm.quant import (
    INT8_MAX,
    QUOTIENT_RTOL,
    code_band,
    compare_codes,
    compare_floats,
    exact_div,
)

VERSION = 2
# Speed baseline: the reference below. vLLM's own kernel would be the fairer baseline, but
# vllm is not importable on the GPU host, so timings compare against PyTorch.

SIGNATURES = '''
def scaled_int8_quant(
    input: torch.Tensor,
    scale: torch.Tensor | None = None,
    azp: torch.Tensor | None = None,
    symmetric: bool = True,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """vllm._custom_ops.scaled_int8_quant: returns (int8 output, float32 scale(s), int32 azp or None)."""
'''


def _case(name, tag, shape, dtype, static, symmetric, seed=0):
    params = dict(shape=shape, dtype=dtype, static=static, symmetric=symmetric)
    return Case(name, tag, params, seed=seed, reduction=shape[-1])


CASES = [
    _case("smoke-static-sym-bf16", "smoke", (2, 3, 80), "bfloat16", True, True),
    _case("smoke-static-azp-f32", "smoke", (4, 64), "float32", True, False, seed=1),
    _case("smoke-dynamic-sym-f16", "smoke", (5, 96), "float16", False, True, seed=2),
    _case("smoke-dynamic-azp-f32", "smoke", (3, 70), "float32", False, False, seed=3),
    _case("llama3-8b-static", "check", (77, 4096), "bfloat16", True, True),
    _case("llama3-8b-dynamic", "check", (65, 4096), "bfloat16", False, True),
    _case("llama3-70b-dynamic-azp", "check", (17, 8192), "float16", False, False),
    _case("qwen2-mlp-static-azp", "check", (9, 18944), "bfloat16", True, False),
    _case("batch-seq-dynamic-f32", "check", (2, 33, 1000), "float32", False, True),
    _case("one-token-dynamic-azp", "check", (1, 5120), "float32", False, False),
    _case("llama3-8b-prefill-static", "bench", (8192, 4096), "bfloat16", True, True),
    _case("llama3-8b-prefill-dynamic", "bench", (8192, 4096), "bfloat16", False, True),
    _case("llama3-70b-prefill-dynamic-azp", "bench", (4096, 8192), "float16", False, False),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    x = torch.randn(p["shape"], generator=gen) + 0.3  # an offset, for the zero point to matter
    x[..., torch.randint(0, p["shape"][-1], (4,), generator=gen)] *= 6.0
    scale = azp = None
    if p["static"]:
        scale = torch.tensor([0.02], dtype=torch.float32, device=device)  # saturates outliers
        if not p["symmetric"]:
            azp = torch.tensor([-7], dtype=torch.int32, device=device)
    return dict(input=x.to(getattr(torch, p["dtype"])).to(device), scale=scale, azp=azp,
                symmetric=p["symmetric"])


def reference(input, scale=None, azp=None, symmetric=True):
    quotients, scales, zero_points = _quotients(input, scale, azp, symmetric)
    codes = _saturate(torch.round(quotients) + (0.0 if zero_points is None else zero_points))
    azps = azp if scale is not None else None if zero_points is None else zero_points.to(torch.int32)
    return codes.view(input.shape), scales, azps


def _quotients(input, scale, azp, symmetric):
    """(v, scales, zero points as float32 or None): the codes are sat8(rn(v) + zero point)."""
    x = input.float()
    if scale is not None:
        if azp is None:
            return x / scale, scale, None
        return x * (1.0 / scale), scale, azp.float()
    rows = x.reshape(-1, x.shape[-1])
    if symmetric:
        absmax = rows.abs().amax(dim=1, keepdim=True)
        mult = torch.where(absmax == 0, torch.zeros_like(absmax), torch.full_like(absmax, INT8_MAX) / absmax)
        return rows * mult, exact_div(absmax, INT8_MAX), None
    mn, s = _min_and_step(rows)
    return rows * (1.0 / s), s, torch.round(-128.0 - mn / s)


def _min_and_step(rows):
    """Per row: the minimum and the asymmetric scale s = (max - min) / 255."""
    mn, mx = rows.amin(dim=1, keepdim=True), rows.amax(dim=1, keepdim=True)
    return mn, exact_div(mx - mn, 255.0)


def _zero_point_band(input):
    """The zero points rn(w), w = -128 - mn / s, of every w within 2**-20 * (|w| + |mn / s|):
    the error a few float32 ulps in s and in mn / s, then the subtraction's rounding, allow."""
    mn, s = _min_and_step(input.float().reshape(-1, input.shape[-1]))
    t = mn / s
    slack = QUOTIENT_RTOL * ((128.0 + t).abs() + t.abs())
    return torch.round(-128.0 - t - slack).to(torch.int32), torch.round(-128.0 - t + slack).to(torch.int32)


def _saturate(q):
    return q.clamp(-128, 127).to(torch.int8)


def compare(actual, expected, case, inputs):
    got = actual.get("return")
    if not isinstance(got, tuple | list) or len(got) != 3:
        return "return value: expected a tuple of 3 values"
    codes, scales, azps = got
    exp_codes, exp_scales, exp_azps = expected["return"]
    message = compare_floats("return value[1]", scales, exp_scales, 1e-5)
    if message:
        return message
    quotients, _, zero_points = _quotients(inputs["input"], inputs["scale"], inputs["azp"], inputs["symmetric"])
    if exp_azps is None:
        if azps is not None:
            return "return value[2]: expected None"
    elif inputs["scale"] is None:
        message = compare_codes("return value[2]", azps, exp_azps, 0.0, band=_zero_point_band(inputs["input"]))
        if message:
            return message
        zero_points = azps.float()  # codes follow the candidate's own (admitted) zero point
    else:
        message = compare_codes("return value[2]", azps, exp_azps, 0.0)
        if message:
            return message
    shift = 0.0 if zero_points is None else zero_points
    band = code_band(quotients, lambda v: _saturate(torch.round(v) + shift))
    return compare_codes("return value[0]", codes, exp_codes,
                         band=(band[0].view(exp_codes.shape), band[1].view(exp_codes.shape)))
