"""Re-encode 4-bit quantised weights for Marlin's int4-weight / fp8-activation kernels:
vLLM's `marlin_int4_fp8_preprocess` custom op (vLLM 0.13).

    marlin_int4_fp8_preprocess(qweight, qzeros_or_none=None, inplace=False) -> Tensor

Every int32 word of `qweight` holds eight 4-bit unsigned values v in fields 0..7 (field i
= bits [4i, 4i+4)). Each value is replaced, in the same field of the same word, by

    r = v - z        if v >= z
    r = 15 - v       otherwise

where z is the value's zero point (a sign-magnitude-like code that Marlin turns into an
fp8 number with a few bit operations):
- `qzeros_or_none` is None (GPTQ-style symmetric weights, any layout): z = 8 for every
  value. qweight has any shape with numel a multiple of 32.
- `qzeros_or_none` given (AWQ layout): qweight is int32 [K, N // 8] (K a multiple of 32),
  qzeros is int32 [K // G, N // 8] with the same field order (G = K // qzeros.shape[0],
  a multiple of 8); the value in field i of qweight[k, c] uses z = field i of
  qzeros[k // G, c].

Both tensors are contiguous. With inplace=False the result is a new int32 tensor of
qweight's shape and qweight is unchanged; with inplace=True the result is written into
qweight and qweight itself is returned. qzeros is never modified.
"""

import torch

from kgb.operators import Case
from kgb.vllm.packing import fp8_preprocess

VERSION = 1
# No speed_baseline: vllm is not importable on the GPU host, so the reference is the baseline.

SIGNATURES = '''
def marlin_int4_fp8_preprocess(qweight: torch.Tensor, qzeros_or_none: torch.Tensor | None = None, inplace: bool = False) -> torch.Tensor:
    """vllm::marlin_int4_fp8_preprocess(Tensor qweight, Tensor? qzeros_or_none=None, bool inplace=False) -> Tensor"""
'''

INOUT_ARGS = ("qweight",)


def _case(name, tag, k, n, group=0, inplace=False, seed=0):
    """group 0: GPTQ layout [k // 8, n] without zeros; else AWQ layout [k, n // 8]."""
    return Case(name, tag, dict(k=k, n=n, group=group, inplace=inplace), seed=seed)


CASES = [
    _case("smoke-gptq", "smoke", 64, 40),
    _case("smoke-awq-inplace", "smoke", 64, 64, group=32, inplace=True, seed=1),
    _case("smoke-awq", "smoke", 32, 16, group=8, seed=2),
    _case("llama8b-qkv-gptq", "check", 4096, 6144),
    _case("llama8b-down-gptq-inplace", "check", 14336, 4096, inplace=True),
    _case("llama8b-up-awq-g128", "check", 4096, 14336, group=128),
    _case("qwen2-7b-o-awq-g64-inplace", "check", 3584, 3584, group=64, inplace=True),
    _case("awq-per-channel", "check", 96, 200, group=96),
    _case("llama70b-up-gptq", "bench", 8192, 28672),
    _case("llama70b-down-awq-g128", "bench", 28672, 8192, group=128),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    k, n, group = p["k"], p["n"], p["group"]
    words = lambda *shape: torch.randint(-(2**31), 2**31, shape, generator=gen, dtype=torch.int32)  # noqa: E731
    if group == 0:
        return dict(qweight=words(k // 8, n).to(device), qzeros_or_none=None, inplace=p["inplace"])
    return dict(
        qweight=words(k, n // 8).to(device), qzeros_or_none=words(k // group, n // 8).to(device),
        inplace=p["inplace"],
    )


def reference(qweight, qzeros_or_none=None, inplace=False):
    out = fp8_preprocess(qweight, qzeros_or_none)
    if inplace:
        qweight.copy_(out)
        return qweight
    return out
