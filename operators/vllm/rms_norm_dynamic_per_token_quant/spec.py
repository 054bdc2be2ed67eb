"""RMS normalisation fused with dynamic per-token quantisation to fp8 or int8: vLLM's
`rms_norm_dynamic_per_token_quant` custom op (vLLM 0.13).

    rms_norm_dynamic_per_token_quant(result, input, weight, scale, epsilon, scale_ub, residual) -> None

For every token (row) of `input` [num_tokens, hidden] (contiguous):

    x = float32(input_row)                         # + float32(residual_row) when residual is given
    residual_row <- round_to_dtype(x)              # only when residual is given
    inv_rms = 1 / sqrt(sum(x * x) / hidden + epsilon)          # float32, from the unrounded x
    y = float32(round_to_dtype(round_to_dtype(x * inv_rms) * weight))
    absmax = max(|y|) over the row; with scale_ub: absmax = min(absmax, scale_ub[0])
    s = max(absmax / QMAX, MIN_SCALE)              # float32
    scale[token, 0] <- s
    fp8:  result_row <- fp8(clamp(y / s, -448, 448))           # round to nearest even
    int8: result_row <- int8(saturate(round_half_even(y * (1 / s))))

round_to_dtype rounds to the input dtype (a no-op for float32): the normalised value is
rounded before it is multiplied by the weight, and the product is rounded again, as in
vLLM's `rms_norm`. The fp8 format is float8_e4m3fn (QMAX = 448, largest finite value 448,
MIN_SCALE = 1 / (448 * 512)); fp8 divides by s. For int8, QMAX = 127, MIN_SCALE is the
float32 epsilon 2**-23, and the value is multiplied by the float32 reciprocal 1 / s, then
rounded half to even and saturated to [-128, 127].

- `result`: contiguous, the shape of `input`, dtype torch.float8_e4m3fn or torch.int8
  (the quantisation target); written.
- `input`: float16, bfloat16 or float32, [num_tokens, hidden], contiguous; not modified.
- `weight`: [hidden], same dtype as input.
- `scale`: float32 [num_tokens, 1], contiguous; written.
- `epsilon`: a Python float.
- `scale_ub`: None, or a float32 tensor of one element bounding absmax (fp8 only).
- `residual`: None, or a contiguous tensor like `input`: it is added to the input before
  the norm, and the rounded sum is written back into it (input itself is unchanged).

Checked: the residual within the input dtype's rtol; each scale within the input dtype's
rtol of the reference's, or where an inv_rms within 2**-16 of the reference's puts it (a
float32 sum of squares in another order, an approximate rsqrt: where a token's absmax
product x * inv_rms lies that near a rounding boundary of the input dtype, the absmax, and
with it the scale, may take either rounding); quantised codes those of the reference's y
over the candidate's own scale (brought into that range), except that a code may be one
step away where the quotient lies within 2**-20 of a rounding boundary, and at most 0.1% of
the others may be (a sum of squares in another order may move a value on a rounding
boundary).
"""

import torch

from kgb.operators import Case
from kgb.vllm.quant import (
    compare_rms_norm_quant,
    input_rtol,
    make_rms_norm_quant_inputs,
    rms_norm_quant,
)

VERSION = 3  # 3: codes over the candidate's own scale, which may follow an absmax rounded either way
# Speed baseline: the reference below. vLLM's own kernel would be the fairer baseline, but
# vllm is not importable on the GPU host, so timings compare against PyTorch.

SIGNATURES = '''
def rms_norm_dynamic_per_token_quant(
    result: torch.Tensor,
    input: torch.Tensor,
    weight: torch.Tensor,
    scale: torch.Tensor,
    epsilon: float,
    scale_ub: torch.Tensor | None,
    residual: torch.Tensor | None,
) -> None:
    """vllm::rms_norm_dynamic_per_token_quant(Tensor! result, Tensor input, Tensor weight,
    Tensor! scale, float epsilon, Tensor? scale_ub, Tensor!? residual) -> ()"""
'''

OUTPUT_ARGS = ("result", "scale")
INOUT_ARGS = ("residual",)


def _case(name, tag, tokens, hidden, dtype, quant, residual=False, ub=False, eps=1e-6, seed=0):
    params = dict(tokens=tokens, hidden=hidden, dtype=dtype, quant=quant, residual=residual, ub=ub, eps=eps)
    return Case(name, tag, params, seed=seed, reduction=hidden)


CASES = [
    _case("smoke-bf16-fp8-residual", "smoke", 5, 96, "bfloat16", "float8_e4m3fn", residual=True),
    _case("smoke-f32-int8-odd", "smoke", 3, 70, "float32", "int8", seed=1),
    _case("llama3-8b-fp8", "check", 37, 4096, "bfloat16", "float8_e4m3fn", eps=1e-5),
    _case("llama3-8b-fp8-residual-ub", "check", 65, 4096, "bfloat16", "float8_e4m3fn", residual=True, ub=True),
    _case("qwen2-7b-int8-residual", "check", 33, 3584, "float16", "int8", residual=True),
    _case("llama3-70b-int8", "check", 9, 8192, "bfloat16", "int8", eps=1e-5),
    _case("odd-hidden-f16-fp8", "check", 50, 1001, "float16", "float8_e4m3fn"),
    _case("f32-fp8-ub", "check", 17, 2048, "float32", "float8_e4m3fn", ub=True),
    _case("one-token-int8", "check", 1, 5120, "float32", "int8", residual=True),
    _case("llama3-8b-prefill-fp8", "bench", 8192, 4096, "bfloat16", "float8_e4m3fn", residual=True),
    _case("llama3-70b-prefill-int8", "bench", 4096, 8192, "bfloat16", "int8"),
    _case("decode-fp8", "bench", 256, 4096, "bfloat16", "float8_e4m3fn"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    return make_rms_norm_quant_inputs(case.params, 1, gen, device)



def reference(result, input, weight, scale, epsilon, scale_ub, residual):
    # The op returns nothing; the float32 sum its norm took is returned for `compare` alone.
    return rms_norm_quant(result, input, weight, scale, epsilon, scale_ub, residual, input.shape[-1])


def compare(actual, expected, case, inputs):
    return compare_rms_norm_quant(actual, expected, inputs, inputs["input"].shape[-1],
                                  input_rtol(getattr(torch, case.params["dtype"])))
