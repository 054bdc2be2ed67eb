"""Scale packing for CUTLASS's W4A8 (int4 weights, fp8 activations) GEMM on Hopper:
vLLM's `cutlass_pack_scale_fp8` custom op (vLLM 0.13), a wrapper of CUTLASS's
`pack_scale_fp8` / `packed_scale_t<float_e4m3_t>`.

    cutlass_pack_scale_fp8(scales) -> Tensor

The W4A8 mainloop converts signed int4 weights to fp8 by table lookup and applies the
group scale in the same step: for each scale s it wants the eight products of s with the
negative int4 values -8 .. -1 ready in fp8 (the positive ones are derived on the fly). So
each float8_e4m3fn scale s_i (in flattened row-major order) becomes eight bytes:

    packed[8 i + j] = e4m3(float(s_i) * c_j),   c = (-8, -7, -6, -5, -4, -3, -2, -1)

where the product is computed in float32 (exactly: both factors have few significant
bits) and e4m3(.) converts to float8_e4m3fn rounding to nearest, ties to even (the byte
order is CUTLASS's: byte 0 of the 8-byte group is the -8 product, byte 7 is -s itself).

- `scales`: float8_e4m3fn, contiguous, any shape (in vLLM: the group scales, [K / group_size,
  N]). The values used here are positive and within [2^-6, 56], so every product is a
  normal e4m3 number (no overflow past 448, no subnormals). Not modified.
- Returns a new contiguous float8_e4m3fn tensor of shape [8 * scales.numel()].
The result is compared bit for bit.

Why this is in a Triton benchmark: the op is CUTLASS-specific data preparation (the byte
layout only means something to CUTLASS's W4A8 kernel), but what it computes is well
defined and elementwise, so it is stated above as that computation. A Triton solution must
do the fp8 rounding itself: Triton's CPU interpreter converts float32 to float8 by
truncation, so a `.to(tl.float8e4nv)` that is correct on the GPU is wrong there.

Speed baseline: the reference below (vllm is not importable on the GPU host).
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def cutlass_pack_scale_fp8(scales: torch.Tensor) -> torch.Tensor:
    """vllm::cutlass_pack_scale_fp8(Tensor scales) -> Tensor"""
'''

# the int4 values whose products with each scale are packed, in CUTLASS's byte order
_FACTORS = (-8.0, -7.0, -6.0, -5.0, -4.0, -3.0, -2.0, -1.0)


def _case(name, tag, shape, seed=0):
    return Case(name, tag, dict(shape=shape), seed=seed)


CASES = [
    _case("smoke-small", "smoke", (3, 40)),
    _case("smoke-1d", "smoke", (77,), seed=1),
    _case("llama3-8b-qkv-g128", "check", (32, 6144)),
    _case("llama3-8b-down-g128", "check", (112, 4096)),
    _case("llama3-70b-up-g128", "check", (64, 28672)),
    _case("odd", "check", (7, 333)),
    _case("one", "check", (1,)),
    _case("llama3-70b-down-g128", "bench", (224, 8192)),
    _case("llama3-8b-all-g128", "bench", (32, 14336 * 2)),
    _case("llama3-405b-up-g128", "bench", (128, 53248)),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    shape = case.params["shape"]
    # log-uniform over [2^-6, 56]; rounding to e4m3 stays inside (both ends are e4m3 values)
    logs = torch.rand(shape, generator=gen) * (torch.log2(torch.tensor(56.0)) + 6) - 6
    scales = torch.exp2(logs).clamp(2.0**-6, 56.0).to(torch.float8_e4m3fn)
    if scales.numel() >= 4:  # times 3, 5, 7 or 6 these fall exactly halfway between e4m3 values
        scales.view(-1)[:4] = torch.tensor([1.125, 2.5, 0.1875, 14.0]).to(torch.float8_e4m3fn)
    return dict(scales=scales.to(device))


def reference(scales):
    factors = torch.tensor(_FACTORS, dtype=torch.float32, device=scales.device)
    products = scales.reshape(-1, 1).float() * factors  # exact in float32
    return products.to(torch.float8_e4m3fn).reshape(-1)  # round to nearest, ties to even


def compare(actual, expected, case, inputs):
    got, want = actual["return"], expected["return"]
    if not isinstance(got, torch.Tensor):
        return f"expected a tensor, got {type(got).__name__}"
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"got {tuple(got.shape)} {got.dtype}, expected {tuple(want.shape)} {want.dtype}"
    bad = got.view(torch.uint8) != want.view(torch.uint8)
    if bool(bad.any()):
        i = int(bad.nonzero()[0])
        return (f"{int(bad.sum())} of {want.numel()} bytes differ; first at {i} (scale {i // 8}, factor "
                f"{_FACTORS[i % 8]:g}): got {float(got[i].float()):g}, expected {float(want[i].float()):g}")
    return None
