"""The strided-empty family: `empty_strided` and `new_empty_strided`, an uninitialised
tensor of given shape and strides, over a storage the candidate sizes itself. The
members differ only in where the dtype and device default from (the default floating
dtype, or `self`); task text and comparison are written once here, their cases and
inputs each, the solution once in strided_empty_solutions.py."""

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

def _empty_strided_cases() -> list[Case]:
    def c(name, tag, size, stride, dtype=None):
        return Case(name, tag, dict(size=size, stride=stride, dtype=dtype))

    # Floating smoke cases have gaps in their strides: the self-test's all-zero stand-in is
    # then contiguous, and fails on strides as it should.
    return [
        c("smoke-padded-rows", "smoke", [4, 5], [8, 1]),
        c("smoke-column-major-int", "smoke", [3, 4, 5], [1, 3, 12], "int64"),
        c("smoke-f16-gaps", "smoke", [2, 3, 4], [40, 12, 2], "float16"),
        c("scalar", "check", [], []),
        c("empty", "check", [0, 5], [5, 1]),
        c("empty-odd-strides", "check", [3, 0, 2], [100, 7, 1], "bfloat16"),
        c("contiguous", "check", [7, 129], [129, 1], "float16"),
        c("broadcast-zero-stride", "check", [4, 5, 6], [0, 6, 1]),
        c("overlapping", "check", [10, 4], [2, 1], "int32"),
        c("channels-last", "check", [2, 3, 17, 19], [969, 1, 57, 3], "bfloat16"),
        c("transposed", "check", [1024, 4096], [1, 1024], "float32"),
        c("bool", "check", [5, 7], [16, 2], "bool"),
        c("size-one-dims", "check", [1, 8, 1], [123, 1, 456], "float32"),
        c("bench-f32", "bench", [8192, 8192], [8192, 1]),
        c("bench-bf16-padded", "bench", [4096, 11008], [11072, 1], "bfloat16"),
    ]


def _new_empty_strided_cases() -> list[Case]:
    def c(name, tag, size, stride, self_dtype="float32", dtype=None, on_device=False):
        params = dict(size=size, stride=stride, self_dtype=self_dtype, dtype=dtype, on_device=on_device)
        return Case(name, tag, params)

    # As for empty_strided, floating smoke cases have gaps in their strides.
    return [
        c("smoke-padded-rows", "smoke", [4, 5], [8, 1]),
        c("smoke-column-major-int", "smoke", [3, 4, 5], [1, 3, 12], "int64"),
        c("smoke-f16-gaps-to-f32", "smoke", [2, 3, 4], [40, 12, 2], "float16", "float32"),
        c("scalar", "check", [], [], "bfloat16"),
        c("empty", "check", [0, 5], [5, 1]),
        c("empty-odd-strides", "check", [3, 0, 2], [100, 7, 1], "bfloat16"),
        c("contiguous-f16", "check", [7, 129], [129, 1], "float16"),
        c("broadcast-zero-stride", "check", [4, 5, 6], [0, 6, 1]),
        c("overlapping-int32", "check", [10, 4], [2, 1], "int32"),
        c("channels-last", "check", [2, 3, 17, 19], [969, 1, 57, 3], "bfloat16"),
        c("transposed", "check", [1024, 4096], [1, 1024]),
        c("bool", "check", [5, 7], [16, 2], "bool"),
        c("f32-to-int64", "check", [6, 6], [1, 6], "float32", "int64"),
        c("explicit-device", "check", [1, 8, 1], [123, 1, 456], "float16", on_device=True),
        c("bench-f32", "bench", [8192, 8192], [8192, 1]),
        c("bench-bf16-padded", "bench", [4096, 11008], [11072, 1], "bfloat16"),
    ]


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


# name -> (cases, the signature's self, the schema's self)
MEMBERS = {
    "empty_strided": (_empty_strided_cases, "", ""),
    "new_empty_strided": (_new_empty_strided_cases, "self: torch.Tensor, ", "Tensor self, "),
}


def cases(name: str) -> list[Case]:
    return MEMBERS[name][0]()


def members() -> list[Member]:
    from kgb.aten_families.strided_empty_solutions import solution_of

    out = []
    for name, (_, self_, schema_self) in MEMBERS.items():
        out.append(Member(
            name=name, family="strided_empty", version=VERSION,
            task=TASK.format(title=TITLES[name], name=name, defaults=DEFAULTS[name]),
            signatures=SIGNATURES.format(name=name, self=self_, schema_self=schema_self), cases=cases(name),
            references=f"reference = torch.ops.aten.{name}.default\n",
            solution=solution_of(name),
            binds={"make_inputs": f"{name}_inputs", "compare": "compare"}, extra=EXTRA,
        ))
    return out
