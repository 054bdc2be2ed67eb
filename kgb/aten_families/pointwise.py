"""The pointwise family: twelve ATen operators that compute one formula per element of their
broadcast operands. fmax, heaviside, logaddexp2, mul, pow, prelu and masked_fill_ take
two operands; log_sigmoid_backward, mish_backward, softplus_backward,
rrelu_with_noise_backward and smooth_l1_loss_backward are gradients.

The members share their solutions' launch (the strided launch of kernels/strided.py, the
launch into a new tensor of kernels/pointwise.py and one kernel form) and the way their
references call ATen. They differ in everything else, each an entry of a table:
- task text and signatures: pointwise_text.py;
- inputs: pointwise_binary.py (fmax, heaviside, logaddexp2, mul), pointwise_special.py
  (pow, prelu, masked_fill_), pointwise_backward.py (the gradients); their cases in the
  `_cases` module of each, which only cases() imports (a process that runs candidate code
  must not hold the hidden cases: kgb.operators.import_spec_libraries);
- the kernel's formula and extra arguments, and the entry points: pointwise_solutions.py,
  which only members() imports (a spec's engine must not hold the solutions' text);
- version, reference name, comparison: POINTWISE below.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from kgb.aten_families.member import Member
from kgb.aten_families.pointwise_backward import (
    log_sigmoid_backward_inputs,
    mish_backward_inputs,
    rrelu_with_noise_backward_inputs,
    smooth_l1_loss_backward_inputs,
    softplus_backward_inputs,
)
from kgb.aten_families.pointwise_binary import (
    fmax_inputs,
    heaviside_inputs,
    logaddexp2_inputs,
    mul_inputs,
)
from kgb.aten_families.pointwise_special import (
    masked_fill_compare,  # noqa: F401 - bound by name in masked_fill_'s spec
    masked_fill_inputs,
    pow_inputs,
    prelu_inputs,
)
from kgb.aten_families.pointwise_text import SIGNATURES, TASKS
from kgb.operators import Case

# the modules whose functions the members' specs bind (they go into the specs' digests)
SPEC_HELPERS = ("pointwise_binary", "pointwise_special", "pointwise_backward", "layout", "results", "comparison",
                "subtraction")


@dataclass(frozen=True)
class Pointwise:
    name: str
    inputs: Callable  # the spec's make_inputs
    version: int = 1
    named_reference: bool = False  # a single reference named after the operator, not `reference`
    compare: str | None = None  # the name, in this module, of the spec's compare
    extra: str = ""  # further assignments of the spec


POINTWISE = [
    Pointwise("fmax", fmax_inputs, named_reference=True),
    Pointwise("heaviside", heaviside_inputs, named_reference=True),
    Pointwise("logaddexp2", logaddexp2_inputs),
    Pointwise("mul", mul_inputs),
    Pointwise("pow", pow_inputs),
    Pointwise("prelu", prelu_inputs),
    Pointwise("masked_fill_", masked_fill_inputs, compare="masked_fill_compare", extra='INOUT_ARGS = ("self",)'),
    Pointwise("log_sigmoid_backward", log_sigmoid_backward_inputs),
    Pointwise("mish_backward", mish_backward_inputs),
    Pointwise("softplus_backward", softplus_backward_inputs),
    Pointwise("rrelu_with_noise_backward", rrelu_with_noise_backward_inputs),
    Pointwise("smooth_l1_loss_backward", smooth_l1_loss_backward_inputs, version=2),
]

# the hand-written specs broke a reference's call, and its dict, past this width
WIDTH = 110


def references(p: Pointwise) -> str:
    """The spec's reference functions: each entry point calls its ATen overload, as named in
    its signature's schema (`aten::mul.Tensor(...)`; no overload: `.default`)."""
    stubs = ast.parse(SIGNATURES[p.name]).body
    named = p.named_reference or len(stubs) > 1
    functions = []
    for stub in stubs:
        args = ", ".join(a.arg for a in stub.args.args)
        op, _, overload = ast.get_docstring(stub).split("(")[0].removeprefix("aten::").partition(".")
        call = f"    return torch.ops.aten.{op}.{overload or 'default'}({args})"
        if len(call) > WIDTH:
            call = f"    return torch.ops.aten.{op}.{overload or 'default'}(\n        {args})"
        functions.append(f"def {stub.name if named else 'reference'}({args}):\n{call}\n")
    if len(stubs) > 1:
        pairs = [f'"{s.name}": {s.name}' for s in stubs]
        table = f"reference = {{{', '.join(pairs)}}}"
        if len(table) > WIDTH:
            table = "reference = {\n" + "".join(f"    {pair},\n" for pair in pairs) + "}"
        functions.append(table + "\n")
    elif named:
        functions.append(f"reference = {stubs[0].name}\n")
    return "\n\n".join(functions)


def cases(name: str) -> list[Case]:
    # not at the top: see the `_cases` modules' docstrings
    from kgb.aten_families import (
        pointwise_backward_cases,
        pointwise_binary_cases,
        pointwise_special_cases,
    )

    tables = (pointwise_binary_cases, pointwise_special_cases, pointwise_backward_cases)
    return list(next(t.CASES[name] for t in tables if name in t.CASES))


def members() -> list[Member]:
    from kgb.aten_families.pointwise_solutions import solution_of

    out = []
    for p in POINTWISE:
        binds = {"make_inputs": p.inputs.__name__}
        if p.compare:
            binds["compare"] = p.compare
        out.append(Member(
            name=p.name, family="pointwise", version=p.version, task=TASKS[p.name],
            signatures=SIGNATURES[p.name], cases=cases(p.name), references=references(p),
            solution=solution_of(p.name), binds=binds, extra=p.extra,
        ))
    return out
