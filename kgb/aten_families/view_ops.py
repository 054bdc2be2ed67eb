"""The view operators expand, expand_as, narrow, select, t and unsqueeze: each returns a view
of `self` (sizes, strides and a storage offset over its storage), so their solutions launch
no kernel and their specs bind one comparison (`views.compare`: the result must share
self's storage). The members differ in their task text (view_ops_text.py), their cases
and their arguments; `self` is drawn the same way for all of them (`view_self`)."""

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


def _expand_case(name, tag, shape, size, dtype="float32", layout="contiguous"):
    return Case(name, tag, dict(shape=shape, size=size, dtype=dtype, layout=layout))


EXPAND_CASES = [
    _expand_case("smoke-rows", "smoke", [1, 37], [5, 37]),
    _expand_case("smoke-new-dims-f16", "smoke", [3, 1], [2, -1, 4], "float16"),
    _expand_case("smoke-scalar-int", "smoke", [], [3, 4], "int64"),
    _expand_case("attention-mask", "check", [2, 1, 1, 77], [2, 8, 77, 77], "bool"),
    _expand_case("kv-heads-bf16", "check", [4, 8, 1, 128, 64], [4, 8, 4, 128, 64], "bfloat16"),
    _expand_case("bias-transposed", "check", [65, 1], [3, 65, 33], "float32", "transposed"),
    _expand_case("sliced-self", "check", [1, 40], [7, 40], "float16", "sliced"),
    _expand_case("same-shape", "check", [5, 6], [5, 6]),
    _expand_case("all-minus-one", "check", [5, 1, 6], [-1, -1, -1], "int32"),
    _expand_case("to-empty", "check", [1, 6], [0, 6]),
    _expand_case("empty-self", "check", [0, 1], [0, 9]),
    _expand_case("scalar-to-scalar", "check", [], []),
    _expand_case("bench-mask", "bench", [8, 1, 1, 4096], [8, 32, 4096, 4096], "bool"),
    _expand_case("bench-kv-bf16", "bench", [8, 8, 1, 2048, 128], [8, 8, 4, 2048, 128], "bfloat16"),
]


def expand_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    return dict(self=view_self(case.params, gen, device), size=list(case.params["size"]))


def _expand_as_case(name, tag, shape, other, dtype="float32", layout="contiguous", other_dtype="float32"):
    return Case(
        name,
        tag,
        dict(shape=shape, other=other, dtype=dtype, layout=layout, other_dtype=other_dtype),
    )


EXPAND_AS_CASES = [
    _expand_as_case("smoke-rows", "smoke", [1, 37], [5, 37]),
    _expand_as_case("smoke-new-dims-f16", "smoke", [3, 1], [2, 3, 4], "float16"),
    _expand_as_case("smoke-scalar-int", "smoke", [], [3, 4], "int64", other_dtype="bfloat16"),
    _expand_as_case("attention-mask", "check", [2, 1, 1, 77], [2, 8, 77, 77], "bool", other_dtype="float16"),
    _expand_as_case(
        "grad-like-bf16", "check", [1, 128, 1], [16, 128, 64], "bfloat16", other_dtype="bfloat16"
    ),
    _expand_as_case("bias-transposed", "check", [65, 1], [3, 65, 33], "float32", "transposed"),
    _expand_as_case("sliced-self", "check", [1, 40], [7, 40], "float16", "sliced"),
    _expand_as_case("same-shape", "check", [5, 6], [5, 6], "int32"),
    _expand_as_case("to-empty", "check", [1, 6], [0, 6]),
    _expand_as_case("scalar-to-scalar", "check", [], []),
    _expand_as_case("bench-mask", "bench", [8, 1, 1, 4096], [8, 32, 128, 4096], "bool"),
    _expand_as_case("bench-bf16", "bench", [1, 4096, 1], [64, 4096, 1024], "bfloat16"),
]


def expand_as_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    x = view_self(p, gen, device)
    # other only lends its shape: a broadcast tensor keeps the bench's memory small
    other = torch.randn([1] * len(p["other"]), generator=gen).to(getattr(torch, p["other_dtype"]))
    other = other.to(device).expand(p["other"])
    return dict(self=x, other=other)


# ---- narrow, select, unsqueeze: one dim sliced, taken or added -------------------------------


def _narrow_case(
    name, tag, shape, dim, start, length, dtype="float32", layout="contiguous", tensor_start=False
):
    params = dict(shape=shape, dim=dim, start=start, length=length, dtype=dtype, layout=layout)
    return Case(name, tag, params, entry="narrow_Tensor" if tensor_start else "narrow")


NARROW_CASES = [
    _narrow_case("smoke-cols", "smoke", [5, 37], 1, 3, 20),
    _narrow_case("smoke-rows-f16-neg-dim", "smoke", [9, 6], -2, 2, 4, "float16"),
    _narrow_case("smoke-tensor-start-int", "smoke", [4, 10], 1, 7, 3, "int64", tensor_start=True),
    _narrow_case("qkv-split-bf16", "check", [2, 128, 3 * 768], -1, 768, 768, "bfloat16"),
    _narrow_case("kv-cache-prefix", "check", [2, 8, 512, 64], 2, 0, 77, "float16"),
    _narrow_case("negative-start", "check", [40, 33], 0, -10, 10),
    _narrow_case("transposed", "check", [65, 33], 1, 5, 20, "float32", "transposed"),
    _narrow_case("sliced-self", "check", [12, 40], 1, 3, 10, "float16", "sliced"),
    _narrow_case("zero-length", "check", [6, 7], 1, 7, 0),
    _narrow_case("full-length", "check", [6, 7], 0, 0, 6, "int32"),
    _narrow_case("1d", "check", [1000], 0, 999, 1, "bool"),
    _narrow_case("tensor-start-negative", "check", [3, 50, 4], 1, -20, 15, "bfloat16", tensor_start=True),
    _narrow_case(
        "tensor-start-transposed",
        "check",
        [30, 20],
        0,
        4,
        9,
        "float32",
        "transposed",
        tensor_start=True,
    ),
    _narrow_case("bench-qkv", "bench", [8, 2048, 3 * 4096], 2, 4096, 4096, "bfloat16"),
    _narrow_case("bench-rows", "bench", [65536, 1024], 0, 1024, 32768, "float32", tensor_start=True),
]


def narrow_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    x = view_self(p, gen, device)
    start = torch.tensor(p["start"]).to(device) if case.entry == "narrow_Tensor" else p["start"]
    return dict(self=x, dim=p["dim"], start=start, length=p["length"])


def _select_case(name, tag, shape, dim, index, dtype="float32", layout="contiguous"):
    return Case(name, tag, dict(shape=shape, dim=dim, index=index, dtype=dtype, layout=layout))


SELECT_CASES = [
    _select_case("smoke-row", "smoke", [5, 37], 0, 3),
    _select_case("smoke-col-f16-neg", "smoke", [9, 6], -1, -2, "float16"),
    _select_case("smoke-1d-int", "smoke", [10], 0, 7, "int64"),
    _select_case("cls-token-bf16", "check", [8, 197, 768], 1, 0, "bfloat16"),
    _select_case("last-token", "check", [4, 77, 512], 1, -1, "float16"),
    _select_case("qkv-unbind", "check", [3, 2, 12, 64, 64], 0, 2),
    _select_case("transposed", "check", [65, 33], 1, 32, "float32", "transposed"),
    _select_case("sliced-self", "check", [12, 40], 0, 11, "float16", "sliced"),
    _select_case("middle-dim-int32", "check", [6, 7, 8], -2, 3, "int32"),
    _select_case("bool", "check", [33, 3], 1, 1, "bool"),
    _select_case("empty-rest", "check", [4, 0, 5], 0, 2),
    _select_case("bench-cls", "bench", [256, 577, 1024], 1, 0, "bfloat16"),
    _select_case("bench-qkv", "bench", [3, 16, 32, 1024, 128], 0, 1, "float16"),
]


def select_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    return dict(self=view_self(case.params, gen, device), dim=case.params["dim"], index=case.params["index"])


def _unsqueeze_case(name, tag, shape, dim, dtype="float32", layout="contiguous"):
    return Case(name, tag, dict(shape=shape, dim=dim, dtype=dtype, layout=layout))


UNSQUEEZE_CASES = [
    _unsqueeze_case("smoke-front", "smoke", [5, 37], 0),
    _unsqueeze_case("smoke-last-f16-transposed", "smoke", [9, 6], -1, "float16", "transposed"),
    _unsqueeze_case("smoke-scalar-int", "smoke", [], 0, "int64"),
    _unsqueeze_case("mask-heads-bf16", "check", [2, 77, 77], 1, "bfloat16"),
    _unsqueeze_case("middle-negative", "check", [4, 5, 6], -2),
    _unsqueeze_case("end", "check", [4, 5, 6], 3, "int32"),
    _unsqueeze_case("sliced", "check", [12, 40], 1, "float16", "sliced"),
    _unsqueeze_case("transposed-front", "check", [65, 33], -3, "float32", "transposed"),
    _unsqueeze_case("scalar-negative", "check", [], -1, "float32"),
    _unsqueeze_case("empty", "check", [0, 5], 1),
    _unsqueeze_case("bool", "check", [33, 3], 2, "bool"),
    _unsqueeze_case("bench-bf16", "bench", [64, 4096, 1024], 1, "bfloat16"),
    _unsqueeze_case("bench-f32", "bench", [8192, 8192], -1, "float32", "transposed"),
]


def unsqueeze_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    return dict(self=view_self(case.params, gen, device), dim=case.params["dim"])


# ---- t: a matrix transposed ----------------------------------------------------------------


def _t_case(name, tag, shape, dtype="float32", layout="contiguous"):
    return Case(name, tag, dict(shape=shape, dtype=dtype, layout=layout))


T_CASES = [
    _t_case("smoke-matrix", "smoke", [5, 37]),
    _t_case("smoke-f16-transposed", "smoke", [9, 6], "float16", "transposed"),
    _t_case("smoke-1d-int", "smoke", [10], "int64"),
    _t_case("weight-bf16", "check", [3072, 768], "bfloat16"),
    _t_case("sliced", "check", [12, 40], "float16", "sliced"),
    _t_case("row-block", "check", [64, 33], "float32", "row_block"),
    _t_case("scalar", "check", []),
    _t_case("1d-f32", "check", [4097]),
    _t_case("column", "check", [77, 1], "int32"),
    _t_case("empty", "check", [0, 5]),
    _t_case("bool", "check", [33, 3], "bool"),
    _t_case("bench-weight-bf16", "bench", [11008, 4096], "bfloat16"),
    _t_case("bench-weight-f32", "bench", [4096, 4096], "float32", "transposed"),
]


def t_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    return dict(self=view_self(case.params, gen, device))


# ---- the members --------------------------------------------------------------------------

# name -> (VERSION, cases, the spec's make_inputs)
TABLE = {
    "expand": (1, EXPAND_CASES, expand_inputs),
    "expand_as": (2, EXPAND_AS_CASES, expand_as_inputs),
    "narrow": (1, NARROW_CASES, narrow_inputs),
    "select": (1, SELECT_CASES, select_inputs),
    "t": (1, T_CASES, t_inputs),
    "unsqueeze": (1, UNSQUEEZE_CASES, unsqueeze_inputs),
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
    return TABLE[name][1]


def members() -> list[Member]:
    return [
        Member(
            name=name, family="view_ops", version=version, task=text.TASKS[name],
            signatures=text.SIGNATURES[name], cases=member_cases, references=text.REFERENCES[name],
            solution=solution(["no_launch"], SOLUTIONS[name], imports="import triton\nimport triton.language as tl\n"),
            binds={"make_inputs": make_inputs.__name__, "compare": "compare"}, extra=text.EXTRA[name],
        )
        for name, (version, member_cases, make_inputs) in TABLE.items()
    ]
