"""Residual add followed by RMS normalisation, in place: vLLM's `fused_add_rms_norm`
custom op (vLLM 0.13).

    fused_add_rms_norm(input, residual, weight, epsilon) -> None

For every row (the last dimension, of length hidden_size) of `input` and `residual`:

    z = round(input_row + residual_row)            # added in float32, rounded to the dtype
    residual_row <- z
    inv_rms = 1 / sqrt(mean(z * z) + epsilon)      # float32, mean over hidden_size
    input_row <- round(z * inv_rms) * weight       # the product rounded to the dtype again

Both tensors are updated in place and nothing is returned: afterwards `residual` holds
the sum (the next layer's residual) and `input` the normalised, weighted sum. The sum of
squares uses the *rounded* sum z, converted to float32; `z * inv_rms` is rounded to the
dtype before the multiplication by `weight`, as vLLM's kernel does. For float32 the
roundings are no-ops.

- `input`: float16, bfloat16 or float32, shape [..., hidden_size] (usually [num_tokens,
  hidden_size]). Its last dimension is contiguous; its rows are equally spaced, row i
  starting i * input.stride(-2) elements after the first (so `input` may be a slice of a
  wider tensor). Only the elements of the view may be written.
- `residual`: contiguous, same shape and dtype as `input`.
- `weight`: contiguous, shape [hidden_size], same dtype. Not modified.
- `epsilon`: a Python float (1e-5 or 1e-6 in real models).
- There is at least one row (vLLM does not launch on empty inputs).
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def fused_add_rms_norm(input: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, epsilon: float) -> None:
    """vllm::fused_add_rms_norm(Tensor! input, Tensor! residual, Tensor weight, float epsilon) -> ()"""
'''

INOUT_ARGS = ("input", "residual")


def _case(name, tag, shape, dtype, eps=1e-6, row_pad=0, seed=0, scale=1.0):
    """row_pad > 0: `input` is the first hidden_size columns of rows hidden_size + row_pad long."""
    params = dict(shape=shape, dtype=dtype, eps=eps, row_pad=row_pad, scale=scale)
    return Case(name, tag, params, seed=seed, reduction=shape[-1])


CASES = [
    _case("smoke-f32", "smoke", (6, 80), "float32"),
    _case("smoke-bf16-strided", "smoke", (5, 64), "bfloat16", row_pad=64, seed=1),
    _case("llama-f16", "check", (37, 4096), "float16", eps=1e-5),
    _case("qwen2-bf16", "check", (129, 3584), "bfloat16"),
    _case("qwen2-small-f32", "check", (257, 896), "float32"),
    _case("llama70b-bf16", "check", (3, 8192), "bfloat16", eps=1e-5),
    _case("odd-hidden-f16", "check", (100, 1000), "float16", scale=20.0),
    _case("one-token-f32", "check", (1, 5120), "float32"),
    _case("wide-f32", "check", (2, 20000), "float32"),
    _case("batch-seq-bf16", "check", (3, 41, 2048), "bfloat16"),
    _case("strided-rows-f16", "check", (65, 1024), "float16", row_pad=2048),
    _case("strided-odd-f32", "check", (31, 777), "float32", row_pad=5),
    _case("small-values-bf16", "check", (16, 2048), "bfloat16", scale=1e-3),
    _case("llama-prefill-bf16", "bench", (16384, 4096), "bfloat16"),
    _case("llama70b-prefill-f16", "bench", (8192, 8192), "float16", eps=1e-5),
    _case("decode-bf16", "bench", (256, 5120), "bfloat16"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    shape, pad = p["shape"], p["row_pad"]
    hidden = shape[-1]
    x = torch.randn((*shape[:-1], hidden + pad), generator=gen) * p["scale"]
    x = x.to(dtype).to(device)[..., :hidden]  # a view with a row stride when pad > 0
    residual = (torch.randn(shape, generator=gen) * p["scale"]).to(dtype).to(device)
    weight = (1.0 + 0.3 * torch.randn(hidden, generator=gen)).to(dtype).to(device)
    return dict(input=x, residual=residual, weight=weight, epsilon=p["eps"])


def reference(input, residual, weight, epsilon):
    z = (input.float() + residual.float()).to(input.dtype)
    residual.copy_(z)
    zf = z.float()
    inv_rms = torch.rsqrt(zf.pow(2).mean(dim=-1, keepdim=True) + epsilon)
    input.copy_((zf * inv_rms).to(input.dtype) * weight)
