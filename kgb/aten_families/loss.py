"""The loss family: binary_cross_entropy_with_logits, huber_loss, margin_ranking_loss and
soft_margin_loss. Each computes an elementwise loss over broadcast inputs, each step
rounded to the input dtype as PyTorch does, then reduces it by `reduction` (0 none, 1 mean,
2 sum). They share the case rule (a mean or sum is a reduction over every element), the
way inputs are drawn, and the solution's launch (kernels/loss.py); each member's task
text (loss_text.py), cases (loss_cases.py), inputs and loss kernel (kernels/<name>.py)
are its own."""

from __future__ import annotations

import torch

from kgb.aten_families import loss_text as text
from kgb.aten_families.member import Member
from kgb.aten_families.source import kernel_body, solution
from kgb.aten_families.texts import member
from kgb.operators import Case

VERSION = 1
SPEC_HELPERS = ()  # its spec functions use no helper module
IMPORTS = "import math\n\nimport torch\nimport triton\nimport triton.language as tl\n"


def cases(name: str) -> list[Case]:
    # not at the top: engines import this module for its specs and must not hold the cases
    from kgb.aten_families.loss_cases import CASES

    return CASES[name]


def _draw(shape, transpose, gen, fill=torch.randn):
    """`fill(shape)` values, or with `transpose` the transpose of a tensor of the reversed
    shape (a column-major view)."""
    if transpose:
        return fill(tuple(reversed(shape)), generator=gen).t()
    return fill(tuple(shape), generator=gen)


def _signs(shape, transpose, gen):
    """A target of 1 and -1, laid out as _draw lays it out."""
    t = torch.where(_draw(shape, transpose, gen) > 0, 1.0, -1.0)
    if transpose:  # torch.where returns a contiguous tensor: keep the transposed layout
        t = t.t().contiguous().t()
    return t


def bce_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    x = _draw(p["shape"], p["transpose"], gen) * 3
    t = _draw(p["shape"], p["transpose"], gen, torch.rand)
    if p["labels"]:
        t = (t < 0.3).float()
    w = torch.rand(tuple(p["weight"]), generator=gen) + 0.5 if p["weight"] else None
    pw = torch.rand(tuple(p["pos_weight"]), generator=gen) * 3 + 0.1 if p["pos_weight"] else None

    def put(v):
        return None if v is None else v.to(dtype).to(device)

    return dict(self=put(x), target=put(t), weight=put(w), pos_weight=put(pw), reduction=p["reduction"])


def huber_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    a, b = (_draw(p[s], p["transpose"], gen).to(dtype).to(device) for s in ("s1", "s2"))
    return dict(self=a, target=b, reduction=p["reduction"], delta=p["delta"])


def margin_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    x1 = _draw(p["s1"], p["transpose"], gen)
    x2 = _draw(p["s2"], p["transpose"], gen)
    t = _signs(p["st"], p["transpose"], gen)
    return dict(input1=x1.to(dtype).to(device), input2=x2.to(dtype).to(device),
                target=t.to(dtype).to(device), margin=p["margin"], reduction=p["reduction"])


def soft_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    x = _draw(p["s1"], p["transpose"], gen) * 2
    t = _signs(p["s2"], p["transpose"], gen)
    return dict(self=x.to(dtype).to(device), target=t.to(dtype).to(device), reduction=p["reduction"])


# member -> the function its spec binds as make_inputs
INPUTS = {
    "binary_cross_entropy_with_logits": "bce_inputs",
    "huber_loss": "huber_inputs",
    "margin_ranking_loss": "margin_inputs",
    "soft_margin_loss": "soft_inputs",
}


def members() -> list[Member]:
    kernels = ["rounding", "merge", "broadcast", "loss"]
    return [member(text, name, "loss", VERSION, cases(name), solution(kernels, kernel_body(name), IMPORTS), inputs)
            for name, inputs in INPUTS.items()]
