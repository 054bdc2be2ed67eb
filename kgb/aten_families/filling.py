"""The filling family: every element of a tensor set to one value by a Triton kernel.
fill_ and zero_ write a given tensor in place through its strides (and nothing else of
its storage); full, new_ones and zeros allocate a new contiguous tensor. The members
differ in the value (given, 0 or 1), its dtype's source and, hence, in their task text
(`filling_text`), cases (`filling_cases`) and inputs; PyTorch's own fills and copies are denied to all of
them, and the solutions (`filling_solutions`) share the scalar conversion
(`kernels/scalar_fill.py`) and the strided write (`kernels/strided_fill.py`). ones_like
and zeros_like, the same fill shaped like a tensor, are the `filled_like` family."""

from __future__ import annotations

import torch

from kgb.aten_families import filling_text as text
from kgb.aten_families.filled_like import DENIED_TORCH_OPS
from kgb.aten_families.member import Member
from kgb.aten_families.results import outside_untouched, returns_self
from kgb.aten_families.source import solution
from kgb.evaluate.correctness import compare_values
from kgb.operators import Case

VERSION = 1
SPEC_HELPERS = ("results", "views")


# ---- in place: fill_ and zero_ -------------------------------------------------------------
def _written_self(p: dict, gen: torch.Generator, device: str, shift: float) -> torch.Tensor:
    """The tensor an in-place fill writes: random old values (normal * 10 + shift) laid
    out contiguous, `transposed`, `sliced` (every other column) or as a `column_block` of
    a matrix 128 columns wider."""
    shape, layout = list(p["shape"]), p["layout"]
    if layout == "transposed":
        shape[-2], shape[-1] = shape[-1], shape[-2]
    elif layout == "sliced":
        shape[-1] *= 2
    elif layout == "column_block":
        shape[-1] += 128
    x = torch.randn(shape, generator=gen) * 10
    if shift:
        x = x + shift
    x = x.to(getattr(torch, p["dtype"])).to(device)
    if layout == "transposed":
        return x.transpose(-2, -1)
    if layout == "sliced":
        return x[..., ::2]
    if layout == "column_block":
        return x[..., 64 : 64 + p["shape"][-1]]
    return x


def fill_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    value = p["value"]
    if p["value_dtype"]:
        value = torch.tensor(value, dtype=getattr(torch, p["value_dtype"])).to(device)
    return dict(self=_written_self(p, gen, device, 0), value=value)


def zero_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    # old values shifted by 1: fewer of them are zero already
    return dict(self=_written_self(case.params, gen, device, 1))


def _in_place_compare(op: str):
    def compare(actual, expected, case, inputs):
        message = returns_self(actual["return"], inputs["self"], op)
        if message:
            return message
        message, _, _ = compare_values("argument self", actual["self"], expected["self"], case.reduction)
        return message or outside_untouched(inputs["self"], expected["self"])

    return compare


fill_compare = _in_place_compare("fill_")
zero_compare = _in_place_compare("zero_")


# ---- new tensors: full, new_ones, zeros ----------------------------------------------------
def zeros_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"]) if p["dtype"] else None
    return dict(size=list(p["size"]), dtype=dtype, device=torch.device(device))


def full_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    inputs = zeros_inputs(case, gen, device)
    return dict(size=inputs.pop("size"), fill_value=case.params["value"], **inputs)


def new_ones_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    x = (torch.randn(p["self_shape"], generator=gen) * 10).to(getattr(torch, p["dtype"])).to(device)
    inputs = dict(self=x, size=list(p["size"]))
    if p["out_dtype"]:
        inputs["dtype"] = getattr(torch, p["out_dtype"])
    return inputs


# ---- the members ----------------------------------------------------------------------------
FILL_REFERENCE = '''\
reference = {
    "fill__Scalar": torch.ops.aten.fill_.Scalar,
    "fill__Tensor": torch.ops.aten.fill_.Tensor,
}
'''

IN_PLACE = 'INOUT_ARGS = ("self",)\n\n' + DENIED_TORCH_OPS

# name -> (binds' prefix, compares, the spec's extra assignments, reference source); each
# member's cases are in filling_cases and its solution in filling_solutions, which no spec
# may import
MEMBERS = {
    "fill_": ("fill", True, IN_PLACE, FILL_REFERENCE),
    "zero_": ("zero", True, IN_PLACE, None),
    "full": ("full", False, DENIED_TORCH_OPS, None),
    "new_ones": ("new_ones", False, DENIED_TORCH_OPS, None),
    "zeros": ("zeros", False, DENIED_TORCH_OPS, None),
}


def cases(name: str) -> list[Case]:
    # not at the top: engines import this module for its specs and must not hold the hidden cases
    from kgb.aten_families.filling_cases import CASES

    return CASES[name]


def members() -> list[Member]:
    # not at the top: engines import this module for its specs and must not hold the solutions
    from kgb.aten_families.filling_solutions import IMPORTS, SOLUTIONS

    out = []
    for name, (prefix, compares, extra, reference) in MEMBERS.items():
        kernels, entries = SOLUTIONS[name]
        binds = {"make_inputs": f"{prefix}_inputs"}
        if compares:
            binds["compare"] = f"{prefix}_compare"
        out.append(Member(
            name=name, family="filling", version=VERSION, task=text.TASKS[name],
            signatures=text.SIGNATURES[name], cases=cases(name),
            references=reference or f"reference = torch.ops.aten.{name}.default\n",
            solution=solution(kernels, entries, IMPORTS),
            binds=binds, extra=extra,
        ))
    return out
