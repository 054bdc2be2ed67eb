"""Scaled int8 matrix product with asymmetrically quantised activations (a zero point per
tensor or per token): vLLM's `cutlass_scaled_mm_azp` custom op (vLLM 0.13).

    cutlass_scaled_mm_azp(out, a, b, a_scales, b_scales, azp_adj, azp=None, bias=None) -> None

The activations were quantised as a = round(x / sa) + zp, the weights symmetrically, so
x @ w = sa * sb * (a @ b - zp * colsum(b)). The zero-point term comes precomputed:

    acc[m, n] = sum_k a[m, k] * b[k, n]                         (exact, int32)
    adj[m, n] = azp_adj[n]                 when azp is None     (per-tensor zero point,
                                                                 azp_adj = zp * colsum(b))
              = azp[m] * azp_adj[n]        otherwise            (per-token zero points,
                                                                 azp_adj = colsum(b))
    out[m, n] = to_out( sa[m] * (sb[n] * float(acc[m, n] - adj[m, n])) + bias[n] )

- `a`: int8 [M, K], row-major with a unit column stride (rows may be padded).
- `b`: int8 [K, N], column-major: b.stride(0) == 1 (the transpose of a row-major [N, K]
  weight). K and N are multiples of 16.
- `a_scales`: float32, one element (per-tensor) or [M, 1] (per-token).
- `b_scales`: float32, one element (per-tensor) or [1, N] (per-channel).
- `azp_adj`: int32 [N]. `azp`: None or int32 [M].
- `bias`: None or a contiguous [N] tensor of out's dtype (used as float32).
- `out`: a contiguous [M, N] float16 or bfloat16 tensor; the result is written into it.

The subtraction (and the product azp[m] * azp_adj[n]) is exact integer arithmetic (no
int32 overflow occurs for the inputs here); the rest is float32: the difference times the
column's scale, times the row's scale, plus the bias, rounded once to out's dtype. The
inputs other than `out` must not be modified.
"""

import torch

from kgb.operators import Case

VERSION = 1
# No speed_baseline: vllm is not importable on the GPU host, so the reference is the baseline.

SIGNATURES = '''
def cutlass_scaled_mm_azp(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, a_scales: torch.Tensor, b_scales: torch.Tensor, azp_adj: torch.Tensor, azp: torch.Tensor | None = None, bias: torch.Tensor | None = None) -> None:
    """vllm::cutlass_scaled_mm_azp(Tensor! out, Tensor a, Tensor b, Tensor a_scales, Tensor b_scales, Tensor azp_adj, Tensor? azp, Tensor? bias) -> ()"""
'''

OUTPUT_ARGS = ("out",)


def _case(name, tag, m, k, n, out="bfloat16", per_token=False, per_channel=False, bias=False, pad=0, seed=0):
    params = dict(m=m, k=k, n=n, out=out, per_token=per_token, per_channel=per_channel, bias=bias, pad=pad)
    return Case(name, tag, params, seed=seed, reduction=k)


CASES = [
    _case("smoke-tensor-azp", "smoke", 5, 32, 16),
    _case("smoke-token-azp-bias-f16", "smoke", 3, 48, 32, out="float16", per_token=True, per_channel=True, bias=True, seed=1),
    _case("smoke-token-azp-padded", "smoke", 17, 16, 48, per_token=True, pad=16, seed=2),
    _case("llama8b-qkv-token", "check", 33, 4096, 6144, per_token=True, per_channel=True),
    _case("llama8b-down-tensor", "check", 100, 14336, 4096),
    _case("llama8b-o-token-f16-bias", "check", 1, 4096, 4096, out="float16", per_token=True, per_channel=True, bias=True),
    _case("qwen2-7b-up-tensor-bias", "check", 257, 3584, 18944, per_channel=True, bias=True),
    _case("padded-a-f16", "check", 65, 1024, 272, out="float16", per_token=True, pad=64),
    _case("llama8b-prefill-gate-up-token", "bench", 4096, 4096, 28672, per_token=True, per_channel=True),
    _case("llama70b-prefill-qkv-tensor", "bench", 2048, 8192, 10240, per_channel=True),
    _case("llama8b-decode-down-token", "bench", 16, 14336, 4096, per_token=True),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    m, k, n, pad = p["m"], p["k"], p["n"], p["pad"]
    a = torch.randint(-128, 128, (m, k + pad), generator=gen, dtype=torch.int8)
    w = torch.randint(-127, 128, (n, k), generator=gen, dtype=torch.int8)
    colsum = w.to(torch.int32).sum(1)
    if p["per_token"]:
        azp = torch.randint(-40, 41, (m,), generator=gen, dtype=torch.int32)
        azp_adj = colsum
    else:
        azp = None
        azp_adj = colsum * torch.randint(-40, 41, (1,), generator=gen, dtype=torch.int32)
    sa = (0.5 + torch.rand(m if p["per_token"] else 1, 1, generator=gen)) * 2 / 127
    sb = (0.5 + torch.rand(1, n if p["per_channel"] else 1, generator=gen)) * 0.05 / 127
    out_dtype = getattr(torch, p["out"])
    bias = torch.randn(n, generator=gen).to(out_dtype).to(device) if p["bias"] else None
    return dict(
        out=torch.empty(m, n, dtype=out_dtype, device=device), a=a.to(device)[:, :k], b=w.to(device).t(),
        a_scales=sa.to(device), b_scales=sb.to(device), azp_adj=azp_adj.to(device),
        azp=azp.to(device) if azp is not None else None, bias=bias,
    )


def reference(out, a, b, a_scales, b_scales, azp_adj, azp=None, bias=None):
    # exact integer arithmetic in float64 (exact below 2**53) on every device
    acc = a.double() @ b.double()
    if azp is None:
        acc = acc - azp_adj.double()[None, :]
    else:
        acc = acc - azp.double()[:, None] * azp_adj.double()[None, :]
    res = a_scales.reshape(-1, 1) * (b_scales.reshape(1, -1) * acc.float())
    if bias is not None:
        res = res + bias.float()
    out.copy_(res)
