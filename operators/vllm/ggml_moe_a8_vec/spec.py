"""Mixture-of-experts matrix-vector products with GGUF block-quantised expert weights,
through 8-bit quantised activations: vLLM's `ggml_moe_a8_vec` custom op (vLLM 0.13; the
decode path of GGUF MoE layers).

    ggml_moe_a8_vec(X, W, topk_ids, top_k, type, row, tokens) -> Tensor

For every token t and every one of its top_k chosen experts (z = t * top_k + k,
e = topk_ids[t, k]):

    Y[z, r] = dot(Q8_1(X[t, :]), W[e, r, :])        for r in 0..row-1

- `X`: [tokens, col] float16, bfloat16 or float32, contiguous; col is a multiple of 32.
- `W`: contiguous uint8 [num_experts, row, col / 32 * block_bytes]; weight row r of expert
  e is col / 32 GGML blocks of 32 values, one after the other. This spec covers three
  GGML types:
  * type 2, Q4_0, 18 bytes: float16 d (little-endian, bytes 0-1), 16 bytes qs;
    value j = d * (nib_j - 8);
  * type 3, Q4_1, 20 bytes: float16 d, float16 m, 16 bytes qs; value j = d * nib_j + m;
  * type 8, Q8_0, 34 bytes: float16 d, 32 int8 qs; value j = d * qs[j];
  with nib_j = qs[j] & 15 for j < 16 and qs[j - 16] >> 4 for j >= 16.
- `topk_ids`: int32 [tokens, top_k], expert ids in [0, num_experts).
- Result: a new tensor [tokens * top_k, row] of X's dtype.

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

Y[z, r] is the float32 sum over the col / 32 blocks, converted to X's dtype; the order of
that sum is free. The inputs must not be modified.

Checked with X's published tolerance, widened by what a d a few float32 ulps off (an
approximate division) may move: codes of activations within 2**-20 of a half; and by what
s8 rounded to the other float16 may move where the order of a block's sum (free) decides
it (as ggml_moe_a8).
"""

import torch

from kgb.operators import Case
from kgb.vllm.ggml import moe_case, moe_inputs, q8_1_matmul
from kgb.vllm.q8_1_check import compare_q8_1

VERSION = 4  # 4: the check allows d8 = float16(d) rounded either way where d lies within QUOTIENT_RTOL of a boundary; 3: the check allows s8 rounded either way where the order of its sum decides; 2: codes on a half, exact d on the GPU
# No speed_baseline: vllm is not importable on the GPU host, so the reference is the baseline.

SIGNATURES = '''
def ggml_moe_a8_vec(X: torch.Tensor, W: torch.Tensor, topk_ids: torch.Tensor, top_k: int, type: int, row: int, tokens: int) -> torch.Tensor:
    """vllm::ggml_moe_a8_vec(Tensor X, Tensor W, Tensor topk_ids, int top_k, int type, SymInt row, SymInt tokens) -> Tensor"""
'''



CASES = [
    moe_case("smoke-q4_0", "smoke", 2, 3, 4, 2, 24, 64),
    moe_case("smoke-q4_1-f32", "smoke", 3, 2, 3, 3, 16, 96, dtype="float32", seed=1),
    moe_case("smoke-q8_0-bf16", "smoke", 8, 1, 5, 2, 20, 64, dtype="bfloat16", seed=2),
    # w13 ([2 * inter, hidden]) and w2 ([hidden, inter]) of real MoE models
    moe_case("deepseek-v2-lite-w13-q4_0", "check", 2, 4, 64, 6, 2816, 2048),
    moe_case("qwen3-30b-w2-q8_0-bf16", "check", 8, 2, 128, 8, 2048, 768, dtype="bfloat16"),
    moe_case("qwen1.5-moe-w13-q4_1-f32", "check", 3, 1, 60, 4, 2816, 2048, dtype="float32"),
    moe_case("mixtral-w2-q4_0", "check", 2, 3, 8, 2, 4096, 14336),
    moe_case("odd-rows-q8_0-f32", "check", 8, 5, 6, 3, 77, 160, dtype="float32"),
    moe_case("deepseek-v2-lite-w2-decode-q8_0", "bench", 8, 8, 64, 6, 2048, 1408),
    moe_case("qwen3-30b-w13-decode-q4_0-bf16", "bench", 2, 4, 128, 8, 1536, 2048, dtype="bfloat16"),
    moe_case("mixtral-w13-decode-q4_1", "bench", 3, 1, 8, 2, 28672, 4096),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    w, x, topk = moe_inputs(p, gen)
    return dict(
        X=x.to(device), W=w.to(device), topk_ids=topk.to(device), top_k=p["top_k"],
        type=p["type"], row=p["row"], tokens=p["tokens"],
    )


def reference(X, W, topk_ids, top_k, type, row, tokens):
    y = torch.zeros(tokens * top_k, row, dtype=torch.float32, device=X.device)
    for e, z in _routes(topk_ids):
        y[z] = q8_1_matmul(W[e], type, X[z // top_k])
    return y.to(X.dtype)


def _routes(topk_ids):
    """(expert, the pairs z it serves, ascending) for every expert that serves any, experts
    ascending. In one pass: a pass per expert waited for the device at every expert."""
    flat = topk_ids.reshape(-1).long()
    experts, counts = torch.stack(flat.unique(return_counts=True)).tolist()
    return list(zip(experts, flat.argsort(stable=True).split(counts), strict=True))


def compare(actual, expected, case, inputs):
    return compare_q8_1(actual.get("return"), expected["return"], case,
                        [(inputs["W"][e], inputs["type"], inputs["X"][z // inputs["top_k"]], z)
                         for e, z in _routes(inputs["topk_ids"])])
