"""The strided-empty family's solution (strided_empty.py): storage as long as the strides
address, viewed with `as_strided`, written once for both members; a never-launched kernel
satisfies the static check.

Only the generator imports this module (strided_empty.members): the engines that judge
import every module a spec may import, and a candidate forked from one could read the text
here."""

from __future__ import annotations

from kgb.aten_families.source import solution

SOLUTION = '''\
@triton.jit
def _unused(ptr):
    # The evaluator's static check wants a Triton kernel in every solution; an
    # uninitialised tensor needs none, so this one is never launched.
    tl.store(ptr, tl.load(ptr))


def {name}({self}size, stride, *, dtype=None, layout=None, device=None, pin_memory=None):
    size, stride = list(size), list(stride)
    # elements the strides can address: the last one is at sum((size - 1) * stride)
    extent = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride, strict=True))
    storage = torch.empty(
        extent,
        dtype=dtype if dtype is not None else {dtype},
        device={device},
    )
    return storage.as_strided(size, stride)
'''

# name -> (the entry point's leading arguments, what its dtype and device default to)
DEFAULTS = {
    "empty_strided": ("", "torch.get_default_dtype()", "device"),
    "new_empty_strided": ("self, ", "self.dtype", "device if device is not None else self.device"),
}


def solution_of(name: str) -> str:
    """The member's self-contained solution.py text (less the generated header)."""
    self_, dtype, device = DEFAULTS[name]
    return solution([], SOLUTION.format(name=name, self=self_, dtype=dtype, device=device))
