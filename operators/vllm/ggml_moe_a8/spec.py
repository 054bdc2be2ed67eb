"""Mixture-of-experts matrix products with GGUF block-quantised expert weights, through
8-bit quantised activations, over tokens sorted by expert: vLLM's `ggml_moe_a8` custom op
(vLLM 0.13; the prefill path of GGUF MoE layers).

    ggml_moe_a8(X, W, sorted_token_ids, expert_ids, num_tokens_post_padded, type, row, top_k, tokens) -> Tensor

The (token, expert) pairs arrive grouped by expert, as `moe_align_block_size` lays them
out with a block size of BLOCK = 4 (the value `ggml_moe_get_block_size` returns for these
types on NVIDIA GPUs): slot i of `sorted_token_ids` holds a flat pair index
z = t * top_k + k (token t, its k-th choice) or the padding value tokens * top_k, and
every run of BLOCK slots 4b .. 4b+3 belongs to expert e = expert_ids[b]. For every slot
i < num_tokens_post_padded[0] whose z < tokens * top_k:

    Y[z, r] = dot(Q8_1(X[z // top_k, :]), W[e, r, :])        for r in 0..row-1

Slots at or beyond num_tokens_post_padded[0], and padding slots, produce nothing; every
pair z appears in exactly one slot, so every row of Y is written.

- `sorted_token_ids`: int32 [S]; `expert_ids`: int32 [S / 4] (entries of blocks beyond
  num_tokens_post_padded may be -1); `num_tokens_post_padded`: int32 [1].
- `X`: [tokens, col] float16, bfloat16 or float32, contiguous; col is a multiple of 32.
- `W`: contiguous uint8 [num_experts, row, col / 32 * block_bytes]; weight row r of expert
  e is col / 32 GGML blocks of 32 values, one after the other. This spec covers three
  GGML types:
  * type 2, Q4_0, 18 bytes: float16 d (little-endian, bytes 0-1), 16 bytes qs;
    value j = d * (nib_j - 8);
  * type 3, Q4_1, 20 bytes: float16 d, float16 m, 16 bytes qs; value j = d * nib_j + m;
  * type 8, Q8_0, 34 bytes: float16 d, 32 int8 qs; value j = d * qs[j];
  with nib_j = qs[j] & 15 for j < 16 and qs[j - 16] >> 4 for j >= 16.
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

Checked: |Y - Y_ref| <= atol + rtol |Y_ref| + B[z, r] (1 + rtol), with X's published rtol
and atol = 1e-4 sqrt(col) RMS(Y_ref), where B bounds what a d a few float32 ulps off (an
approximate division) may change: it moves a code q_j by one only where x_j / d lies within
2**-20 of a half, and that changes the output by d8 |d4 w_j|; B sums these terms over the
activation values on such boundaries (about 1 in 300 of bfloat16 activations). The order in
which a block's 32 values are added for s8 is free too, so B adds, for each block whose
float32 sum some order may put on either side of a float16 rounding boundary, what s8 moved
to the other float16 changes: 8 |d4| times that step for Q4_0, the step it makes in
float16(m4 * s8) for Q4_1 (a few blocks in a hundred of float32 activations; hardly any of
float16 or bfloat16 ones, whose sums are exact in any order).
"""

import torch

from kgb.operators import Case
from kgb.vllm.ggml import align_for_experts, moe_case, moe_inputs, q8_1_matmul
from kgb.vllm.q8_1_check import compare_q8_1

VERSION = 5  # 5: the check allows d8 = float16(d) rounded either way where d lies within QUOTIENT_RTOL of a boundary; 4: the check allows s8 rounded either way where the order of its sum decides; 3: exact d on the GPU
# No speed_baseline: vllm is not importable on the GPU host, so the reference is the baseline.

SIGNATURES = '''
def ggml_moe_a8(X: torch.Tensor, W: torch.Tensor, sorted_token_ids: torch.Tensor, expert_ids: torch.Tensor, num_tokens_post_padded: torch.Tensor, type: int, row: int, top_k: int, tokens: int) -> torch.Tensor:
    """vllm::ggml_moe_a8(Tensor X, Tensor W, Tensor sorted_token_ids, Tensor expert_ids, Tensor num_tokens_post_padded, int type, SymInt row, int top_k, SymInt tokens) -> Tensor"""
'''

BLOCK = 4  # ggml_moe_get_block_size for Q4_0, Q4_1 and Q8_0 on NVIDIA GPUs


CASES = [
    moe_case("smoke-q4_0", "smoke", 2, 5, 4, 2, 24, 64),
    moe_case("smoke-q4_1-f32", "smoke", 3, 3, 3, 3, 16, 96, dtype="float32", seed=1),
    moe_case("smoke-q8_0-bf16", "smoke", 8, 6, 5, 2, 20, 64, dtype="bfloat16", seed=2),
    # w13 ([2 * inter, hidden]) and w2 ([hidden, inter]) of real MoE models, prefill batches
    moe_case("deepseek-v2-lite-w13-q4_0", "check", 2, 64, 64, 6, 2816, 2048),
    moe_case("qwen3-30b-w2-q8_0-bf16", "check", 8, 100, 128, 8, 2048, 768, dtype="bfloat16"),
    moe_case("qwen1.5-moe-w13-q4_1-f32", "check", 3, 33, 60, 4, 2816, 2048, dtype="float32"),
    moe_case("mixtral-w2-q4_0", "check", 2, 50, 8, 2, 4096, 14336),
    moe_case("odd-rows-q8_0-f32", "check", 8, 17, 6, 3, 77, 160, dtype="float32"),
    moe_case("deepseek-v2-lite-w2-prefill-q8_0", "bench", 8, 512, 64, 6, 2048, 1408),
    moe_case("qwen3-30b-w13-prefill-q4_0-bf16", "bench", 2, 512, 128, 8, 1536, 2048, dtype="bfloat16"),
    moe_case("mixtral-w13-prefill-q4_1", "bench", 3, 256, 8, 2, 28672, 4096),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    w, x, topk = moe_inputs(p, gen)
    sorted_ids, expert_ids, post_padded = align_for_experts(topk, p["experts"], BLOCK)
    return dict(
        X=x.to(device), W=w.to(device), sorted_token_ids=sorted_ids.to(device), expert_ids=expert_ids.to(device),
        num_tokens_post_padded=post_padded.to(device), type=p["type"], row=p["row"], top_k=p["top_k"],
        tokens=p["tokens"],
    )


def reference(X, W, sorted_token_ids, expert_ids, num_tokens_post_padded, type, row, top_k, tokens):
    y = torch.zeros(tokens * top_k, row, dtype=torch.float32, device=X.device)
    for e, z in _routes(sorted_token_ids, expert_ids, num_tokens_post_padded, top_k, tokens):
        y[z] = q8_1_matmul(W[e], type, X[z // top_k])
    return y.to(X.dtype)


def _routes(sorted_token_ids, expert_ids, num_tokens_post_padded, top_k, tokens):
    """(expert, the pairs z it serves, in slot order) for every expert that serves any, experts
    ascending. In one pass: a pass per expert waited for the device at every expert."""
    used = int(num_tokens_post_padded[0])
    ids = sorted_token_ids[:used].long()
    slot_expert = expert_ids.long().repeat_interleave(BLOCK)[:used]
    live = ids < tokens * top_k
    ids, slot_expert = ids[live], slot_expert[live]
    experts, counts = torch.stack(slot_expert.unique(return_counts=True)).tolist()
    return list(zip(experts, ids[slot_expert.argsort(stable=True)].split(counts), strict=True))


def compare(actual, expected, case, inputs):
    routes = _routes(inputs["sorted_token_ids"], inputs["expert_ids"], inputs["num_tokens_post_padded"],
                     inputs["top_k"], inputs["tokens"])
    return compare_q8_1(actual.get("return"), expected["return"], case,
                        [(inputs["W"][e], inputs["type"], inputs["X"][z // inputs["top_k"]], z) for e, z in routes])
