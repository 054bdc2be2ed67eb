"""The unary family: eighteen elementwise operators of one tensor (acosh, asin, cosh, erfc,
i0, log10, rsqrt, special_entr; the activations hardsigmoid, mish, silu; bitwise_not,
floor, neg, sgn, square; logit with its `eps`, polygamma with its order `n`).

They share the shape of their cases (floats, layouts, 0-d and empty tensors, integer
dtypes, benchmarks), the way inputs are drawn (a distribution named by the case, then the
layout taken as a view on the device) and, in their solutions, the flat launch of
kernels/unary.py. What differs is one table entry per member in unary_ops.py (its input
distributions and special values from unary_draws.py, its dtype rules, its elementwise
function) and its cases in unary_cases.py; the task texts are in unary_text.py.

Most members compute in float32 and give float32 for integer and bool inputs: their
solution is `_<name>(x)` (inline in the table, or a kernel file) inside the float
template of unary_solutions.py. Members with other dtype rules or extra arguments write
their own entry point in `kernels/unary_<name>.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch

from kgb.aten_families.member import Member
from kgb.aten_families.unary_ops import OPS, Unary
from kgb.aten_families.unary_text import task
from kgb.operators import Case

# Every integer operand holds plain values, which the judge may move about for a replay's
# warm-up as it moves floating ones (Spec.turned_args, kgb.evaluate.first_call)
TURNED_ARGS = ("self",)

VERSION = 1
# the table draws the inputs: the specs' digests follow it and its helpers (not layout.py)
SPEC_HELPERS = ("unary_ops", "unary_draws")

MEMBERS = {op.name: op for op in OPS}


# layout -> the shape to draw for a case of shape s, and the view of the drawn tensor that
# the case gets: its transpose, every other column, or a row expanded
LAYOUTS = {
    "contiguous": (lambda s: s, lambda x, s: x),
    "transposed": (lambda s: [*s[:-2], s[-1], s[-2]], lambda x, s: x.transpose(-2, -1)),
    "strided": (lambda s: [*s[:-1], 2 * s[-1]], lambda x, s: x[..., ::2]),
    "expanded": (lambda s: [*s[:-2], 1, s[-1]], lambda x, s: x.expand(s)),
}


def make_inputs(op: Unary, case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    shape = list(p["shape"])
    drawn_shape, view = LAYOUTS[p["layout"]]
    # draw on the CPU, move, then take the view, so that the layout survives the move
    x = op.draws[op.pick(p)](drawn_shape(shape), getattr(torch, p["dtype"]), gen).to(device)
    x = view(x, shape)
    return {arg: x if arg == "self" else p[arg] for arg in op.args}


def cases(name: str) -> list[Case]:
    # not at the top: engines import this module for its specs and must not hold the hidden cases
    from kgb.aten_families.unary_cases import CASES

    return CASES[name]


def inputs_of(name: str) -> Callable[[Case, torch.Generator, str], dict]:
    """The `make_inputs` of one member's spec."""
    return partial(make_inputs, MEMBERS[name])


def members() -> list[Member]:
    from kgb.aten_families.unary_solutions import solution_of

    return [
        Member(
            name=op.name, family="unary", version=VERSION, task=task(op.name),
            signatures=op.signature.format(name=op.name), cases=cases(op.name),
            references=op.reference.format(name=op.name), solution=solution_of(op), binds={},
            extra=f'make_inputs = unary.inputs_of("{op.name}")',
        )
        for op in OPS
    ]
