"""The view operators expand, expand_as, narrow, select, t and unsqueeze: each returns a view
of `self` (sizes, strides and a storage offset over its storage), so their solutions launch
no kernel and their specs bind one comparison (`views.compare`: the result must share
self's storage). The members differ in their task text (view_ops_text.py), their cases
(view_ops_cases.py) and their arguments; `self` is drawn the same way for all of them
(`view_self`)."""

from __future__ import annotations

import torch

from kgb.aten_families import view_ops_text as text
from kgb.aten_families import views
from kgb.aten_families.member import Member
from kgb.aten_families.source import solution
from kgb.operators import Case

# the module the members' specs take their comparison from
SPEC_HELPERS = ("views",)

compare = views.compare  # a view must share self's storage, not hold equal values


def view_self(p, gen, device):
    """`self` of `p["shape"]` and `p["dtype"]` (values randn * 10; bool where positive),
    drawn on the CPU and moved, then viewed: "contiguous", "transposed" (the last two dims),
    "sliced" (every other element of a last dim twice as long, from the second) or
    "row_block" (rows 7.. of a matrix 10 rows longer)."""
    dtype = getattr(torch, p["dtype"])
    shape = list(p["shape"])
    if p["layout"] == "transposed":
        shape[-2], shape[-1] = shape[-1], shape[-2]
    elif p["layout"] == "sliced":
        shape[-1] *= 2
    elif p["layout"] == "row_block":
        shape[0] += 10
    x = torch.randn(shape, generator=gen) * 10
    x = ((x > 0) if dtype == torch.bool else x.to(dtype)).to(device)
    if p["layout"] == "transposed":
        x = x.transpose(-2, -1)
    elif p["layout"] == "sliced":
        x = x[..., 1::2]
    elif p["layout"] == "row_block":
        x = x[7 : 7 + p["shape"][0]]
    return x


# ---- expand, expand_as: broadcast to a shape -------------------------------------------------


def expand_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    return dict(self=view_self(case.params, gen, device), size=list(case.params["size"]))


def expand_as_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    x = view_self(p, gen, device)
    # other only lends its shape: a broadcast tensor keeps the bench's memory small
    other = torch.randn([1] * len(p["other"]), generator=gen).to(getattr(torch, p["other_dtype"]))
    other = other.to(device).expand(p["other"])
    return dict(self=x, other=other)


# ---- narrow, select, unsqueeze: one dim sliced, taken or added -------------------------------


def narrow_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    x = view_self(p, gen, device)
    start = torch.tensor(p["start"]).to(device) if case.entry == "narrow_Tensor" else p["start"]
    return dict(self=x, dim=p["dim"], start=start, length=p["length"])


def select_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    return dict(self=view_self(case.params, gen, device), dim=case.params["dim"], index=case.params["index"])


def unsqueeze_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    return dict(self=view_self(case.params, gen, device), dim=case.params["dim"])


# ---- t: a matrix transposed ----------------------------------------------------------------


def t_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    return dict(self=view_self(case.params, gen, device))


# ---- the members --------------------------------------------------------------------------

# name -> (VERSION, the spec's make_inputs)
TABLE = {
    "expand": (1, expand_inputs),
    "expand_as": (2, expand_as_inputs),
    "narrow": (1, narrow_inputs),
    "select": (1, select_inputs),
    "t": (1, t_inputs),
    "unsqueeze": (1, unsqueeze_inputs),
}

# each member's entry points, after the kernel that is never launched (kernels/no_launch.py)
SOLUTIONS = {
    "expand": '''\
def expand(self, size, *, implicit=False):
    size = list(size)
    lead = len(size) - self.dim()
    if lead < 0:
        raise RuntimeError(
            f"expand: target has {len(size)} dims, fewer than the tensor's {self.dim()}"
        )
    shape, stride = [], []
    for d, target in enumerate(size):
        if d < lead:  # new leading dim: every index reads the same elements
            if target < 0:
                raise RuntimeError("expand: -1 is not allowed for a new leading dimension")
            shape.append(target)
            stride.append(0)
            continue
        n, s = self.shape[d - lead], self.stride(d - lead)
        if target == -1 or target == n:
            shape.append(n)
            stride.append(s)
        elif n == 1:
            shape.append(target)
            stride.append(0)
        else:
            raise RuntimeError(f"expand: size {n} of dim {d - lead} cannot become {target}")
    return self.as_strided(shape, stride, self.storage_offset())
''',
    "expand_as": '''\
def expand_as(self, other):
    size = list(other.shape)
    lead = len(size) - self.dim()
    if lead < 0:
        raise RuntimeError(
            f"expand_as: target has {len(size)} dims, fewer than the tensor's {self.dim()}"
        )
    # new leading dims and broadcast size-1 dims read the same elements: stride 0
    shape, stride = size[:lead], [0] * lead
    for d in range(self.dim()):
        n, s, target = self.shape[d], self.stride(d), size[lead + d]
        if target == n:
            stride.append(s)
        elif n == 1:
            stride.append(0)
        else:
            raise RuntimeError(f"expand_as: size {n} of dim {d} cannot become {target}")
        shape.append(target)
    return self.as_strided(shape, stride, self.storage_offset())
''',
    "narrow": '''\
def narrow(self, dim, start, length):
    if self.dim() == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor")
    dim = dim % self.dim()
    size = self.shape[dim]
    if start < 0:
        start += size
    if not (0 <= start <= size and 0 <= length <= size - start):
        raise IndexError(f"narrow: start {start}, length {length} out of range for size {size}")
    shape = list(self.shape)
    shape[dim] = length
    # same strides; the first element moves start steps along dim
    return self.as_strided(shape, self.stride(), self.storage_offset() + start * self.stride(dim))


def narrow_Tensor(self, dim, start, length):
    if start.dim() != 0 or start.is_floating_point():
        raise RuntimeError("narrow: start must be a 0-d integer tensor")
    return narrow(self, dim, int(start.item()), length)
''',
    "select": '''\
def select_int(self, dim, index):
    if self.dim() == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor")
    dim = dim % self.dim()
    size = self.shape[dim]
    if index < 0:
        index += size
    if not 0 <= index < size:
        raise IndexError(f"select: index {index} out of range for size {size}")
    shape = [n for d, n in enumerate(self.shape) if d != dim]
    stride = [s for d, s in enumerate(self.stride()) if d != dim]
    return self.as_strided(shape, stride, self.storage_offset() + index * self.stride(dim))
''',
    "t": '''\
def t(self):
    if self.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.dim()}D")
    # reversing the dims of a 0-d, 1-D or 2-D tensor is exactly its transpose
    shape, stride = list(self.shape)[::-1], list(self.stride())[::-1]
    return self.as_strided(shape, stride, self.storage_offset())
''',
    "unsqueeze": '''\
def unsqueeze(self, dim):
    ndim = self.dim()
    if not -ndim - 1 <= dim <= ndim:
        raise IndexError(f"unsqueeze: dim {dim} out of range for a {ndim}-D tensor")
    if dim < 0:
        dim += ndim + 1
    shape, stride = list(self.shape), list(self.stride())
    # the new dim has one index, so its stride never matters; ATen uses size * stride
    # of the dim it precedes (1 at the end), which keeps a contiguous tensor contiguous
    new_stride = shape[dim] * stride[dim] if dim < ndim else 1
    shape.insert(dim, 1)
    stride.insert(dim, new_stride)
    return self.as_strided(shape, stride, self.storage_offset())
''',
}


def cases(name: str) -> list[Case]:
    # not at the top: engines import this module for its specs and must not hold the cases
    from kgb.aten_families.view_ops_cases import CASES

    return CASES[name]


def members() -> list[Member]:
    return [
        Member(
            name=name, family="view_ops", version=version, task=text.TASKS[name],
            signatures=text.SIGNATURES[name], cases=cases(name), references=text.REFERENCES[name],
            solution=solution(["no_launch"], SOLUTIONS[name], imports="import triton\nimport triton.language as tl\n"),
            binds={"make_inputs": make_inputs.__name__, "compare": "compare"}, extra=text.EXTRA[name],
        )
        for name, (version, make_inputs) in TABLE.items()
    ]
