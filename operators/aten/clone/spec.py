"""Copy a tensor into new memory: `aten::clone`.

Returns a new tensor (never sharing self's memory) with self's shape, dtype and values,
bit for bit (the comparison is exact, NaN included). Its layout is checked on every
dimension of size > 1:
- memory_format None or torch.preserve_format: if `self` is non-overlapping and dense
  (contiguous, transposed, permuted, channels-last...) the copy has exactly self's
  strides; otherwise (a view with gaps, or expanded with stride 0) it is contiguous, or
  channels-last when self's strides look channels-last (the rule of torch.empty_like);
- torch.contiguous_format, torch.channels_last (4-D): laid out that way.
Any dtype (float32, float16, bfloat16, float64, integers, bool); `self` may be 0-d, empty,
or any strided view, and must not be modified. The whole job is the copy, so PyTorch's
copy ops (`clone`, `copy_`, `contiguous`, `_to_copy`) are not allowed: the data must be
moved by a Triton kernel.

Required overload: `clone` (default). Left out: `clone.out`.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def clone(self: torch.Tensor, *, memory_format: torch.memory_format | None = None) -> torch.Tensor:
    """aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor"""
'''

DENIED_TORCH_OPS = ("aten::copy_", "aten::clone", "aten::contiguous", "aten::_to_copy")

# layout: "plain", "t" (transposed), "perm" (3-D permuted), "gaps" (every other column),
# "cl" (channels-last), "expand" (a row broadcast with stride 0)


def _case(name, tag, shape, dtype="float32", layout="plain", memory_format=None, seed=0):
    return Case(name, tag, dict(shape=shape, dtype=dtype, layout=layout, memory_format=memory_format), seed=seed)


CASES = [
    _case("smoke-f32", "smoke", (5, 7)),
    _case("smoke-t-f16", "smoke", (6, 3), "float16", layout="t", seed=1),
    _case("hidden-bf16", "check", (4, 77, 768), "bfloat16"),
    _case("transposed-f32", "check", (129, 65), layout="t"),
    _case("permuted-f16", "check", (8, 33, 17), "float16", layout="perm"),
    _case("gaps-to-contiguous", "check", (20, 30), layout="gaps"),
    _case("expanded", "check", (50, 31), layout="expand"),
    _case("cl-preserved", "check", (2, 8, 5, 6), layout="cl"),
    _case("cl-to-contiguous", "check", (2, 8, 5, 6), "bfloat16", layout="cl", memory_format="contiguous"),
    _case("to-channels-last", "check", (2, 3, 7, 7), memory_format="channels_last"),
    _case("nan-inf-f32", "check", (1000,), "special"),
    _case("int64", "check", (37, 41), "int64"),
    _case("uint8", "check", (3, 32, 32), "uint8"),
    _case("bool", "check", (64, 65), "bool"),
    _case("float64", "check", (17, 19), "float64", layout="t"),
    _case("zero-dim", "check", ()),
    _case("empty", "check", (0, 5)),
    _case("bench-f32", "bench", (8192, 8192)),
    _case("bench-t-bf16", "bench", (8192, 8192), "bfloat16", layout="t"),
    _case("bench-cl-f16", "bench", (64, 256, 56, 56), "float16", memory_format="channels_last"),
]


def _values(shape, dtype, gen):
    if dtype == "bool":
        return torch.rand(shape, generator=gen) < 0.5
    if dtype == "uint8":
        return torch.randint(0, 256, shape, generator=gen, dtype=torch.uint8)
    if dtype in ("int64", "int32"):
        return torch.randint(-2**40, 2**40, shape, generator=gen).to(getattr(torch, dtype))
    if dtype == "special":
        x = torch.randn(shape, generator=gen)
        x[::7], x[1::11], x[2::13] = float("nan"), float("inf"), -float("inf")
        return x
    return torch.randn(shape, generator=gen).to(getattr(torch, dtype))


def _self(p, gen, device):
    shape, layout = tuple(p["shape"]), p["layout"]
    if layout == "t":
        return _values(shape[::-1], p["dtype"], gen).to(device).t()
    if layout == "perm":
        return _values((shape[2], shape[0], shape[1]), p["dtype"], gen).to(device).permute(1, 2, 0)
    if layout == "gaps":
        return _values((shape[0], 2 * shape[1]), p["dtype"], gen).to(device)[:, ::2]
    if layout == "expand":
        return _values((1, shape[1]), p["dtype"], gen).to(device).expand(shape)
    x = _values(shape, p["dtype"], gen).to(device)
    return x.contiguous(memory_format=torch.channels_last) if layout == "cl" else x


_FORMATS = {None: None, "contiguous": torch.contiguous_format, "channels_last": torch.channels_last}


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    return dict(self=_self(case.params, gen, device), memory_format=_FORMATS[case.params["memory_format"]])


def reference(self, *, memory_format=None):
    return torch.ops.aten.clone(self, memory_format=memory_format)


def compare(actual, expected, case, inputs):
    """Exact values, the reference's strides, and new memory."""
    a, e = actual["return"], expected["return"]
    if not isinstance(a, torch.Tensor):
        return f"expected a tensor, got {type(a).__name__}"
    if a.shape != e.shape or a.dtype != e.dtype or a.device.type != e.device.type:
        return f"got {tuple(a.shape)} {a.dtype} on {a.device}, expected {tuple(e.shape)} {e.dtype} on {e.device}"
    same = (a == e) | (a != a) & (e != e) if e.is_floating_point() else a == e
    if not bool(same.all()):
        return f"{int((~same).sum())} of {e.numel()} elements differ from self's (a copy must be exact)"
    for d in range(e.ndim):
        if e.shape[d] > 1 and a.stride(d) != e.stride(d):
            return f"strides {a.stride()}, expected {e.stride()} (dims of size > 1 must match)"
    x = inputs["self"]
    if a.numel() and a.untyped_storage().data_ptr() == x.untyped_storage().data_ptr():
        return "the result shares self's memory; clone must copy"
    return None
