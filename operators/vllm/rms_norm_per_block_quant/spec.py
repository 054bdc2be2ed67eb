"""RMS normalisation fused with per-block (per group of columns) dynamic quantisation to
fp8 or int8: vLLM's `rms_norm_per_block_quant` custom op (vLLM 0.13), the activation
quantisation of DeepSeek-style block-scaled fp8 GEMMs.

    rms_norm_per_block_quant(result, input, weight, scale, epsilon, scale_ub, residual,
                             group_size, is_scale_transposed) -> None

For every token (row) of `input` [num_tokens, hidden] (contiguous):

    x = float32(input_row)                         # + float32(residual_row) when residual is given
    residual_row <- round_to_dtype(x)              # only when residual is given
    inv_rms = 1 / sqrt(sum(x * x) / hidden + epsilon)          # float32, from the unrounded x
    y = float32(round_to_dtype(round_to_dtype(x * inv_rms) * weight))

then, for every group j of `group_size` consecutive columns (columns j*group_size ...
(j+1)*group_size - 1):

    absmax = max(|y|) over the group; with scale_ub: absmax = min(absmax, scale_ub[0])
    s = max(absmax / QMAX, MIN_SCALE)              # float32
    scale[token, j] <- s
    fp8:  result[token, group j] <- fp8(clamp(y / s, -448, 448))   # round to nearest even
    int8: result[token, group j] <- int8(saturate(round_half_even(y * (1 / s))))

round_to_dtype rounds to the input dtype (a no-op for float32), as in vLLM's `rms_norm`.
fp8 is float8_e4m3fn (QMAX = 448, MIN_SCALE = 1 / (448 * 512)) and divides by s; int8 has
QMAX = 127, MIN_SCALE = the float32 epsilon 2**-23, multiplies by the float32 reciprocal
1 / s, rounds half to even and saturates to [-128, 127].

- `result`: contiguous, the shape of `input`, torch.float8_e4m3fn or torch.int8; written.
- `input`: float16, bfloat16 or float32, [num_tokens, hidden], contiguous; hidden is a
  multiple of group_size. Not modified.
- `weight`: [hidden], same dtype as input.
- `scale`: float32, logically [num_tokens, hidden // group_size]; written at
  scale[token, j]. With is_scale_transposed=False it is contiguous; with True it is the
  transpose of a contiguous [hidden // group_size, num_tokens] tensor (strides
  (1, num_tokens)), the column-major layout block-scaled GEMMs read.
- `epsilon`: a Python float; `group_size`: 64 or 128; `is_scale_transposed`: a bool.
- `scale_ub`: None, or a float32 tensor of one element bounding absmax (fp8 only).
- `residual`: None, or a contiguous tensor like `input`, added before the norm; the
  rounded sum is written back into it.

Checked: the residual within the input dtype's rtol; each scale within the input dtype's
rtol of the reference's, or where an inv_rms within 2**-16 of the reference's puts it (a sum
of squares in another order, an approximate rsqrt: where a group's absmax product
x * inv_rms lies that near a rounding boundary of the input dtype, the absmax, and with it
the scale, may take either rounding); quantised codes those of the reference's y over the
candidate's own scale (brought into that range), except that a code may be one step away
where the quotient y / s lies within 2**-20 of a rounding boundary (a scale or quotient a
few float32 ulps off, e.g. an approximate division, moves it), and at most 0.1% of the
others may be one step away (a sum of squares in another order or an approximate rsqrt may
move y itself across a rounding boundary of the input dtype).
"""

import torch

from kgb.operators import Case
from kgb.vllm.quant import (
    compare_rms_norm_quant,
    input_rtol,
    make_rms_norm_quant_inputs,
    rms_norm_quant,
)

VERSION = 4  # 4: codes over the candidate's own scale, which may follow an absmax rounded either way
# Speed baseline: the reference below. vLLM's own kernel would be the fairer baseline, but
# vllm is not importable on the GPU host, so timings compare against PyTorch.

SIGNATURES = '''
def rms_norm_per_block_quant(
    result: torch.Tensor,
    input: torch.Tensor,
    weight: torch.Tensor,
    scale: torch.Tensor,
    epsilon: float,
    scale_ub: torch.Tensor | None,
    residual: torch.Tensor | None,
    group_size: int,
    is_scale_transposed: bool,
) -> None:
    """vllm::rms_norm_per_block_quant(Tensor! result, Tensor input, Tensor weight,
    Tensor! scale, float epsilon, Tensor? scale_ub, Tensor!? residual, int group_size,
    bool is_scale_transposed) -> ()"""
'''

OUTPUT_ARGS = ("result", "scale")
INOUT_ARGS = ("residual",)


def _case(name, tag, tokens, hidden, dtype, quant, group=128, transposed=False, residual=False,
          ub=False, eps=1e-6, seed=0):
    params = dict(tokens=tokens, hidden=hidden, dtype=dtype, quant=quant, group=group,
                  transposed=transposed, residual=residual, ub=ub, eps=eps)
    return Case(name, tag, params, seed=seed, reduction=hidden)


CASES = [
    _case("smoke-bf16-fp8-residual-t", "smoke", 5, 256, "bfloat16", "float8_e4m3fn", group=64,
          transposed=True, residual=True),
    _case("smoke-f32-int8", "smoke", 3, 384, "float32", "int8", seed=1),
    _case("deepseek-v3-fp8", "check", 37, 7168, "bfloat16", "float8_e4m3fn"),
    _case("deepseek-v3-fp8-t-residual", "check", 19, 7168, "bfloat16", "float8_e4m3fn",
          transposed=True, residual=True),
    _case("qwen3-fp8-ub-g64", "check", 33, 4096, "bfloat16", "float8_e4m3fn", group=64, ub=True),
    _case("llama3-70b-int8-t", "check", 7, 8192, "float16", "int8", transposed=True, eps=1e-5),
    _case("f32-int8-residual-g64", "check", 29, 2048, "float32", "int8", group=64, residual=True),
    _case("one-token-fp8", "check", 1, 1536, "float16", "float8_e4m3fn"),
    _case("deepseek-v3-prefill-fp8", "bench", 8192, 7168, "bfloat16", "float8_e4m3fn", residual=True),
    _case("qwen3-prefill-fp8-t", "bench", 8192, 4096, "bfloat16", "float8_e4m3fn", transposed=True),
    _case("decode-fp8", "bench", 256, 7168, "bfloat16", "float8_e4m3fn"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    inputs = make_rms_norm_quant_inputs(p, p["hidden"] // p["group"], gen, device)
    return dict(inputs, group_size=p["group"], is_scale_transposed=p["transposed"])



def reference(result, input, weight, scale, epsilon, scale_ub, residual, group_size, is_scale_transposed):
    # The op returns nothing; the float32 sum its norm took is returned for `compare` alone.
    return rms_norm_quant(result, input, weight, scale, epsilon, scale_ub, residual, group_size)


def compare(actual, expected, case, inputs):
    return compare_rms_norm_quant(actual, expected, inputs, inputs["group_size"],
                                  input_rtol(getattr(torch, case.params["dtype"])))
