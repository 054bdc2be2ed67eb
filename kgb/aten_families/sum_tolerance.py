"""The comparison of outputs that are sums (the reduction and matmul families): the published
tolerance, where it fails retried with each output's atol raised to ATOL_FACTOR times the
magnitude of the terms that output adds, sqrt(sum of their squares).

The published atol, 1e-4 sqrt(K) RMS(expected), scales with the result. Over many outputs
that RMS is the terms' scale, but a single output (a sum of a whole tensor, a dot product)
that cancels makes it far smaller than what adding the terms in another order rounds off,
an order each spec leaves free. Found by a search of fresh draws (session 50): aten::sum's known-good solution failed
smoke-all-f32 (231 float32 values of magnitude 2 adding to about 0.002, its sum 4.8e-6 off
the reference's in PyTorch's order, against an allowed 3.3e-6) on 4 of the draws from seeds
0-39999 in Triton's interpreter, and aten::matmul's smoke-dot-f32 (33 products adding to
about 2e-6) on 7 (benchmarks/verdict_search.py). The floor is the published rule with the terms' scale instead of
the result's, as cuBLAS's dot products are judged (kgb.cublas_families.vector): a float32
sum in any tree order errs by a few 2**-24 of it in practice, thousands of times less,
and an answer of zero still fails unless the exact sum is within 1e-4 of its terms'
magnitude.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from kgb.evaluate.correctness import compare_values, tolerance_for
from kgb.operators import ATOL_FACTOR, Case


def compare_sums(actual: dict, expected: dict, case: Case, inputs: dict,
                 magnitude: Callable[[dict], torch.Tensor]) -> str | None:
    """The return value by the published tolerance (compare_values), or, where that fails on a
    floating result of the right form, within rtol |expected| + max(published atol,
    ATOL_FACTOR * magnitude(inputs)) elementwise (`magnitude`: float64, the result's shape)."""
    got, want = actual.get("return"), expected["return"]
    message, _, _ = compare_values("return value", got, want, case.reduction)
    comparable = (isinstance(got, torch.Tensor) and isinstance(want, torch.Tensor) and want.is_floating_point()
                  and got.shape == want.shape and got.dtype == want.dtype and got.device.type == want.device.type)
    if message is None or not comparable:
        return message
    a, e = got.detach().double(), want.detach().double()
    tol = tolerance_for(want, case.reduction)
    atol = (ATOL_FACTOR * magnitude(inputs).to(e.device).reshape(e.shape)).clamp_min(tol.atol)
    ok = torch.where(torch.isfinite(e), (a - e).abs() <= atol + tol.rtol * e.abs(), (a == e) | (a.isnan() & e.isnan()))
    if bool(ok.all()):
        return None
    where = tuple(int(i) for i in (~ok).nonzero()[0]) if e.dim() else ()
    return (f"return value: {int((~ok).sum())} of {e.numel()} elements outside tolerance (rtol {tol.rtol:g}, "
            f"atol {tol.atol:.3g}, or 1e-4 x the magnitude of the terms added, {float(atol[where]):.3g}); "
            f"first at {where}: got {a[where].item():.6g}, expected {e[where].item():.6g}")
