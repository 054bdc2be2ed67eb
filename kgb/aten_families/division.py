"""The division family: `div` (true division and the "trunc"/"floor" rounding modes),
its in-place `div_` and `floor_divide`. They share the strided launch and one division
kernel (kernels/division.py), the input generator below and the reference pattern;
each member's own text is in division_text.py, the cases (and what their `divisor`
draws) in division_cases.py."""

from __future__ import annotations

import torch

from kgb.aten_families import division_text as text
from kgb.aten_families.layout import laid_out
from kgb.aten_families.member import Member
from kgb.aten_families.results import in_place_compare
from kgb.aten_families.source import solution
from kgb.operators import Case

# the modules whose functions the members' specs bind (they go into the specs' digests)
SPEC_HELPERS = ("layout", "results")
# Every integer operand holds plain values, which the judge may move about for a replay's
# warm-up as it moves floating ones (Spec.turned_args, kgb.evaluate.first_call)
TURNED_ARGS = ("self", "other")

VERSION = 1
# div_ alone is at 2: its bench cases divide their own output again at every call, and their
# version-1 divisors (standard normal draws; the scalar 8.0) took the values out of the
# floats' normal range within tens of calls, and the division slowed: on the H200 its
# attn-scale-bf16 read 131 us in two sweeps and 244 us in six, its div-f32 184 us or 239-246 us,
# by how many calls had come before, and 300 calls slowed div-f32 1.7x, PyTorch's and the
# solution's alike (benchmarks/inplace_drift.py; docs/gpu-results.md, session 33)
INPLACE_VERSION = 2

NO_MODE = "-"  # the plain overloads, which take no rounding_mode


def cases(name: str) -> list[Case]:
    from kgb.aten_families import division_cases  # not at the top: see its docstring

    return division_cases.CASES[name]


_SPECIAL = [0.0, 1.0, -1.0, 2.5, -2.5, float("inf"), float("-inf"), float("nan")]


def _rand(shape, dtype, gen, divisor="numerator"):
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    if not dtype.is_floating_point:
        info = torch.iinfo(dtype)
        if divisor == "numerator":
            return torch.randint(max(info.min + 1, -1000), min(info.max, 1000) + 1, shape, generator=gen).to(dtype)
        sign = torch.randint(0, 2, shape, generator=gen) * 2 - 1
        return (torch.randint(1, 20, shape, generator=gen) * sign).to(dtype)
    if divisor in ("away", "unit"):
        sign = torch.randint(0, 2, shape, generator=gen) * 2 - 1
        if divisor == "unit":
            return (torch.exp2((torch.rand(shape, generator=gen) * 2 - 1) / 64) * sign).to(dtype)
        return ((torch.rand(shape, generator=gen) * 3.75 + 0.25) * sign).to(dtype)
    return (torch.randn(shape, generator=gen) * (8 if divisor == "numerator" else 1)).to(dtype)


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype, other_dtype = getattr(torch, p["dtype"]), getattr(torch, p["other_dtype"])
    if p["divisor"] == "special":
        values = torch.tensor(_SPECIAL)
        self = values.reshape(8, 1).expand(p["shape"]).contiguous().to(dtype).to(device)
        other = values.reshape(p["other"]).to(other_dtype).to(device)
    else:
        self = laid_out(p["shape"], p["layout"], lambda shape: _rand(shape, dtype, gen), device)
        other = p["other"]
        if isinstance(other, tuple):
            divisor = p["divisor"]
            other = laid_out(other, p["other_layout"], lambda shape: _rand(shape, other_dtype, gen, divisor), device)
            if other.ndim == 0 and dtype in (torch.float16, torch.bfloat16):
                other = other.to(dtype).to(other_dtype)  # representable in the common dtype
    inputs = dict(self=self, other=other)
    if p.get("mode", NO_MODE) != NO_MODE:  # floor_divide has no rounding_mode
        inputs["rounding_mode"] = p["mode"]
    return inputs


compare = in_place_compare("div_")


def members() -> list[Member]:
    kernels = ["strided", "division"]
    div, inplace = dict(op="div", self="Tensor", ret="Tensor"), dict(op="div_", self="Tensor(a!)", ret="Tensor(a!)")
    return [
        Member(
            name="div", family="division", version=VERSION, task=text.DIV_TASK,
            signatures=text.DIV_SIGNATURES.format(**div), cases=cases("div"),
            references=text.DIV_REFERENCES.format(**div),
            solution=solution(kernels, text.DIV_HELPER + "\n\n" + text.DIV_ENTRIES.format(helper="_div", **div)),
        ),
        Member(
            name="div_", family="division", version=INPLACE_VERSION, task=text.DIV_INPLACE_TASK,
            signatures=text.DIV_SIGNATURES.format(**inplace), cases=cases("div_"),
            references=text.DIV_REFERENCES.format(**inplace),
            solution=solution(kernels, text.DIV_INPLACE_HELPER + "\n\n" + text.DIV_ENTRIES.format(helper="_div_", **inplace)),
            binds={"make_inputs": "make_inputs", "compare": "compare"},
            extra='INOUT_ARGS = ("self",)',
        ),
        Member(
            name="floor_divide", family="division", version=VERSION, task=text.FLOOR_DIVIDE_TASK,
            signatures=text.FLOOR_DIVIDE_SIGNATURES, cases=cases("floor_divide"),
            references=text.FLOOR_DIVIDE_REFERENCES,
            solution=solution(kernels, text.FLOOR_DIVIDE_ENTRIES),
        ),
    ]
