"""The inputs of the pointwise family's members whose operands are not a plain pair of
tensors (pointwise.py): pow (a Python number on either side), prelu (a weight per
channel) and masked_fill_ (in place: a mask and a fill value). Their cases, and what
their parameters draw, are in pointwise_special_cases.py."""

from __future__ import annotations

import torch

from kgb.aten_families.layout import laid_out
from kgb.aten_families.results import in_place_compare
from kgb.operators import Case

# what pow's `special` cases cross, as base and exponent
POW_SPECIAL = [0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, float("inf"), float("-inf"), float("nan")]


def _base(shape, dtype, kind, gen):
    if kind == "special":
        return torch.tensor(POW_SPECIAL).reshape(shape).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    if kind in ("small", "wide"):
        lim = 5 if kind == "small" else 100
        return torch.randint(-lim, lim + 1, shape, generator=gen).to(dtype)
    if kind == "any":
        return (torch.randn(shape, generator=gen) * 2).to(dtype)
    return (torch.rand(shape, generator=gen) * 2.75 + 0.25).to(dtype)


def _exponent(shape, dtype, p, gen):
    if p["base_kind"] == "special":
        return torch.tensor(POW_SPECIAL).reshape(shape).to(dtype)
    lo, hi = p["exp_range"]
    if p["exp_int"] or not dtype.is_floating_point:
        return torch.randint(lo, hi + 1, shape, generator=gen).to(dtype)
    return (torch.rand(shape, generator=gen) * (hi - lo) + lo).to(dtype)


def pow_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype, exp_dtype = getattr(torch, p["dtype"]), getattr(torch, p["exp_dtype"])
    base, exponent = p["base"], p["exponent"]
    if isinstance(base, tuple):
        base = laid_out(base, p["layout"], lambda shape: _base(shape, dtype, p["base_kind"], gen), device)
    if isinstance(exponent, tuple):
        exponent = _exponent(exponent, exp_dtype, p, gen).to(device)
    return dict(self=base, exponent=exponent)


def prelu_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype, shape = getattr(torch, p["dtype"]), p["shape"]

    def draw(shape):
        x = (torch.randn(shape, generator=gen) * 2).to(dtype)
        if case.name.startswith("nan"):
            x[torch.rand(shape, generator=gen) < 0.05] = float("nan")
        return x

    if p["layout"] == "cl":
        n, c, h, w = shape
        self = draw((n, h, w, c)).to(device).permute(0, 3, 1, 2)
    else:
        self = laid_out(shape, p["layout"], draw, device)
    channels = shape[1] if len(shape) >= 2 and p["weight"] == "channel" else 1
    weight = (torch.rand(channels, generator=gen) * 0.5).to(dtype)
    if p["weight"] == "0d":
        weight = weight.reshape(())
    return dict(self=self, weight=weight.to(device))


def _fill_rand(shape, dtype, gen):
    if dtype.is_floating_point:
        return torch.randn(shape, generator=gen).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    return torch.randint(-100, 101, shape, generator=gen).to(dtype)


def masked_fill_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    self = laid_out(p["shape"], p["layout"], lambda shape: _fill_rand(shape, dtype, gen), device)

    def draw_mask(shape):
        if p["causal"]:
            n = shape[-1]
            return torch.ones(n, n, dtype=torch.bool).triu(1).expand(shape).contiguous()
        return torch.rand(shape, generator=gen) < p["density"]

    mask = laid_out(p["mask_shape"], p["mask_layout"], draw_mask, device)
    value = p["value"]
    if p["value_dtype"] is not None:
        value = torch.tensor(value, dtype=getattr(torch, p["value_dtype"]), device=device)
    return dict(self=self, mask=mask, value=value)


masked_fill_compare = in_place_compare("masked_fill_")
