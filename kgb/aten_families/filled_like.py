"""The filled-like family: `ones_like` and `zeros_like`, a new tensor shaped like `self`
holding one constant. The members differ in their constant; task text, cases and inputs
are written once here, the solution once in filled_like_solutions.py."""

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

def _case(
    name, tag, shape, dtype="float32", layout="contiguous", out_dtype=None, memory_format=None
):
    params = dict(
        shape=shape, dtype=dtype, layout=layout, out_dtype=out_dtype, memory_format=memory_format
    )
    return Case(name, tag, params)


def cases(name: str) -> list[Case]:
    # zeros_like's smoke cases use integer and bool results on purpose: the self-test checks
    # that an all-zero floating answer fails, which cannot hold for zeros_like.
    if name == "ones_like":
        first = [
            _case("smoke-f32", "smoke", [5, 37]),
            _case("smoke-to-bool-transposed", "smoke", [7, 9], "float32", "transposed", out_dtype="bool"),
            _case("int64", "check", [5, 37], "int64"),
        ]
    else:
        first = [
            _case("smoke-int64", "smoke", [5, 37], "int64"),
            _case("smoke-to-bool-transposed", "smoke", [7, 9], "float32", "transposed", out_dtype="bool"),
        ]
    return first + [
        _case("f32", "check", [33, 65]),
        _case("scalar", "check", [], "float16"),
        _case("empty", "check", [0, 7], "bfloat16"),
        _case("f16-transposed", "check", [129, 1000], "float16", "transposed"),
        _case("bf16-sliced", "check", [64, 4097], "bfloat16", "sliced"),
        _case("int32", "check", [12345], "int32"),
        _case("bool", "check", [31, 3], "bool"),
        _case("f16-to-f32", "check", [4, 4099], "float16", out_dtype="float32"),
        _case(
            "contiguous-format",
            "check",
            [65, 33],
            "float32",
            "transposed",
            memory_format="contiguous_format",
        ),
        _case("channels-last", "check", [2, 3, 17, 19], "float32", "channels_last"),
        _case("bench-f32", "bench", [8192, 8192]),
        _case("bench-bf16", "bench", [32, 32, 256, 128], "bfloat16"),
    ]


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
