"""The scalar-read family: `item` and `_local_scalar_dense` (what `Tensor.item()` runs
underneath) are the same operation under two names; task text, inputs and comparison are
written once here, the cases once in scalar_read_cases.py, the solution once in
scalar_read_solutions.py."""

from __future__ import annotations

import torch

from kgb.aten_families.member import Member
from kgb.aten_families.source import solution
from kgb.operators import Case

VERSION = 1

# the operator's name -> how its task text introduces it
WHAT = {"item": "`Tensor.item()`", "_local_scalar_dense": "what `Tensor.item()` runs underneath"}

TASK = """\
Read the value of a one-element tensor as a Python number: `aten::{name}`
({what}).

`{name}(self)` returns the only element of `self` as a Python scalar: a
`float` for floating dtypes (float16, bfloat16, float32, float64), an `int` for integer
dtypes (int8, uint8, int16, int32, int64) and a `bool` for bool. The value is exact (the
float16/bfloat16 value itself, widened; int64 values beyond 2**53 exactly), NaN and
infinities included.

- `self` has exactly one element but any shape (0-d, (1,), (1, 1, 1)) and may be a view
  with a storage offset (e.g. `x[3]` of a vector, an element of a transposed matrix).
- The element must be moved by a Triton kernel: copy it into a small buffer, then read
  that buffer on the host (on a GPU: `copy_` it into a CPU tensor, then `.tolist()`).
  PyTorch's own scalar readers (`aten::_local_scalar_dense`, `aten::item`) may not be used.
- `self` must not be modified.
- Required: the default (only) overload.
"""

SIGNATURES = '''\
def {name}(self: torch.Tensor) -> float | int | bool:
    """aten::{name}(Tensor self) -> Scalar"""
'''

REFERENCES = '''\
def reference(self):
    return torch.ops.aten.{name}.default(self)
'''


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    if p["view"] == "offset":
        base = torch.randn(10, generator=gen) * 100
        x = base.to(dtype).to(device)[3]
    elif p["view"] == "transposed":
        base = torch.randn(5, 7, generator=gen) * 100
        x = base.to(dtype).to(device).t()[2:3, 4:5]
    else:
        if p["value"] is not None:
            x = torch.full(p["shape"], p["value"], dtype=dtype)
        elif dtype.is_floating_point:
            x = (torch.randn(p["shape"], generator=gen) * 100).to(dtype)
        else:
            x = torch.randint(-(2**40), 2**40, p["shape"], generator=gen).to(dtype)
        x = x.to(device)
    return dict(self=x)


def cases(name: str) -> list[Case]:
    # not at the top: engines import this module for its specs and must not hold the hidden cases
    from kgb.aten_families.scalar_read_cases import CASES

    return CASES  # the same for both


def compare(actual, expected, case, inputs):
    """Exact: the same Python type and the same value (NaN equals NaN). The default
    comparison would do, except that it rejects infinities (inf - inf is NaN)."""
    got, want = actual["return"], expected["return"]
    if type(got) is not type(want):
        return f"expected a Python {type(want).__name__}, got {type(got).__name__}"
    if got == want or (isinstance(want, float) and got != got and want != want):
        return None
    return f"got {got!r}, expected {want!r}"


def members() -> list[Member]:
    # not at the top: engines import this module for its specs and must not hold the solution
    from kgb.aten_families.scalar_read_solutions import SOLUTION

    return [
        Member(
            name=name, family="scalar_read", version=VERSION,
            task=TASK.format(name=name, what=what), signatures=SIGNATURES.format(name=name),
            cases=cases(name), references=REFERENCES.format(name=name),
            solution=solution([], SOLUTION.format(name=name)),
            binds={"make_inputs": "make_inputs", "compare": "compare"},
            extra='DENIED_TORCH_OPS = ("aten::_local_scalar_dense", "aten::item")',
        )
        for name, what in WHAT.items()
    ]
