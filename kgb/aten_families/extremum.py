"""The extremum family: amin and argmax, the smallest value over some dimensions and the
index of the largest over one (or all). They share the (O, N, K) view and launch plan of
the reduction family (kernels/onk.py), the drawing of inputs (NaN, ties, integer ranges)
and the laying out of transposed inputs (from the rowwise family); each member's task
text (extremum_text.py), cases (extremum_cases.py) and kernel (kernels/<name>.py) are
its own."""

from __future__ import annotations

import torch

from kgb.aten_families import extremum_text as text
from kgb.aten_families.member import Member
from kgb.aten_families.rowwise import IMPORTS, placed, stored_shape
from kgb.aten_families.source import kernel_body, solution
from kgb.aten_families.texts import member
from kgb.operators import Case

VERSION = 1
SPEC_HELPERS = ("rowwise",)  # its make_inputs uses rowwise.placed and stored_shape


def cases(name: str) -> list[Case]:
    # not at the top: engines import this module for its specs and must not hold the cases
    from kgb.aten_families.extremum_cases import CASES

    return CASES[name]


def _values(shape, p, gen):
    dtype = getattr(torch, p["dtype"])
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen) < 0.9
    if not dtype.is_floating_point:
        info = torch.iinfo(dtype)
        return torch.randint(max(info.min, -(2**40)), min(info.max, 2**40), shape, generator=gen)
    x = torch.randn(shape, generator=gen) * 3
    if p.get("ties"):  # few distinct values, so that maxima repeat
        x = torch.round(x.clamp(-3, 3))
    if p["nans"]:
        x[torch.rand(shape, generator=gen) < p["nans"]] = float("nan")
    return x


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    x = _values(stored_shape(p), p, gen)
    return dict(self=placed(x, p, device), dim=p["dim"], keepdim=p["keepdim"])


def members() -> list[Member]:
    return [member(text, name, "extremum", VERSION, cases(name), solution(["merge", "onk"], kernel_body(name), IMPORTS))
            for name in ("amin", "argmax")]
