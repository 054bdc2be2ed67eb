"""The strided-empty family: `empty_strided` and `new_empty_strided`, an uninitialised
tensor of given shape and strides, over a storage the candidate sizes itself. The
members differ only in where the dtype and device default from (the default floating
dtype, or `self`); task text and comparison are written once here, their inputs each,
their cases each in strided_empty_cases.py, the solution once in
strided_empty_solutions.py."""

from __future__ import annotations

import torch

from kgb.aten_families.member import Member
from kgb.aten_families.results import tensor_form
from kgb.operators import Case

VERSION = 1
SPEC_HELPERS = ("results",)

TASK = """\
{title}: `aten::{name}` (default overload).

Returns a new tensor with shape `size` and exactly the strides `stride` (in elements),
whose values are left uninitialised: nothing needs to be computed, so this operator needs
no Triton kernel (a solution may launch none).

- `len(stride) == len(size)`; `[]`/`[]` gives a 0-d tensor; a 0 in `size` gives an empty
  tensor. Strides may leave gaps (padded rows), be 0 (broadcast dims, several indices
  share one element) or overlap; all are non-negative.
- The storage must be large enough for every element the strides address: at least
  `1 + sum((size[i] - 1) * stride[i])` elements past the result's storage offset when the
  tensor is non-empty.
{defaults}
- Checked: shape, strides, dtype, device and storage size; never the values.
- Allocate the storage yourself (for example `torch.empty` of the right length) and view
  it with `as_strided`: PyTorch's `empty_strided` and `new_empty_strided` are not allowed
  here.

Required entry point: `{name}`. Not required: `{name}.out`.
"""

DEFAULTS = {
    "empty_strided": """\
- Result dtype: `dtype` when given, else the default floating dtype (float32). `device`
  says where it lives; `layout` (strided or None) and `pin_memory` (None or False) can be
  ignored.""",
    "new_empty_strided": """\
- `self` only supplies defaults: its values are never read and it must not be modified.
  Result dtype: `dtype` when given, else `self.dtype`; device: `device` when given, else
  `self.device`. `layout` (strided or None) and `pin_memory` (None or False) can be
  ignored.""",
}

TITLES = {
    "empty_strided": "An uninitialised tensor with given strides",
    "new_empty_strided": "An uninitialised strided tensor like another",
}

SIGNATURES = '''\
def {name}({self}size: list[int], stride: list[int], *, dtype: torch.dtype | None = None, layout: torch.layout | None = None, device: torch.device | None = None, pin_memory: bool | None = None) -> torch.Tensor:
    """aten::{name}({schema_self}SymInt[] size, SymInt[] stride, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
'''

EXTRA = '''\
KERNEL_REQUIRED = False

# The op's whole job is this call: the candidate must size the storage itself.
DENIED_TORCH_OPS = ("aten::empty_strided", "aten::new_empty_strided")
'''


def empty_strided_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"]) if p["dtype"] else None
    return dict(size=list(p["size"]), stride=list(p["stride"]), dtype=dtype, device=torch.device(device))


def new_empty_strided_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    x = (torch.randn(3, 5, generator=gen) * 10).to(getattr(torch, p["self_dtype"])).to(device)
    inputs = dict(self=x, size=list(p["size"]), stride=list(p["stride"]))
    if p["dtype"]:
        inputs["dtype"] = getattr(torch, p["dtype"])
    if p["on_device"]:
        inputs["device"] = torch.device(device)
    return inputs


def compare(actual, expected, case, inputs):
    a = actual["return"]
    message = tensor_form(a, expected["return"], strides=True)
    if message:
        return message
    if a.numel():
        needed = a.storage_offset() + 1 + sum((n - 1) * s for n, s in zip(a.shape, a.stride(), strict=True))
        if a.untyped_storage().nbytes() < needed * a.itemsize:
            return f"return value: storage of {a.untyped_storage().nbytes()} bytes, needs {needed * a.itemsize}"
    return None


# name -> (the signature's self, the schema's self)
MEMBERS = {
    "empty_strided": ("", ""),
    "new_empty_strided": ("self: torch.Tensor, ", "Tensor self, "),
}


def cases(name: str) -> list[Case]:
    # not at the top: engines import this module for its specs and must not hold the hidden cases
    from kgb.aten_families.strided_empty_cases import CASES

    return CASES[name]


def members() -> list[Member]:
    from kgb.aten_families.strided_empty_solutions import solution_of

    out = []
    for name, (self_, schema_self) in MEMBERS.items():
        out.append(Member(
            name=name, family="strided_empty", version=VERSION,
            task=TASK.format(title=TITLES[name], name=name, defaults=DEFAULTS[name]),
            signatures=SIGNATURES.format(name=name, self=self_, schema_self=schema_self), cases=cases(name),
            references=f"reference = torch.ops.aten.{name}.default\n",
            solution=solution_of(name),
            binds={"make_inputs": f"{name}_inputs", "compare": "compare"}, extra=EXTRA,
        ))
    return out
