"""RMS normalisation of the last dimension, vLLM's `rms_norm` custom op (vLLM 0.13).

    rms_norm(out, input, weight, epsilon) -> None

For every row x of `input` (a row is the last dimension, of length hidden_size):

    inv_rms = 1 / sqrt(mean(x * x) + epsilon)      # mean over the hidden_size elements
    out_row = round(x * inv_rms) * weight

computed in float32: the elements of x are converted to float32, the sum of squares is
accumulated in float32, and `x * inv_rms` is rounded to the input dtype before it is
multiplied by `weight` (the product is rounded to the input dtype again), as vLLM's CUDA
kernel and Hugging Face's `LlamaRMSNorm` do. For float32 inputs the roundings are no-ops.

- `input`: float16, bfloat16 or float32, with 2, 3 or 4 dimensions ([num_tokens, hidden],
  [num_tokens, num_heads, head_size] for a per-head q/k norm, or [batch, seq, heads,
  head_size]). Its leading dimensions may have any strides (a slice of a fused qkv
  tensor, a permuted view); its last dimension is usually contiguous but may have any
  stride.
- `weight`: contiguous, shape [hidden_size], same dtype as `input`.
- `out`: a contiguous tensor with the shape and dtype of `input`; the result is written
  into it (its previous contents are garbage). Nothing is returned.
- `epsilon`: a Python float (1e-5 or 1e-6 in real models).
- There is at least one row (vLLM does not launch on empty inputs). `input` and `weight`
  must not be modified.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def rms_norm(out: torch.Tensor, input: torch.Tensor, weight: torch.Tensor, epsilon: float) -> None:
    """vllm::rms_norm(Tensor! result, Tensor input, Tensor weight, float epsilon) -> ()"""
'''

OUTPUT_ARGS = ("out",)


def _case(name, tag, shape, dtype, eps=1e-6, layout="", seed=0, scale=1.0):
    params = dict(shape=shape, dtype=dtype, eps=eps, layout=layout, scale=scale)
    return Case(name, tag, params, seed=seed, reduction=shape[-1])


CASES = [
    _case("smoke-f32", "smoke", (5, 96), "float32"),
    _case("smoke-bf16-strided", "smoke", (3, 4, 40), "bfloat16", layout="qkv", seed=1),
    # [num_tokens, hidden] of real models
    _case("llama-f16", "check", (37, 4096), "float16", eps=1e-5),
    _case("qwen2-bf16", "check", (129, 3584), "bfloat16"),
    _case("qwen2-small-f32", "check", (257, 896), "float32"),
    _case("llama70b-bf16", "check", (3, 8192), "bfloat16", eps=1e-5),
    _case("odd-hidden-f16", "check", (100, 1000), "float16", scale=30.0),
    _case("one-token-f32", "check", (1, 5120), "float32"),
    _case("wide-f32", "check", (2, 20000), "float32"),
    # per-head q/k norm and layouts
    _case("qk-norm-bf16", "check", (64, 32, 128), "bfloat16"),
    _case("qk-norm-sliced-f16", "check", (33, 8, 128), "float16", layout="qkv"),
    _case("rows-sliced-f32", "check", (77, 1536), "float32", layout="qkv"),
    _case("4d-permuted-bf16", "check", (2, 19, 4, 64), "bfloat16", layout="permute"),
    _case("last-dim-strided-f32", "check", (50, 300), "float32", layout="colstride"),
    _case("small-values-f16", "check", (16, 2048), "float16", scale=1e-3),
    # bench: prefill batches of real models
    _case("llama-prefill-bf16", "bench", (16384, 4096), "bfloat16"),
    _case("llama70b-prefill-f16", "bench", (8192, 8192), "float16", eps=1e-5),
    _case("qk-norm-prefill-bf16", "bench", (16384, 32, 128), "bfloat16"),
    _case("decode-f32", "bench", (256, 5120), "float32"),
]


def _input(shape, dtype, layout, scale, gen, device):
    """A random input of `shape` in the case's layout (values drawn on the CPU)."""
    if layout == "qkv":  # the q part of a fused [..., 3 * rows, hidden] tensor
        full = (
            (*shape[:-2], 3 * shape[-2], shape[-1]) if len(shape) > 2 else (shape[0], 3 * shape[1])
        )
    elif layout == "permute":  # [batch, heads, seq, head_size] memory, seen as [b, s, h, d]
        full = (shape[0], shape[2], shape[1], shape[3])
    elif layout == "colstride":
        full = (*shape[:-1], 2 * shape[-1])
    else:
        full = shape
    x = (torch.randn(full, generator=gen) * scale).to(dtype).to(device)
    if layout == "qkv":
        return x[..., : shape[-2], :] if len(shape) > 2 else x[:, : shape[1]]
    if layout == "permute":
        return x.transpose(1, 2)
    if layout == "colstride":
        return x[..., ::2]
    return x


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    shape = p["shape"]
    x = _input(shape, dtype, p["layout"], p["scale"], gen, device)
    weight = (1.0 + 0.3 * torch.randn(shape[-1], generator=gen)).to(dtype).to(device)
    out = torch.empty(shape, dtype=dtype, device=device)
    return dict(out=out, input=x, weight=weight, epsilon=p["eps"])


def reference(out, input, weight, epsilon):
    x = input.float()
    inv_rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + epsilon)
    normed = (x * inv_rms).to(input.dtype)
    out.copy_(normed * weight)
