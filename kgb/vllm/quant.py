"""fp8 (e4m3fn) and int8 quantisation as vLLM 0.13's CUDA kernels perform it, the fused
RMS-norm + quantisation reference, and the comparison of quantised codes.

vLLM's kernels convert float32 to fp8 with the hardware's round-to-nearest-even,
saturating conversion after clamping to [-448, 448], and to int8 with `cvt.rni.sat`
(round half to even, saturate to [-128, 127]). PyTorch's `.to(torch.float8_e4m3fn)` and
`torch.round` round the same way, so the references below are exact statements of them.

Quantised outputs are compared as codes. A scale computed through a reduction (sum of
squares, max) or an approximate division may sit one float32 ulp away from the
reference's on a GPU, which moves a value lying on a rounding boundary to the adjacent
code; `compare_codes` therefore allows a small share of codes one step away and nothing
further, so wrong scales, layouts or roundings still fail on nearly every element.

Where the comparison can recompute the reference's unrounded quotients (value / scale),
it can say which codes such a scale may move: `code_band` gives, per element, the codes of
every quotient within QUOTIENT_RTOL of the reference's, and `compare_codes` measures the
distance from that band instead. Codes on exact rounding ties are common (bf16 values over
an fp8 scale: about 0.5% of them), so a scale one ulp off legitimately moves more codes
than any small share would admit.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from kgb.operators import PUBLISHED_RTOL

FP8_MAX = 448.0
# vLLM's floor for dynamic fp8 scales (min_scaling_factor<fp8>): 1 / (448 * 512)
FP8_MIN_SCALE = 1.0 / (FP8_MAX * 512.0)
INT8_MAX = 127.0
# vLLM's floor for dynamic int8 scales: float32 epsilon
INT8_MIN_SCALE = float(torch.finfo(torch.float32).eps)
# share of codes that may sit one step from the reference's (see the module docstring)
OFF_BY_ONE_SHARE = 1e-3
# ... and how many codes may, however small the output: on the H200 a correct kernel had 1
# of the 480 codes of a smoke case one step away (0.2%), on fresh inputs, while a wrong
# scale, layout or rounding moves a large part of any case's codes
OFF_BY_ONE_FLOOR = 4
# How far, relative to its size, a correct float32 kernel's quotient value / scale may sit
# from the reference's. Each float32 rounding errs by at most 2**-24 relatively, an
# approximate division (Triton's `/` on NVIDIA, div.full.f32) by at most 2 ulp <= 2**-22.
# The scale: the reference rounds once (2**-24) or, on CUDA, multiplies by a rounded
# reciprocal (2 * 2**-24); a kernel may divide approximately (2**-22). The quotient: the
# reference rounds once or multiplies by a rounded reciprocal (2 * 2**-24); a kernel may
# divide approximately (2**-22). Together at most 2 * 2**-22 + 4 * 2**-24 = 3 * 2**-22;
# 2**-20 leaves a margin (an FMA that skips a rounding only shrinks the error).
QUOTIENT_RTOL = 2.0**-20


def to_fp8(x: torch.Tensor) -> torch.Tensor:
    """float32 -> float8_e4m3fn: clamp to +-448, then round to nearest even."""
    return x.float().clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)


def to_int8(x: torch.Tensor) -> torch.Tensor:
    """float32 -> int8: round half to even, saturate to [-128, 127]."""
    return torch.round(x.float()).clamp(-128, 127).to(torch.int8)


def fp8_to_float(codes: torch.Tensor) -> torch.Tensor:
    """float8_e4m3fn values, or their bit patterns held in uint8, as float32."""
    if codes.dtype == torch.uint8:
        codes = codes.view(torch.float8_e4m3fn)
    return codes.float()


def scaled_to_fp8_bytes(x: torch.Tensor, scale: float | torch.Tensor) -> torch.Tensor:
    """vLLM's fp8 KV-cache store: float32(x) / scale, saturated to fp8, as uint8 bits."""
    return to_fp8(x.float() / scale).view(torch.uint8)


def fp8_bytes_to(codes: torch.Tensor, scale: float | torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """vLLM's fp8 KV-cache load: float32(fp8) * scale, rounded once to `dtype`."""
    return (fp8_to_float(codes) * scale).to(dtype)


def exact_div(a: torch.Tensor, b: float) -> torch.Tensor:
    """a / b rounded once, on every device: CUDA turns a division by a Python number into a
    multiplication by its float32 reciprocal, one ulp off the quotient for many a."""
    return a / torch.full_like(a, b)


def _kind_mismatch(what: str, actual: object, expected: torch.Tensor) -> str | None:
    """A message if `actual` is not a tensor of the expected shape and dtype."""
    if not isinstance(actual, torch.Tensor):
        return f"{what}: expected a tensor, got {type(actual).__name__}"
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return (f"{what}: {actual.dtype} {tuple(actual.shape)}, expected "
                f"{expected.dtype} {tuple(expected.shape)}")
    return None


def _ordered(t: torch.Tensor) -> torch.Tensor:
    """Codes as integers in value order, so that adjacent codes differ by one."""
    if t.dtype in (torch.float8_e4m3fn, torch.uint8):
        b = t.view(torch.uint8).to(torch.int16)
        mag = b & 0x7F
        return torch.where(b >= 0x80, -mag, mag)
    return t.to(torch.int32)


def code_band(
    quotients: torch.Tensor, quantise: Callable[[torch.Tensor], torch.Tensor], rtol: float = QUOTIENT_RTOL
) -> tuple[torch.Tensor, torch.Tensor]:
    """(lowest, highest) code, in value order, that `quantise` (monotonic) gives a quotient
    within `rtol` of each of `quotients`: both equal the reference's code except on a
    rounding boundary."""
    slack = quotients.abs() * rtol
    return _ordered(quantise(quotients - slack)), _ordered(quantise(quotients + slack))


def compare_codes(
    what: str, actual: object, expected: torch.Tensor, off_by_one_share: float = OFF_BY_ONE_SHARE,
    band: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> str | None:
    """Quantised outputs (fp8, fp8 bytes, int8, int32 zero points): equal, except that a
    share `off_by_one_share` of the codes, or OFF_BY_ONE_FLOOR of them, may be one step
    away (0: bit for bit). With a
    `band` (`code_band`), steps count from the band rather than from `expected`."""
    kind = _kind_mismatch(what, actual, expected)
    if kind or expected.numel() == 0:
        return kind
    got = _ordered(actual.detach())
    if band is None:
        diff = (got - _ordered(expected.detach())).abs()
    else:
        diff = (band[0] - got).clamp_min(0) + (got - band[1]).clamp_min(0)
    beyond = "" if band is None else " beyond what a float32 scale may move"
    far = diff > 1
    if far.any():
        where = tuple(int(i) for i in far.nonzero()[0])
        return (f"{what}: {int(far.sum())} of {diff.numel()} codes differ by more than one step{beyond}; "
                f"first at {where}: got {actual[where].item()}, expected {expected[where].item()}")
    near = int((diff == 1).sum())
    allowed = max(off_by_one_share * diff.numel(), OFF_BY_ONE_FLOOR) if off_by_one_share else 0
    if near > allowed:
        return (f"{what}: {near} of {diff.numel()} codes are one step away from the reference{beyond} "
                f"(at most {off_by_one_share:.1%} may be, or {OFF_BY_ONE_FLOOR})")
    return None


def compare_floats(what: str, actual: object, expected: torch.Tensor, rtol: float) -> str | None:
    """|actual - expected| <= 1e-4 * RMS(expected) + rtol * |expected|, elementwise."""
    kind = _kind_mismatch(what, actual, expected)
    if kind or expected.numel() == 0:
        return kind
    a, e = actual.detach().double(), expected.detach().double()
    allowed = 1e-4 * float(e.pow(2).mean().sqrt()) + rtol * e.abs()
    bad = ~((a - e).abs() <= allowed)
    if bad.any():
        where = tuple(int(i) for i in bad.nonzero()[0])
        return (f"{what}: {int(bad.sum())} of {e.numel()} values outside rtol {rtol:g}; first at "
                f"{where}: got {a[where].item():.6g}, expected {e[where].item():.6g}")
    return None


def compare_quantised(actual: dict, expected: dict, float_rtol: float) -> str | None:
    """Every written output: codes by `compare_codes`, floating values (scales, residuals)
    within `float_rtol`."""
    for key, exp in expected.items():
        what = "return value" if key == "return" else f"argument {key}"
        if isinstance(exp, tuple | list):
            got = actual.get(key)
            if not isinstance(got, tuple | list) or len(got) != len(exp):
                return f"{what}: expected a tuple of {len(exp)} values"
            pairs = [(f"{what}[{i}]", g, e) for i, (g, e) in enumerate(zip(got, exp, strict=True))]
        else:
            pairs = [(what, actual.get(key), exp)]
        for name, got, e in pairs:
            if e is None:
                message = None if got is None else f"{name}: expected None"
            elif e.is_floating_point() and e.dtype != torch.float8_e4m3fn:
                message = compare_floats(name, got, e, float_rtol)
            else:
                message = compare_codes(name, got, e)
            if message:
                return message
    return None


def input_rtol(dtype: torch.dtype) -> float:
    """The published rtol of an input dtype: the error one rounding of it may cause."""
    return PUBLISHED_RTOL[str(dtype).removeprefix("torch.")]


def rms_norm_quant(
    out: torch.Tensor,
    input: torch.Tensor,
    weight: torch.Tensor,
    scales: torch.Tensor,
    epsilon: float,
    scale_ub: torch.Tensor | None,
    residual: torch.Tensor | None,
    group_size: int,
) -> torch.Tensor:
    """RMS norm of (input + residual) quantised per group of `group_size` columns of a
    row (group_size = hidden: one scale per token), as vLLM's fused kernels do.

    `scales` is viewed as [tokens, hidden // group_size] (a transposed view works). Returns
    the float32 sum the norm took, [tokens, hidden]: a comparison cannot recompute it once a
    16-bit residual holds it rounded."""
    hidden = input.shape[-1]
    x = input.reshape(-1, hidden).float()
    if residual is not None:
        x = x + residual.reshape(-1, hidden).float()  # the unrounded sum feeds the norm
        residual.copy_(x.to(residual.dtype).view(residual.shape))
    quotients, s = _norm_quotients(x, input.dtype, weight, epsilon, scale_ub, group_size, out.dtype)
    q = to_int8(quotients) if out.dtype == torch.int8 else to_fp8(quotients)
    out.copy_(q.view(out.shape))
    scales.copy_(s.view(scales.shape))
    return x


# How far, relatively, a correct kernel's inv_rms may sit from the reference's: its sum of
# squares added in another order (an order whose additions nest at most 256 deep, as any tree
# or blocked reduction's do, errs by under 256 * 2**-24 = 2**-16 of the sum, inv_rms by half
# that) and an approximate rsqrt (a few ulp, 2**-22).
INV_RMS_RTOL = 2.0**-16


def rms_norm_quant_quotients(
    summed: torch.Tensor, input: torch.Tensor, weight: torch.Tensor, epsilon: float,
    scale_ub: torch.Tensor | None, group_size: int, quant: torch.dtype, scales: torch.Tensor | None = None,
) -> torch.Tensor:
    """The unrounded quotients [tokens, groups, group_size] whose codes `rms_norm_quant`
    writes, from `summed`, the float32 input (+ residual) of the norm; with `scales`
    [tokens, groups], over those scales instead of the reference's."""
    return _norm_quotients(summed, input.dtype, weight, epsilon, scale_ub, group_size, quant, scales=scales)[0]


def rms_norm_quant_scale_interval(
    summed: torch.Tensor, input: torch.Tensor, weight: torch.Tensor, epsilon: float,
    scale_ub: torch.Tensor | None, group_size: int, quant: torch.dtype,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(least, greatest) float32 scales [tokens, groups] that a kernel computes whose inv_rms
    lies within INV_RMS_RTOL of the reference's, widened by QUOTIENT_RTOL for its division:
    every rounding is monotone, so |y|, each group's absmax and its scale grow with inv_rms.
    Most groups' interval is a few float32 ulps wide; where the absmax element's product
    x * inv_rms lies that near a rounding boundary of the input dtype (a bfloat16 or float16
    midpoint), it spans the scales of both roundings, a 16-bit step apart."""
    low = _norm_quotients(summed, input.dtype, weight, epsilon, scale_ub, group_size, quant,
                          inv_factor=1 - INV_RMS_RTOL)[1]
    high = _norm_quotients(summed, input.dtype, weight, epsilon, scale_ub, group_size, quant,
                           inv_factor=1 + INV_RMS_RTOL)[1]
    return low * (1 - QUOTIENT_RTOL), high * (1 + QUOTIENT_RTOL)


def compare_rms_norm_quant(actual: dict, expected: dict, inputs: dict, group_size: int, float_rtol: float) -> str | None:
    """rms_norm_dynamic_per_token_quant and rms_norm_per_block_quant: the residual within
    `float_rtol`; each scale within `float_rtol` of the reference's or in the interval a
    correct kernel's inv_rms may give (`rms_norm_quant_scale_interval`); the codes within the
    band a correct float32 kernel may write (`code_band`) around the quotients of the
    reference's y over the candidate's own scale (brought into that interval), from the
    float32 sum the reference's norm took, which it returns (once a 16-bit residual holds
    that sum rounded, it cannot be recomputed). Found on an H200: a scale computed as
    absmax * float32(1 / 448) (how CUDA PyTorch divides by a number) moved 0.11% of the
    codes of `decode-fp8` one step, 0.5% of them lying on rounding ties; without a band,
    correct kernels failed with 0.115% (per block, a bfloat16 residual) and 0.144% (per
    token, decode-fp8) of codes one step away (session 17). Found in Triton's interpreter:
    inv_rms one float32 ulp below the reference's (its sum of squares in another order) put a
    token's absmax product x * inv_rms on a bfloat16 midpoint, which rounds to even, a step
    below the reference's; the token's scale moved 0.59%, and with it 10 of the 480 codes of
    rms_norm_dynamic_per_token_quant's smoke-bf16-fp8-residual, when the band followed the
    reference's scale (about one draw in 20,000 of that case, and of rms_norm_per_block_quant's
    smoke-bf16-fp8-residual-t)."""
    if actual.get("return") is not None:
        return f"return value: the op returns nothing, got {type(actual['return']).__name__}"
    floats = {k: v for k, v in expected.items() if k not in ("result", "return", "scale")}
    message = compare_quantised(actual, floats, float_rtol)
    if message:
        return message
    input, quant = inputs["input"], expected["result"].dtype
    summed = expected["return"].reshape(-1, input.shape[-1])
    norm = (summed, input, inputs["weight"], inputs["epsilon"], inputs["scale_ub"], group_size, quant)
    got, want = actual.get("scale"), expected["scale"]
    message = _kind_mismatch("argument scale", got, want)
    if message:
        return message
    least, greatest = rms_norm_quant_scale_interval(*norm)
    s, e = got.detach().float().reshape(least.shape), want.detach().float().reshape(least.shape)
    near = (s - e).double().abs() <= 1e-4 * float(e.double().pow(2).mean().sqrt()) + float_rtol * e.double().abs()
    bad = ~(near | ((s >= least) & (s <= greatest)))
    if bad.any():
        where = tuple(int(i) for i in bad.nonzero()[0])
        return (f"argument scale: {int(bad.sum())} of {e.numel()} scales outside rtol {float_rtol:g} and outside "
                f"what inv_rms within {INV_RMS_RTOL:g} of the reference's gives; first at (token, group) {where}: "
                f"got {s[where].item():.6g}, expected {e[where].item():.6g}")
    quotients = rms_norm_quant_quotients(*norm, scales=torch.minimum(torch.maximum(s, least), greatest))
    low, high = code_band(quotients, to_int8 if quant == torch.int8 else to_fp8)
    shape = expected["result"].shape
    return compare_codes("argument result", actual.get("result"), expected["result"],
                         band=(low.view(shape), high.view(shape)))


def _norm_quotients(
    x: torch.Tensor, dtype: torch.dtype, weight: torch.Tensor, epsilon: float,
    scale_ub: torch.Tensor | None, group_size: int, quant: torch.dtype,
    inv_factor: float = 1.0, scales: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(value / scale per group [tokens, groups, group_size], scales [tokens, groups]):
    inv_rms multiplied by `inv_factor`, the scales `scales` where given."""
    inv_rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + epsilon)
    if inv_factor != 1.0:
        inv_rms = inv_rms * inv_factor
    # rounded to the input dtype after the normalisation and again after the weight
    y = ((x * inv_rms).to(dtype) * weight).float()
    groups = y.view(y.shape[0], -1, group_size)
    if scales is None:
        absmax = groups.abs().amax(dim=-1)
        if scale_ub is not None:
            absmax = torch.minimum(absmax, scale_ub.float().reshape(()))
    if quant == torch.int8:
        s = torch.clamp_min(absmax / INT8_MAX, INT8_MIN_SCALE) if scales is None else scales
        return groups * (1.0 / s)[..., None], s  # int8 multiplies by the reciprocal
    s = torch.clamp_min(absmax / FP8_MAX, FP8_MIN_SCALE) if scales is None else scales
    return groups / s[..., None], s  # fp8 divides


def make_rms_norm_quant_inputs(params: dict, groups: int, gen: torch.Generator, device: str) -> dict:
    """The arguments of rms_norm_dynamic_per_token_quant and rms_norm_per_block_quant from
    a case's params (tokens, hidden, dtype, quant, residual, ub, eps, and transposed for a
    [groups, tokens] scale): activations with a few outlier channels (as real hidden
    states have), a weight near 1, an optional residual and an optional scale upper bound."""
    tokens, hidden, dtype = params["tokens"], params["hidden"], getattr(torch, params["dtype"])
    x = torch.randn(tokens, hidden, generator=gen)
    outliers = torch.randint(0, hidden, (max(1, hidden // 256),), generator=gen)
    x[:, outliers] *= 8.0
    if params.get("transposed"):
        scale = torch.empty(groups, tokens, dtype=torch.float32, device=device).t()
    else:
        scale = torch.empty(tokens, groups, dtype=torch.float32, device=device)
    return dict(
        result=torch.empty(tokens, hidden, dtype=getattr(torch, params["quant"]), device=device),
        input=x.to(dtype).to(device),
        weight=(1.0 + 0.2 * torch.randn(hidden, generator=gen)).to(dtype).to(device),
        scale=scale,
        epsilon=params["eps"],
        # an upper bound below the largest normalised values, so that it clips some rows
        scale_ub=torch.tensor([4.0], dtype=torch.float32, device=device) if params["ub"] else None,
        residual=(torch.randn(tokens, hidden, generator=gen).to(dtype).to(device)
                  if params["residual"] else None),
    )
