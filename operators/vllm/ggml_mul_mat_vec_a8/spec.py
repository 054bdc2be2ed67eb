"""Matrix product of activations with a GGUF block-quantised weight, through 8-bit
quantised activations: vLLM's `ggml_mul_mat_vec_a8` custom op (vLLM 0.13; the
matrix-vector "MMVQ" kernel used for decode batches of a few tokens).

    ggml_mul_mat_vec_a8(W, X, type, row) -> Tensor

Y[i, r] = dot(Q8_1(X[i, :]), W[r, :]) for every activation row i and weight row r.

- `X`: [batch, col] (batch is small: 1 to 8 in vLLM) float16, bfloat16 or float32, contiguous; col is a multiple of 32.
- `W`: contiguous uint8 [row, col / 32 * block_bytes]: weight row r is col / 32 GGML
  blocks of 32 values, one after the other. This spec covers three GGML types:
  * type 2, Q4_0, 18 bytes: float16 d (little-endian, bytes 0-1), 16 bytes qs;
    value j = d * (nib_j - 8);
  * type 3, Q4_1, 20 bytes: float16 d, float16 m, 16 bytes qs; value j = d * nib_j + m;
  * type 8, Q8_0, 34 bytes: float16 d, 32 int8 qs; value j = d * qs[j];
  with nib_j = qs[j] & 15 for j < 16 and qs[j - 16] >> 4 for j >= 16.
- Result: a new tensor [batch, row] of X's dtype.

The activations are first quantised to Q8_1, per block of 32 consecutive values x of a
row (in float32): amax = max|x|, d = amax / 127 (an exactly rounded float32 division),
q_j = round(x_j / d) rounding halves away from zero (all q_j = 0 when amax = 0), and the
block keeps d8 = float16(d) and s8 = float16(sum_j x_j), both used as float32 below.
Note that the codes use the unrounded d while the dot product uses d8.

Each pair of weight block (d4, m4, codes w) and activation block (d8, s8, q) contributes,
in float32, with sumi = sum_j w_j * q_j an exact integer dot of the raw codes
(nib_j in 0..15 for Q4, qs[j] for Q8_0):

- Q4_0: d4 * (sumi * d8 - 8 * s8)
- Q4_1: sumi * float16(d4 * d8) + float16(m4 * s8)        (products rounded to float16)
- Q8_0: d4 * d8 * sumi

Y[i, r] is the float32 sum over the col / 32 blocks, converted to X's dtype. The order of
that sum is free. The inputs must not be modified. (vLLM's kernel also decodes the
K-quants; they are not required here.)

Checked with X's published tolerance, widened by what a d a few float32 ulps off (an
approximate division) may move: codes of activations within 2**-20 of a half; and by what
s8 rounded to the other float16 may move where the order of a block's sum (free) decides
it (as ggml_moe_a8).
"""

import torch

from kgb.operators import Case
from kgb.vllm.ggml import mul_mat_case, mul_mat_inputs, q8_1_matmul
from kgb.vllm.q8_1_check import mul_mat_compare

VERSION = 4  # 4: the check allows d8 = float16(d) rounded either way where d lies within QUOTIENT_RTOL of a boundary; 3: the check allows s8 rounded either way where the order of its sum decides; 2: codes on a half, exact d on the GPU
# No speed_baseline: vllm is not importable on the GPU host, so the reference is the baseline.

SIGNATURES = '''
def ggml_mul_mat_vec_a8(W: torch.Tensor, X: torch.Tensor, type: int, row: int) -> torch.Tensor:
    """vllm::ggml_mul_mat_vec_a8(Tensor W, Tensor X, int type, SymInt row) -> Tensor"""
'''

CASES = [
    mul_mat_case("smoke-q4_0", "smoke", 2, 1, 24, 64),
    mul_mat_case("smoke-q4_1-f32", "smoke", 3, 2, 16, 96, dtype="float32", seed=1),
    mul_mat_case("smoke-q8_0-bf16", "smoke", 8, 3, 20, 64, dtype="bfloat16", seed=2),
    mul_mat_case("llama8b-qkv-q4_0", "check", 2, 1, 6144, 4096),
    mul_mat_case("llama8b-down-q4_1-bf16", "check", 3, 4, 4096, 14336, dtype="bfloat16"),
    mul_mat_case("qwen2-7b-o-q8_0-f32", "check", 8, 8, 3584, 3584, dtype="float32"),
    mul_mat_case("odd-q4_0-f32", "check", 2, 5, 77, 160, dtype="float32"),
    mul_mat_case("llama8b-up-q8_0", "check", 8, 2, 14336, 4096),
    mul_mat_case("llama8b-decode-gate-up-q4_0", "bench", 2, 1, 28672, 4096),
    mul_mat_case("llama8b-decode-down-q8_0-bf16", "bench", 8, 4, 4096, 14336, dtype="bfloat16"),
    mul_mat_case("llama70b-decode-qkv-q4_1", "bench", 3, 8, 10240, 8192),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    return mul_mat_inputs(case.params, gen, device)


def reference(W, X, type, row):
    return q8_1_matmul(W.reshape(row, -1), type, X).to(X.dtype)


def compare(actual, expected, case, inputs):
    return mul_mat_compare(actual, expected, case, inputs)
