"""The indexing family: `index` (gather, `self[i0, i1, ...]`), `index_put_` and its
implementation `_index_put_impl_` (scatter, `self[i0, i1, ...] = values`). Their solutions
share the advanced-indexing plan (kernels/indexing.py); the two scatters share their task
text, cases, inputs, reference pattern and write kernel (kernels/index_put.py). The cases
are in indexing_cases.py."""

from __future__ import annotations

import torch

from kgb.aten_families.member import Member
from kgb.aten_families.source import solution
from kgb.evaluate.correctness import compare_values
from kgb.operators import Case

VERSION = 1


def _tensor(shape, dtype, gen, coarse=False):
    if coarse:  # multiples of 1/4 in [-2, 2): sums of a few stay exact in float16/bfloat16
        return (torch.randint(-8, 8, shape, generator=gen) / 4).to(getattr(torch, dtype))
    if dtype == "bool":
        return torch.rand(shape, generator=gen) < 0.5
    if dtype in ("int64", "int32"):
        return torch.randint(-1000, 1000, shape, generator=gen, dtype=getattr(torch, dtype))
    return torch.randn(shape, generator=gen).to(getattr(torch, dtype))


# ---------------------------------------------------------------- index

INDEX_TASK = """\
Advanced indexing: `aten::index.Tensor`, what `self[i0, i1, ...]` does with tensor indices.

`indices` is a list with at most `self.ndim` entries (missing trailing entries mean None).
Entry k is either None (keep that dimension whole, like `:`) or a tensor:
- an integer tensor (int64 or int32) of any shape, holding positions along its dimension of
  `self`; negative values count from the end (-1 is the last). Values are always in range
  [-size, size); behaviour for other values is not tested.
- a bool mask: a mask of m dimensions covers the next m dimensions of `self` (its shape
  must equal theirs) and is equivalent to the m integer tensors of its nonzero coordinates,
  listed in row-major order (so the result's size there depends on the number of True
  values). uint8 masks are deprecated and not tested.
All integer tensors (after masks are expanded) broadcast together to one shape B; every
position of B picks one element along each indexed dimension. The result's shape is:
- if the indexed dimensions are adjacent: self.shape before them, then B, then
  self.shape after them (x[:, idx] with idx of shape (2, 3) on a (4, 5, 6) tensor gives
  (4, 2, 3, 6));
- otherwise: B first, then the non-indexed dimensions of self in order.
The result is a new tensor with the dtype of `self` (any dtype: floating, integer, bool),
which may be non-contiguous (transposed views) and has at least one dimension. Index
tensors may be broadcast views (stride 0). Empty results (an empty index tensor, a mask
with no True value) are valid. `self` and the indices must not be modified.

Required overload: `index.Tensor`. Left out: `index.Tensor_hacked_twin` (the same without
None entries), `index.Tensor_out`, and the TorchScript list/str overloads.
"""

INDEX_SIGNATURES = '''\
def index_Tensor(self: torch.Tensor, indices: list[torch.Tensor | None]) -> torch.Tensor:
    """aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor"""
'''

INDEX_REFERENCES = '''\
def reference(self, indices):
    return torch.ops.aten.index.Tensor(self, indices)
'''

INDEX_ENTRY = '''\
def index_Tensor(self: torch.Tensor, indices: list) -> torch.Tensor:
    dims, idx, bshape, rest, out_shape, perm = _plan(self, indices)
    out = torch.empty(out_shape, dtype=self.dtype, device=self.device)
    n = out.numel()
    if n == 0:
        return out
    base, p = _base_offsets(self, dims, idx, bshape)
    canon = out.permute(perm)
    shape = list(canon.shape)
    src_strides = [0] * len(bshape) + [self.stride(k) for k in rest]
    _launch_nd(_gather_kernel, (self, out, base), n, shape, src_strides, canon.stride(), n // p)
    return out
'''

# An index entry: None, ("i64" | "i32", shape, dim, negative_allowed) or ("bool", shape).


def _index(entry, shape, gen, device):
    if entry is None:
        return None
    if entry[0] == "bool":
        p = entry[2] if len(entry) > 2 else 0.5
        return (torch.rand(entry[1], generator=gen) < p).to(device)
    kind, ishape, dim, neg = entry
    size = shape[dim]
    t = torch.randint(-size if neg else 0, size, ishape, generator=gen)
    return t.to(torch.int32 if kind == "i32" else torch.int64).to(device)


def make_index_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    shape = tuple(p["shape"])
    if p["transpose"]:
        x = _tensor(shape[::-1], p["dtype"], gen).to(device).t()
    else:
        x = _tensor(shape, p["dtype"], gen).to(device)
    return dict(self=x, indices=[_index(e, shape, gen, device) for e in p["indices"]])


# ---------------------------------------------------------------- index_put_, _index_put_impl_

PUT_TASK = """\
{head}`indices` has the same meaning as in `aten::index.Tensor`: at most `self.ndim` entries,
each None (the whole dimension) or a tensor: int64/int32 positions (negative values count
from the end; always in range) or a bool mask covering as many dimensions of `self` as it
has (equivalent to its nonzero coordinates in row-major order). The index tensors broadcast
to one shape B, and the indexed shape is B in place of the indexed dimensions when these
are adjacent, else B followed by the other dimensions of `self`.

`values` has the dtype of `self` and broadcasts to the indexed shape (a 0-d tensor fills
every indexed element). Each indexed element of `self` is then
- accumulate=False: overwritten with its value. When several positions name the same
  element, which one wins is unspecified (the cases never repeat an element);
- accumulate=True: increased by the sum of all values aimed at it (repeats are the point:
  this is how embedding gradients are summed). Accumulate float16/bfloat16 in float32 and
  round once; the tolerance allows for a different summation order. Accumulate is tested
  on float16, bfloat16, float32, int32 and int64 (half-precision accumulate cases use
  values on a coarse grid, so that every summation order gives the same exact result).

`self` is modified in place (it may be non-contiguous, e.g. a transposed view) and is
returned: the return value must be `self` itself. Elements not indexed keep their values.
`values` and the indices must not be modified. Empty index tensors and masks without a
True value are valid and change nothing. Any dtype for `self` (floating, integer, bool).

{tail}"""

INDEX_PUT_HEAD = "In-place indexed assignment: `aten::index_put_`, what `self[i0, i1, ...] = values` does.\n\n"
INDEX_PUT_TAIL = """\
Required overload: `index_put_` (default). Left out: `index_put_.hacked_twin` (the same
without None entries).
"""
IMPL_HEAD = """\
In-place indexed assignment, the implementation behind `index_put_`:
`aten::_index_put_impl_`, what `self[i0, i1, ...] = values` does.

"""
IMPL_TAIL = """\
`unsafe=True` only allows ATen to skip its bounds checks; the indices are always in range,
so it changes nothing here (both values are tested).

Required overload: `_index_put_impl_` (default). Left out: `_index_put_impl_.hacked_twin`
(the same without None entries).
"""

INDEX_PUT_SIGNATURES = '''\
def index_put_(self: torch.Tensor, indices: list[torch.Tensor | None], values: torch.Tensor, accumulate: bool = False) -> torch.Tensor:
    """aten::index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)"""
'''

IMPL_SIGNATURES = '''\
def _index_put_impl_(self: torch.Tensor, indices: list[torch.Tensor | None], values: torch.Tensor, accumulate: bool = False, unsafe: bool = False) -> torch.Tensor:
    """aten::_index_put_impl_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False, bool unsafe=False) -> Tensor(a!)"""
'''

INDEX_PUT_REFERENCES = '''\
def reference(self, indices, values, accumulate=False):
    return torch.ops.aten.index_put_(self, indices, values, accumulate)
'''

IMPL_REFERENCES = '''\
def reference(self, indices, values, accumulate=False, unsafe=False):
    return torch.ops.aten._index_put_impl_(self, indices, values, accumulate, unsafe)
'''

INDEX_PUT_ENTRY = '''\
def index_put_(self: torch.Tensor, indices: list, values: torch.Tensor, accumulate: bool = False) -> torch.Tensor:
    return _index_put(self, indices, values, accumulate)
'''

IMPL_ENTRY = '''\
def _index_put_impl_(self: torch.Tensor, indices: list, values: torch.Tensor, accumulate: bool = False,
                     unsafe: bool = False) -> torch.Tensor:
    # `unsafe` only lets ATen skip its bounds checks; indices are in range here.
    return _index_put(self, indices, values, accumulate)
'''

# An index entry: None; ("u", shape, dim) positions unique jointly with the other "u"
# entries (no element repeats); ("r", shape, dim, negative_ok) random positions (repeats);
# ("i32u", shape, dim) unique int32 positions; ("bool", shape, p_true).


def _indices(entries, shape, gen):
    out = [None] * len(entries)
    joint = [k for k, e in enumerate(entries) if e is not None and e[0] == "u"]
    if joint:  # unique tuples: distinct flat positions of the jointly indexed sub-space
        sizes = [shape[entries[k][2]] for k in joint]
        count = 1
        for s in entries[joint[0]][1]:
            count *= s
        total = 1
        for s in sizes:
            total *= s
        flat = torch.randperm(total, generator=gen)[:count]
        for k, size in reversed(list(zip(joint, sizes, strict=True))):
            out[k] = (flat % size).reshape(entries[k][1])
            flat = flat // size
    for k, e in enumerate(entries):
        if e is None or e[0] == "u":
            continue
        if e[0] in ("u2", "i32u"):  # unique values along one dim (outer products stay unique)
            n = 1
            for s in e[1]:
                n *= s
            t = torch.randperm(shape[e[2]], generator=gen)[:n].reshape(e[1])
            out[k] = t.to(torch.int32) if e[0] == "i32u" else t
        elif e[0] == "r":
            size = shape[e[2]]
            out[k] = torch.randint(-size if e[3] else 0, size, e[1], generator=gen)
        else:
            out[k] = torch.rand(e[1], generator=gen) < e[2]
    return out


def make_put_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    shape = tuple(p["shape"])
    # ATen's CPU kernel rounds after every add, its CUDA kernel once: keep both exact
    coarse = p["accumulate"] and p["dtype"] in ("float16", "bfloat16")
    if p["transpose"]:
        x = _tensor(shape[::-1], p["dtype"], gen, coarse).t()
    else:
        x = _tensor(shape, p["dtype"], gen, coarse)
    indices = _indices(p["indices"], shape, gen)
    values = _tensor(tuple(p["values"]), p["dtype"], gen, coarse)
    return dict(
        self=x.to(device),
        indices=[None if t is None else t.to(device) for t in indices],
        values=values.to(device),
        accumulate=p["accumulate"],
    )


def make_impl_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    return dict(make_put_inputs(case, gen, device), unsafe=case.seed % 2 == 1)


def compare(actual, expected, case, inputs):
    ret = actual["return"]
    if not (isinstance(ret, torch.Tensor) and ret.data_ptr() == inputs["self"].data_ptr()
            and ret.shape == inputs["self"].shape and ret.stride() == inputs["self"].stride()):
        return "the return value must be self, updated in place"
    for key in ("self", "return"):
        message, _, _ = compare_values(key, actual[key], expected[key], case.reduction)
        if message:
            return message
    return None


# ---------------------------------------------------------------- the family


def cases(name: str) -> list[Case]:
    # not at the top: engines import this module for its specs and must not hold the cases
    from kgb.aten_families.indexing_cases import CASES

    return CASES[name]


def members() -> list[Member]:
    put = dict(binds={"make_inputs": "make_put_inputs", "compare": "compare"}, extra='INOUT_ARGS = ("self",)')
    impl = dict(put, binds={"make_inputs": "make_impl_inputs", "compare": "compare"})
    return [
        Member(
            name="index", family="indexing", version=VERSION, task=INDEX_TASK,
            signatures=INDEX_SIGNATURES, cases=cases("index"), references=INDEX_REFERENCES,
            solution=solution(["nd_walk", "indexing", "index_gather"], INDEX_ENTRY),
            binds={"make_inputs": "make_index_inputs"},
        ),
        Member(
            name="index_put_", family="indexing", version=VERSION,
            task=PUT_TASK.format(head=INDEX_PUT_HEAD, tail=INDEX_PUT_TAIL),
            signatures=INDEX_PUT_SIGNATURES, cases=cases("index_put_"), references=INDEX_PUT_REFERENCES,
            solution=solution(["nd_walk", "indexing", "index_put"], INDEX_PUT_ENTRY), **put,
        ),
        Member(
            name="_index_put_impl_", family="indexing", version=VERSION,
            task=PUT_TASK.format(head=IMPL_HEAD, tail=IMPL_TAIL),
            signatures=IMPL_SIGNATURES, cases=cases("_index_put_impl_"), references=IMPL_REFERENCES,
            solution=solution(["nd_walk", "indexing", "index_put"], IMPL_ENTRY), **impl,
        ),
    ]
