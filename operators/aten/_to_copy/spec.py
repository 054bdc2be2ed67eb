"""Copy a tensor, converting its dtype and/or layout: `aten::_to_copy` (what `.to()` runs
whenever it has to copy).

Returns a new tensor (never `self` nor a view of it) with self's shape and values,
converted to `dtype` when given (else self's dtype). Conversions follow C casts as ATen
does them: float to integer truncates toward zero (the cases stay in range and avoid
NaN/inf there); to bool is `x != 0`; bool is 0/1; integers and float64 go to float16 and
bfloat16 through float32 (round to nearest even at each step); integer narrowing wraps.
Dtypes: float32, float16, bfloat16, float64, int64, int32, int8, uint8, bool.

Layout of the result (checked: every dimension of size > 1 must have the reference's
stride):
- memory_format None or torch.preserve_format: if `self` is non-overlapping and dense
  (e.g. contiguous, transposed, channels-last) the result has exactly self's strides;
  otherwise (a sliced view with gaps) it is contiguous, or channels-last when self's
  strides look channels-last (the rule of torch.empty_like).
- torch.contiguous_format / torch.channels_last: the result is laid out that way.
`layout` is None or torch.strided; `device` is None or self's own device (cross-device
copies are not part of this task); `pin_memory` and `non_blocking` change nothing here.
`self` may be 0-d, empty or non-contiguous and must not be modified. This is pure data
movement: PyTorch's copy ops (`copy_`, `clone`, `contiguous`, `_to_copy`) are not allowed;
the data must be moved by Triton kernels.

Required overload: `_to_copy` (default). Left out: `_to_copy.out`.
"""

import torch

from kgb.evaluate.correctness import compare_values
from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def _to_copy(self: torch.Tensor, *, dtype: torch.dtype | None = None, layout: torch.layout | None = None, device: torch.device | None = None, pin_memory: bool | None = None, non_blocking: bool = False, memory_format: torch.memory_format | None = None) -> torch.Tensor:
    """aten::_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor"""
'''

DENIED_TORCH_OPS = ("aten::copy_", "aten::clone", "aten::contiguous", "aten::_to_copy")

# layout: "plain", "t" (transposed matrix), "gaps" (every other column), "cl" (channels-last)


def _case(name, tag, shape, src, dst, layout="plain", memory_format=None, same_device=False, seed=0):
    params = dict(shape=shape, src=src, dst=dst, layout=layout, memory_format=memory_format, same_device=same_device)
    return Case(name, tag, params, seed=seed)


CASES = [
    _case("smoke-f32-f16", "smoke", (5, 7), "float32", "float16"),
    _case("smoke-t-bf16-f32", "smoke", (6, 3), "bfloat16", "float32", layout="t", seed=1),
    _case("f32-bf16", "check", (333, 257), "float32", "bfloat16"),
    _case("bf16-f32-hidden", "check", (4, 77, 768), "bfloat16", "float32"),
    _case("f16-f32-transposed", "check", (129, 65), "float16", "float32", layout="t"),
    _case("f32-i64", "check", (1000,), "float32", "int64"),
    _case("i64-f32", "check", (37, 41), "int64", "float32"),
    _case("i64-f16", "check", (37, 41), "int64", "float16"),
    _case("i32-bf16", "check", (100, 10), "int32", "bfloat16"),
    _case("bool-f32", "check", (64, 65), "bool", "float32"),
    _case("f32-bool", "check", (64, 65), "float32", "bool"),
    _case("u8-f32-images", "check", (2, 3, 32, 32), "uint8", "float32"),
    _case("i64-i32", "check", (513,), "int64", "int32"),
    _case("f32-i8", "check", (513,), "float32", "int8"),
    _case("f64-f32", "check", (17, 19), "float64", "float32"),
    _case("f32-f64", "check", (17, 19), "float32", "float64"),
    _case("f64-bf16", "check", (300,), "float64", "bfloat16"),
    _case("same-dtype-gaps", "check", (20, 30), "float32", None, layout="gaps"),
    _case("cl-preserved-f16", "check", (2, 8, 5, 6), "float32", "float16", layout="cl"),
    _case("cl-to-contiguous", "check", (2, 8, 5, 6), "float16", None, layout="cl", memory_format="contiguous"),
    _case("to-channels-last", "check", (2, 3, 7, 7), "float32", "bfloat16", memory_format="channels_last"),
    _case("same-device-arg", "check", (10, 10), "float16", "float32", same_device=True),
    _case("zero-dim", "check", (), "float32", "float16"),
    _case("empty", "check", (0, 5), "float32", "float16"),
    _case("bench-f32-bf16", "bench", (8192, 8192), "float32", "bfloat16"),
    _case("bench-f16-f32", "bench", (64, 2048, 1024), "float16", "float32"),
    _case("bench-cl-u8-f32", "bench", (64, 3, 512, 512), "uint8", "float32", layout="cl"),
]


def _values(shape, dtype, gen):
    if dtype == "bool":
        return torch.rand(shape, generator=gen) < 0.5
    if dtype == "uint8":
        return torch.randint(0, 256, shape, generator=gen, dtype=torch.uint8)
    if dtype in ("int64", "int32", "int8"):
        return torch.randint(-100, 100, shape, generator=gen, dtype=getattr(torch, dtype))
    x = (torch.randn(shape, generator=gen, dtype=torch.float64) * 30).clamp(-120, 120)  # int8 range
    x[torch.rand(shape, generator=gen) < 0.1] = 0  # exact zeros matter for bool results
    return x.to(getattr(torch, dtype))


def make_self(p, gen, device):
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
    x = make_self(p, gen, device)
    return dict(self=x, dtype=getattr(torch, p["dst"]) if p["dst"] else None,
                device=x.device if p["same_device"] else None, memory_format=_FORMATS[p["memory_format"]])


def reference(self, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None):
    return torch.ops.aten._to_copy(self, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                                   non_blocking=non_blocking, memory_format=memory_format)


def compare(actual, expected, case, inputs):
    """Values, the layout of the result, and that it is a new tensor."""
    a, e = actual["return"], expected["return"]
    message, _, _ = compare_values("return value", a, e, case.reduction)
    if message:
        return message
    for d in range(e.ndim):
        if e.shape[d] > 1 and a.stride(d) != e.stride(d):
            return f"strides {a.stride()}, expected {e.stride()} (dims of size > 1 must match)"
    x = inputs["self"]
    if a.numel() and a.untyped_storage().data_ptr() == x.untyped_storage().data_ptr():
        return "the result shares self's memory; _to_copy must return a new tensor"
    return None
