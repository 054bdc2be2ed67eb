"""Convert a tensor's dtype and/or layout, or return it unchanged: `aten::to` (the
`dtype`, `device`, `other` and `dtype_layout` overloads).

The target dtype is `dtype` (to.dtype, to.device; optional in to.dtype_layout, where None
keeps self's) or `other.dtype` (to.other, whose target device is other's). The device
argument is None or self's own device in every case (cross-device copies are not part of
this task); `layout` is None or torch.strided; `non_blocking` and `pin_memory` change
nothing here.

`to` returns `self` itself (the same tensor object, no copy, no kernel) when the dtype
already matches, `copy` is False, and `memory_format` is None, torch.preserve_format, or
the format self's strides already suggest (ATen's suggest_memory_format: channels_last for
a 4-D tensor whose strides look channels-last, channels_last_3d likewise in 5-D,
contiguous_format otherwise, so a transposed matrix with memory_format=contiguous_format
is returned as is). Because of this case no kernel launch is required of the op as a
whole (KERNEL_REQUIRED is off), but every conversion or copy must be done by a Triton
kernel: PyTorch's copy ops (`copy_`, `clone`, `contiguous`, `_to_copy`) are not allowed.

Otherwise it returns a new tensor with self's values converted to the target dtype, as
`_to_copy` does: float to integer truncates toward zero (cases stay in range), to bool is
`x != 0`, bool is 0/1, integers and float64 go to float16/bfloat16 through float32. Its
layout (checked on every dimension of size > 1): with memory_format None/preserve, self's
strides when self is non-overlapping and dense, else contiguous (the rule of
torch.empty_like); with an explicit memory_format, that format. `self` (any of float32,
float16, bfloat16, float64, int64, int32, uint8, bool; 0-d, empty or non-contiguous) must
not be modified.

Required overloads: `to.dtype`, `to.device`, `to.other`, `to.dtype_layout`. Left out: the
TorchScript-only `to.prim_Device`, `to.prim_dtype`, `to.prim_other`.
"""

import torch

from kgb.evaluate.correctness import compare_values
from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def to_dtype(self: torch.Tensor, dtype: torch.dtype, non_blocking: bool = False, copy: bool = False, memory_format: torch.memory_format | None = None) -> torch.Tensor:
    """aten::to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)"""


def to_device(self: torch.Tensor, device: torch.device, dtype: torch.dtype, non_blocking: bool = False, copy: bool = False, memory_format: torch.memory_format | None = None) -> torch.Tensor:
    """aten::to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)"""


def to_other(self: torch.Tensor, other: torch.Tensor, non_blocking: bool = False, copy: bool = False, memory_format: torch.memory_format | None = None) -> torch.Tensor:
    """aten::to.other(Tensor(a) self, Tensor other, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)"""


def to_dtype_layout(self: torch.Tensor, *, dtype: torch.dtype | None = None, layout: torch.layout | None = None, device: torch.device | None = None, pin_memory: bool | None = None, non_blocking: bool = False, copy: bool = False, memory_format: torch.memory_format | None = None) -> torch.Tensor:
    """aten::to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)"""
'''

KERNEL_REQUIRED = False
DENIED_TORCH_OPS = ("aten::copy_", "aten::clone", "aten::contiguous", "aten::_to_copy")

# layout: "plain", "t" (transposed matrix), "gaps" (every other column), "cl" (channels-last)


def _case(name, tag, entry, shape, src, dst, layout="plain", memory_format=None, copy=False, seed=0):
    params = dict(shape=shape, src=src, dst=dst, layout=layout, memory_format=memory_format, copy=copy)
    return Case(name, tag, params, seed=seed, entry=entry)


CASES = [
    _case("smoke-f32-f16", "smoke", "to_dtype", (5, 7), "float32", "float16"),
    _case("smoke-same-alias", "smoke", "to_dtype", (4, 3), "float32", "float32", seed=1),
    _case("bf16-f32-hidden", "check", "to_dtype", (4, 77, 768), "bfloat16", "float32"),
    _case("f16-f32-transposed", "check", "to_dtype", (129, 65), "float16", "float32", layout="t"),
    _case("i64-f32", "check", "to_dtype", (37, 41), "int64", "float32"),
    _case("f32-bool", "check", "to_dtype", (64, 65), "float32", "bool"),
    _case("u8-f16", "check", "to_dtype", (3, 32, 32), "uint8", "float16"),
    _case("copy-flag-transposed", "check", "to_dtype", (30, 20), "float32", "float32", layout="t", copy=True),
    _case("transposed-contiguous-alias", "check", "to_dtype", (30, 20), "float32", "float32", layout="t",
          memory_format="contiguous"),
    _case("cl-to-contiguous", "check", "to_dtype", (2, 8, 5, 6), "float16", "float16", layout="cl",
          memory_format="contiguous"),
    _case("cl-same-format-alias", "check", "to_dtype", (2, 8, 5, 6), "float16", "float16", layout="cl",
          memory_format="channels_last"),
    _case("to-channels-last", "check", "to_dtype", (2, 3, 7, 7), "float32", "bfloat16", memory_format="channels_last"),
    _case("gaps-alias", "check", "to_dtype", (20, 30), "float32", "float32", layout="gaps"),
    _case("gaps-convert", "check", "to_dtype", (20, 30), "float32", "float64", layout="gaps"),
    _case("device-f16-f32", "check", "to_device", (33, 17), "float16", "float32"),
    _case("device-alias", "check", "to_device", (33, 17), "int64", "int64"),
    _case("other-f64", "check", "to_other", (17, 19), "float32", "float64"),
    _case("other-alias", "check", "to_other", (17, 19), "bfloat16", "bfloat16"),
    _case("layout-bf16", "check", "to_dtype_layout", (100, 10), "float32", "bfloat16"),
    _case("layout-copy", "check", "to_dtype_layout", (2, 3, 4, 5), "int32", None, layout="cl", copy=True),
    _case("layout-cl", "check", "to_dtype_layout", (2, 3, 4, 5), "float32", None, memory_format="channels_last"),
    _case("zero-dim", "check", "to_dtype", (), "float32", "float16"),
    _case("empty", "check", "to_dtype", (0, 5), "float32", "float16"),
    _case("bench-f32-bf16", "bench", "to_dtype", (8192, 8192), "float32", "bfloat16"),
    _case("bench-other-f16-f32", "bench", "to_other", (64, 2048, 1024), "float16", "float32"),
]


def _values(shape, dtype, gen):
    if dtype == "bool":
        return torch.rand(shape, generator=gen) < 0.5
    if dtype == "uint8":
        return torch.randint(0, 256, shape, generator=gen, dtype=torch.uint8)
    if dtype in ("int64", "int32", "int8"):
        return torch.randint(-100, 100, shape, generator=gen, dtype=getattr(torch, dtype))
    x = (torch.randn(shape, generator=gen, dtype=torch.float64) * 30).clamp(-120, 120)
    x[torch.rand(shape, generator=gen) < 0.1] = 0  # exact zeros matter for bool results
    return x.to(getattr(torch, dtype))


def _self(p, gen, device):
    shape, layout = tuple(p["shape"]), p["layout"]
    if layout == "t":
        return _values(shape[::-1], p["src"], gen).to(device).t()
    if layout == "gaps":
        return _values((shape[0], 2 * shape[1]), p["src"], gen).to(device)[:, ::2]
    x = _values(shape, p["src"], gen).to(device)
    return x.contiguous(memory_format=torch.channels_last) if layout == "cl" else x


_FORMATS = {None: None, "contiguous": torch.contiguous_format, "channels_last": torch.channels_last}


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    x = _self(p, gen, device)
    dtype = getattr(torch, p["dst"]) if p["dst"] else None
    common = dict(non_blocking=False, copy=p["copy"], memory_format=_FORMATS[p["memory_format"]])
    if case.entry == "to_dtype":
        return dict(self=x, dtype=dtype, **common)
    if case.entry == "to_device":
        return dict(self=x, device=x.device, dtype=dtype, **common)
    if case.entry == "to_other":
        return dict(self=x, other=torch.zeros(3, dtype=dtype, device=device), **common)
    return dict(self=x, dtype=dtype, layout=torch.strided, device=None, pin_memory=None, **common)


def to_dtype(self, dtype, non_blocking=False, copy=False, memory_format=None):
    return torch.ops.aten.to.dtype(self, dtype, non_blocking, copy, memory_format)


def to_device(self, device, dtype, non_blocking=False, copy=False, memory_format=None):
    return torch.ops.aten.to.device(self, device, dtype, non_blocking, copy, memory_format)


def to_other(self, other, non_blocking=False, copy=False, memory_format=None):
    return torch.ops.aten.to.other(self, other, non_blocking, copy, memory_format)


def to_dtype_layout(self, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False, copy=False,
                    memory_format=None):
    return torch.ops.aten.to.dtype_layout(self, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                                          non_blocking=non_blocking, copy=copy, memory_format=memory_format)


reference = {"to_dtype": to_dtype, "to_device": to_device, "to_other": to_other, "to_dtype_layout": to_dtype_layout}


def compare(actual, expected, case, inputs):
    """Values; then either self itself (where ATen aliases) or a new tensor laid out as ATen's."""
    a, e = actual["return"], expected["return"]
    message, _, _ = compare_values("return value", a, e, case.reduction)
    if message:
        return message
    x = inputs["self"]
    # whether ATen returns self depends only on metadata: ask it on the candidate's inputs
    aliases = reference[case.entry](**inputs) is x
    if aliases:
        return None if a is x else "expected self itself: nothing needed converting or copying"
    if a.numel() and a.untyped_storage().data_ptr() == x.untyped_storage().data_ptr():
        return "the result shares self's memory, but a conversion or copy was required"
    for d in range(e.ndim):
        if e.shape[d] > 1 and a.stride(d) != e.stride(d):
            return f"strides {a.stride()}, expected {e.stride()} (dims of size > 1 must match)"
    return None
