"""The rowwise family: operators that work along one dimension of a strided tensor, or along
the last dimension of broadcast operands: _softmax, cumsum, diff, pairwise_distance and
renorm. They share the (O, N, K) view around a dimension (kernels/along.py) or the
broadcast view (kernels/broadcast.py), the rounding of half-precision steps, the case rule
(an output depends on a row: reduction = its length, capped) and the laying out of
transposed inputs; each member's task text (rowwise_text.py), cases (rowwise_cases.py),
inputs and kernel (kernels/<name>.py) are its own."""

from __future__ import annotations

import torch

from kgb.aten_families import rowwise_text as text
from kgb.aten_families.member import Member
from kgb.aten_families.source import kernel_body, solution
from kgb.aten_families.texts import member
from kgb.operators import Case

SPEC_HELPERS = ()  # its spec functions use no helper module
# Every integer operand holds plain values, which the judge may move about for a replay's
# warm-up as it moves floating ones (Spec.turned_args, kgb.evaluate.first_call)
TURNED_ARGS = ("self", "prepend", "append")
IMPORTS = "import math\n\nimport torch\nimport triton\nimport triton.language as tl\n"


def cases(name: str) -> list[Case]:
    # not at the top: engines import this module for its specs and must not hold the cases
    from kgb.aten_families.rowwise_cases import CASES

    return CASES[name]


def stored_shape(p):
    """The shape to draw: reversed when the input is to be a transposed view."""
    return tuple(reversed(p["shape"])) if p["transpose"] else tuple(p["shape"])


def placed(x, p, device):
    """x (drawn in stored_shape) in the case's dtype on device; transposed after the move,
    which would make it contiguous."""
    x = x.to(getattr(torch, p["dtype"])).to(device)
    return x.t() if p["transpose"] else x


def softmax_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    shape = stored_shape(p)
    x = torch.randn(shape, generator=gen) * 3
    if p.get("neg_inf"):  # a parameter, not the case's name, which a judge alone may hold
        # scattered -inf plus one row that is entirely -inf (its softmax is NaN)
        x[torch.rand(shape, generator=gen) < 0.2] = float("-inf")
        x[7] = float("-inf")
    return dict(self=placed(x, p, device), dim=p["dim"], half_to_float=p["half_to_float"])


def cumsum_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    shape = stored_shape(p)
    if dtype == torch.bool:
        x = torch.rand(shape, generator=gen) < 0.5
    elif dtype.is_floating_point:
        # an offset makes the sums drift, like cumulative probabilities or lengths
        x = torch.randn(shape, generator=gen) * 2 + 0.3
    else:
        lo, hi = (0, 256) if dtype == torch.uint8 else (-1000, 1000)
        x = torch.randint(lo, hi, shape, generator=gen)
    out_dtype = getattr(torch, p["out_dtype"]) if p["out_dtype"] else None
    return dict(self=placed(x, p, device), dim=p["dim"], dtype=out_dtype)


def _diff_draw(shape, dtype, gen):
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen) < 0.5
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=gen) * 3).to(dtype)
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max, shape, generator=gen, dtype=torch.int64).to(dtype)


def diff_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    x = placed(_diff_draw(stored_shape(p), dtype, gen), p, device)
    extra = {}
    for key in ("prepend", "append"):
        if p[key]:
            s = list(x.shape)
            s[p["dim"]] = p[key]
            extra[key] = _diff_draw(tuple(s), dtype, gen).to(device)
        else:
            extra[key] = None
    return dict(self=x, n=p["n"], dim=p["dim"], **extra)


def pdist_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    out = []
    for shape in (p["s1"], p["s2"]):
        x = torch.randn(tuple(reversed(shape)) if p["transpose"] else tuple(shape), generator=gen)
        if p["p"] == 0.0:  # many exact zeros in x1 - x2 + eps: integers and -eps
            x = torch.round(x.to(getattr(torch, p["dtype"])))
        out.append(placed(x, p, device))
    return dict(x1=out[0], x2=out[1], p=p["p"], eps=1e-6, keepdim=p["keepdim"])


def renorm_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    x = torch.randn(stored_shape(p), generator=gen)
    view = x.t() if p["transpose"] else x
    # slices of unequal scale (0.3 to 1.7), so that some norms exceed maxnorm and some not
    dim = p["dim"] % view.ndim
    scale_shape = [n if d == dim else 1 for d, n in enumerate(view.shape)]
    view.mul_(0.3 + 1.4 * torch.rand(scale_shape, generator=gen))
    return dict(self=placed(x, p, device), p=p["p"], dim=p["dim"], maxnorm=p["maxnorm"])


# member -> (its VERSION, which each member kept from its hand-written days, the function
# its spec binds as make_inputs, the kernel files its solution pastes before its own)
MEMBERS = {
    "_softmax": (3, "softmax_inputs", ["merge", "along"]),
    "cumsum": (2, "cumsum_inputs", ["merge", "along", "tl_types"]),
    "diff": (1, "diff_inputs", ["merge", "along", "rounding"]),
    "pairwise_distance": (1, "pdist_inputs", ["merge", "broadcast", "rounding", "pnorm"]),
    "renorm": (1, "renorm_inputs", ["merge", "along", "rounding", "pnorm"]),
}


def members() -> list[Member]:
    return [member(text, name, "rowwise", version, cases(name), solution(kernels, kernel_body(name), IMPORTS), inputs)
            for name, (version, inputs, kernels) in MEMBERS.items()]
