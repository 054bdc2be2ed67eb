"""Scaled matrix product of 8-bit quantised operands (W8A8): vLLM's `cutlass_scaled_mm`
custom op (vLLM 0.13), used by int8 and fp8 checkpoints.

    cutlass_scaled_mm(out, a, b, a_scales, b_scales, bias=None) -> None

    out[m, n] = to_out( sa[m] * (sb[n] * float(sum_k a[m, k] * b[k, n])) + bias[n] )

- `a`: [M, K] activations, int8 or float8_e4m3fn, row-major with a unit column stride
  (rows may be padded: a.stride(0) >= K).
- `b`: [K, N] weights of the same dtype, column-major: b.stride(0) == 1 (it is the
  transpose of a row-major [N, K] weight). K and N are multiples of 16.
- `a_scales`: float32, either one element (per-tensor: sa[m] = a_scales for all m) or
  [M, 1] (per-token).
- `b_scales`: float32, either one element (per-tensor) or [1, N] (per-channel).
- `bias`: None or a contiguous [N] tensor of out's dtype (used as float32).
- `out`: a contiguous [M, N] float16 or bfloat16 tensor; the result is written into it.

The products are accumulated exactly: in int32 for int8 operands (no overflow occurs for
the shapes here), in float32 for fp8 operands (any order). The epilogue runs in float32:
the accumulator times the column's scale, times the row's scale, plus the bias, rounded
once to out's dtype. The inputs other than `out` must not be modified. (vLLM also accepts
DeepSeek-style block-wise fp8 scales on Hopper; they are not part of this spec.)

This op is CUTLASS's in vLLM, but it is an ordinary GEMM with a fused epilogue: Triton's
tl.dot takes int8 (int32 accumulator) and fp8 operands on NVIDIA GPUs.
"""

import torch

from kgb.operators import Case

VERSION = 1
# No speed_baseline: vllm is not importable on the GPU host, so the reference is the baseline.

SIGNATURES = '''
def cutlass_scaled_mm(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, a_scales: torch.Tensor, b_scales: torch.Tensor, bias: torch.Tensor | None = None) -> None:
    """vllm::cutlass_scaled_mm(Tensor! out, Tensor a, Tensor b, Tensor a_scales, Tensor b_scales, Tensor? bias) -> ()"""
'''

OUTPUT_ARGS = ("out",)


def _case(name, tag, m, k, n, dtype="int8", out="bfloat16", per_token=False, per_channel=False, bias=False, pad=0, seed=0):
    params = dict(m=m, k=k, n=n, dtype=dtype, out=out, per_token=per_token, per_channel=per_channel, bias=bias, pad=pad)
    return Case(name, tag, params, seed=seed, reduction=k)


CASES = [
    _case("smoke-int8-tensor", "smoke", 5, 32, 16),
    _case("smoke-fp8-token-channel-bias", "smoke", 3, 48, 32, dtype="float8_e4m3fn", out="float16",
          per_token=True, per_channel=True, bias=True, seed=1),
    _case("smoke-int8-padded-rows", "smoke", 17, 16, 48, per_token=True, pad=16, seed=2),
    _case("llama8b-qkv-int8", "check", 33, 4096, 6144, per_token=True, per_channel=True),
    _case("llama8b-down-fp8", "check", 100, 14336, 4096, dtype="float8_e4m3fn"),
    _case("llama8b-o-fp8-token-f16-bias", "check", 1, 4096, 4096, dtype="float8_e4m3fn", out="float16",
          per_token=True, per_channel=True, bias=True),
    _case("qwen2-7b-up-int8-bias", "check", 257, 3584, 18944, per_channel=True, bias=True),
    _case("padded-a-int8-f16", "check", 65, 1024, 272, out="float16", per_token=True, pad=64),
    _case("llama8b-prefill-gate-up-fp8", "bench", 4096, 4096, 28672, dtype="float8_e4m3fn", per_token=True, per_channel=True),
    _case("llama70b-prefill-qkv-int8", "bench", 2048, 8192, 10240, per_token=True, per_channel=True),
    _case("llama8b-decode-down-fp8", "bench", 16, 14336, 4096, dtype="float8_e4m3fn"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    m, k, n, pad = p["m"], p["k"], p["n"], p["pad"]
    if p["dtype"] == "int8":
        a = torch.randint(-127, 128, (m, k + pad), generator=gen, dtype=torch.int8)
        w = torch.randint(-127, 128, (n, k), generator=gen, dtype=torch.int8)
        unit = 1 / 127
    else:
        a = (torch.randn(m, k + pad, generator=gen) * 100).clamp(-448, 448).to(torch.float8_e4m3fn)
        w = (torch.randn(n, k, generator=gen) * 100).clamp(-448, 448).to(torch.float8_e4m3fn)
        unit = 1 / 448
    sa = (0.5 + torch.rand(m if p["per_token"] else 1, 1, generator=gen)) * 2 * unit
    sb = (0.5 + torch.rand(1, n if p["per_channel"] else 1, generator=gen)) * 0.05 * unit
    out_dtype = getattr(torch, p["out"])
    bias = torch.randn(n, generator=gen).to(out_dtype).to(device) if p["bias"] else None
    return dict(
        out=torch.empty(m, n, dtype=out_dtype, device=device), a=a.to(device)[:, :k], b=w.to(device).t(),
        a_scales=sa.to(device), b_scales=sb.to(device), bias=bias,
    )


def reference(out, a, b, a_scales, b_scales, bias=None):
    if a.dtype == torch.int8:
        # exact integer products, summed in float64 (exact below 2**53) on every device
        acc = (a.double() @ b.double()).float()
    else:
        acc = a.float() @ b.float()
    res = a_scales.reshape(-1, 1) * (b_scales.reshape(1, -1) * acc)
    if bias is not None:
        res = res + bias.float()
    out.copy_(res)
