"""The filled-like family: `ones_like` and `zeros_like`, a new tensor shaped like `self`
holding one constant. The members differ in their constant; task text and inputs are
written once here, the cases once in filled_like_cases.py, the solution once in
filled_like_solutions.py."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from kgb.aten_families.member import Member
from kgb.aten_families.source import solution
from kgb.operators import Case

VERSION = 1


@dataclass(frozen=True)
class Filled:
    name: str
    title: str  # Ones, Zeros
    element: str  # the task's words for the constant
    note: str  # what the task adds after the rule on PyTorch's fills


FILLS = [
    Filled("ones_like", "Ones", "one (True for bool)", ""),
    Filled("zeros_like", "Zeros", "zero (False for bool)", " Freshly allocated memory is not zero on a GPU."),
]

TASK = """\
{title} shaped like a tensor: `aten::{name}` (default overload).

Returns a new tensor with the shape of `self` and every element {element}.
Only the shape (and, by default, dtype and device) of `self` matter; its values are never
read and `self` must not be modified.

- Result dtype: `dtype` when given, else `self.dtype`. Any dtype may occur (float16,
  bfloat16, float32, int32, int64, bool...).
- Result device: `device` when given, else `self.device`.
- `memory_format` (None means torch.preserve_format) chooses the result's strides as in
  `torch.empty_like`; only shape, dtype, device and values are checked, not strides.
- `self` may be non-contiguous (transposed, sliced), 0-d or empty.
- `layout` (strided or None) and `pin_memory` (None or False) can be ignored.
- The {what} must be written by a Triton kernel: PyTorch may allocate the result
  (`torch.empty_like`, `torch.empty`) but its fill, zero, copy and clone ops are not
  allowed here.{note}

Required entry point: `{name}`. Not required: `{name}.out`.
"""

SIGNATURES = '''\
def {name}(self: torch.Tensor, *, dtype: torch.dtype | None = None, layout: torch.layout | None = None, device: torch.device | None = None, pin_memory: bool | None = None, memory_format: torch.memory_format | None = None) -> torch.Tensor:
    """aten::{name}(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor"""
'''

DENIED_TORCH_OPS = '''\
# Its whole job is a fill: PyTorch's own fills and copies would do it without Triton.
DENIED_TORCH_OPS = (
    "aten::fill_",
    "aten::zero_",
    "aten::zeros",
    "aten::zeros_like",
    "aten::new_zeros",
    "aten::copy_",
    "aten::clone",
    "aten::contiguous",
)
'''


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    shape = list(p["shape"])
    if p["layout"] == "transposed":
        shape[-2], shape[-1] = shape[-1], shape[-2]
    elif p["layout"] == "sliced":
        shape[-1] *= 2
    x = (torch.randn(shape, generator=gen) * 10).to(dtype).to(device)
    if p["layout"] == "transposed":
        x = x.transpose(-2, -1)
    elif p["layout"] == "sliced":
        x = x[..., ::2]
    elif p["layout"] == "channels_last":
        x = x.to(memory_format=torch.channels_last)
    inputs = dict(self=x)
    if p["out_dtype"]:
        inputs["dtype"] = getattr(torch, p["out_dtype"])
    if p["memory_format"]:
        inputs["memory_format"] = getattr(torch, p["memory_format"])
    return inputs


def cases(name: str) -> list[Case]:
    # not at the top: engines import this module for its specs and must not hold the hidden cases
    from kgb.aten_families import filled_like_cases

    return filled_like_cases.cases(name)


def members() -> list[Member]:
    # not at the top: engines import this module for its specs and must not hold the solution
    from kgb.aten_families.filled_like_solutions import KERNELS, SOLUTION

    return [
        Member(
            name=f.name, family="filled_like", version=VERSION,
            task=TASK.format(name=f.name, title=f.title, element=f.element, what=f.title.lower(),
                             note=f.note),
            signatures=SIGNATURES.format(name=f.name), cases=cases(f.name),
            references=f"reference = torch.ops.aten.{f.name}.default\n",
            solution=solution([], SOLUTION.format(name=f.name, **KERNELS[f.name])),
            extra=DENIED_TORCH_OPS,
        )
        for f in FILLS
    ]
