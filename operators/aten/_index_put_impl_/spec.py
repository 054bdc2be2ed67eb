"""In-place indexed assignment, the implementation behind `index_put_`:
`aten::_index_put_impl_`, what `self[i0, i1, ...] = values` does.

`indices` has the same meaning as in `aten::index.Tensor`: at most `self.ndim` entries,
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

`unsafe=True` only allows ATen to skip its bounds checks; the indices are always in range,
so it changes nothing here (both values are tested).

Required overload: `_index_put_impl_` (default). Left out: `_index_put_impl_.hacked_twin`
(the same without None entries).
"""

import torch

from kgb.evaluate.correctness import compare_values
from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def _index_put_impl_(self: torch.Tensor, indices: list[torch.Tensor | None], values: torch.Tensor, accumulate: bool = False, unsafe: bool = False) -> torch.Tensor:
    """aten::_index_put_impl_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False, bool unsafe=False) -> Tensor(a!)"""
'''

INOUT_ARGS = ("self",)

# An index entry: None; ("u", shape, dim) positions unique jointly with the other "u"
# entries (no element repeats); ("r", shape, dim, negative_ok) random positions (repeats);
# ("i32u", shape, dim) unique int32 positions; ("bool", shape, p_true).
# `values` is a shape that broadcasts to the indexed shape.


def _case(name, tag, shape, dtype, indices, values, accumulate=False, transpose=False, reduction=1, seed=0):
    params = dict(shape=shape, dtype=dtype, indices=indices, values=values, accumulate=accumulate, transpose=transpose)
    return Case(name, tag, params, seed=seed, reduction=reduction)


CASES = [
    _case("smoke-rows-f32", "smoke", (7, 5), "float32", [("u", (3,), 0)], (3, 5), seed=2),
    _case("smoke-acc-f16", "smoke", (6, 4), "float16", [("r", (9,), 0, True)], (9, 4), accumulate=True, reduction=10, seed=1),
    _case("kv-rows-bf16", "check", (64, 8, 32), "bfloat16", [("u", (20,), 0)], (20, 8, 32), seed=3),
    _case("middle-dim-f32", "check", (4, 50, 6), "float32", [None, ("u", (2, 3), 1)], (4, 2, 3, 6)),
    _case("scalar-value", "check", (30, 17), "float32", [("u", (7,), 0)], ()),
    _case("row-broadcast-f16", "check", (30, 17), "float16", [("u", (7,), 0)], (17,)),
    _case("two-dims-i64", "check", (13, 17), "int64", [("u", (50,), 0), ("u", (50,), 1)], (50,)),
    _case("split-dims-f32", "check", (6, 7, 8), "float32", [("u", (5,), 0), None, ("u", (5,), 2)], (5, 7)),
    _case("outer-product", "check", (9, 11, 3), "float32", [("u", (4, 1), 0), ("u2", (1, 5), 1)], (4, 5, 3)),
    _case("int32-index", "check", (300, 33), "float32", [("i32u", (129,), 0)], (129, 33)),
    _case("transposed-self", "check", (37, 19), "float16", [("u", (21,), 0)], (21, 19), transpose=True),
    _case("mask-fill-f32", "check", (33, 65), "float32", [("bool", (33, 65), 0.5)], ()),
    _case("mask-rows-bf16", "check", (16, 10), "bfloat16", [("bool", (16,), 0.5)], (10,)),
    _case("mask-none", "check", (5, 6), "float32", [None, ("bool", (6,), 0.0)], ()),
    _case("bool-data", "check", (40, 3), "bool", [("u", (17,), 0)], (17, 3)),
    _case("acc-f32", "check", (100, 64), "float32", [("r", (1000,), 0, True)], (1000, 64), accumulate=True, reduction=30, seed=5),
    _case("acc-bf16", "check", (50, 16), "bfloat16", [("r", (120,), 0, False)], (120, 16), accumulate=True, reduction=10),
    _case("acc-i64", "check", (50,), "int64", [("r", (200,), 0, True)], (200,), accumulate=True),
    _case("acc-i32-2d", "check", (7, 9), "int32", [("r", (300,), 0, False), ("r", (300,), 1, False)], (), accumulate=True),
    _case("acc-f32-middle", "check", (3, 40, 5), "float32", [None, ("r", (64,), 1, True)], (3, 64, 5), accumulate=True, reduction=10),
    _case("bench-rows-f16", "bench", (32000, 4096), "float16", [("u", (8192,), 0)], (8192, 4096)),
    _case("bench-acc-f32", "bench", (32000, 1024), "float32", [("r", (16384,), 0, False)], (16384, 1024), accumulate=True, reduction=8),
    _case("bench-mask-f32", "bench", (4096, 4096), "float32", [("bool", (4096, 4096), 0.5)], ()),
]


def _tensor(shape, dtype, gen, coarse=False):
    if coarse:  # multiples of 1/4 in [-2, 2): sums of a few stay exact in float16/bfloat16
        return (torch.randint(-8, 8, shape, generator=gen) / 4).to(getattr(torch, dtype))
    if dtype == "bool":
        return torch.rand(shape, generator=gen) < 0.5
    if dtype in ("int64", "int32"):
        return torch.randint(-1000, 1000, shape, generator=gen, dtype=getattr(torch, dtype))
    return torch.randn(shape, generator=gen).to(getattr(torch, dtype))


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
        for k, size in reversed(list(zip(joint, sizes))):
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


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
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
        unsafe=case.seed % 2 == 1,
    )


def reference(self, indices, values, accumulate=False, unsafe=False):
    return torch.ops.aten._index_put_impl_(self, indices, values, accumulate, unsafe)


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
