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

Checked: int8 outputs and zero points as codes, equal to the reference's except that at
most 0.1% may be one step away (an approximate division on a GPU); scales within float32
rtol 1e-5.
"""

import torch

from kgb.operators import Case
from kgb.vllm.quant import INT8_MAX, compare_quantised, to_int8

VERSION = 1
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
    x = input.float()
    if scale is not None:
        if azp is None:
            return to_int8(x / scale), scale, None
        q = torch.round(x * (1.0 / scale)) + azp.float()
        return q.clamp(-128, 127).to(torch.int8), scale, azp
    rows = x.reshape(-1, x.shape[-1])
    if symmetric:
        absmax = rows.abs().amax(dim=1, keepdim=True)
        mult = torch.where(absmax == 0, torch.zeros_like(absmax), INT8_MAX / absmax)
        return to_int8(rows * mult).view(input.shape), absmax / INT8_MAX, None
    mn, mx = rows.amin(dim=1, keepdim=True), rows.amax(dim=1, keepdim=True)
    s = (mx - mn) / 255.0
    zp = torch.round(-128.0 - mn / s)
    q = (torch.round(rows * (1.0 / s)) + zp).clamp(-128, 127).to(torch.int8)
    return q.view(input.shape), s, zp.to(torch.int32)


def compare(actual, expected, case, inputs):
    return compare_quantised(actual, expected, 1e-5)
