"""Cases, inputs and comparisons of the copies family's layout copies: clone, contiguous,
_to_copy, to and copy_ (which compares as the in-place index_put_ does:
indexing.compare). Each draws its tensors in one of a few layouts (plain, transposed,
permuted, every other column, channels-last, a broadcast row), values exact for a copy
(`exact_values`) or in range for every conversion (`converted_values`)."""

from __future__ import annotations

from functools import partial

import torch

from kgb.evaluate.correctness import compare_values
from kgb.operators import Case

FORMATS = {None: None, "contiguous": torch.contiguous_format, "channels_last": torch.channels_last}


def laid_out(shape, layout, draw, device):
    """A tensor of `shape` on `device`, `draw(shape)` making the values on the CPU; the view
    is taken after the move: "plain", "t" (transposed), "perm" (3-D permuted), "gaps" (every
    other column), "cl" (channels-last), "expand" (a row broadcast with stride 0)."""
    shape = tuple(shape)
    if layout == "t":
        return draw(shape[::-1]).to(device).t()
    if layout == "perm":
        return draw((shape[2], shape[0], shape[1])).to(device).permute(1, 2, 0)
    if layout == "gaps":
        return draw((shape[0], 2 * shape[1])).to(device)[:, ::2]
    if layout == "expand":
        return draw((1, shape[1])).to(device).expand(shape)
    x = draw(shape).to(device)
    return x.contiguous(memory_format=torch.channels_last) if layout == "cl" else x


def exact_values(dtype, shape, gen):
    """Values a copy must keep bit for bit: wide integers, NaN and infinities ("special")."""
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


def converted_values(dtype, shape, gen, int64_low=-100):
    """Values every conversion keeps in range: integers in [-100, 100) (int64 from
    `int64_low`), floats within int8's range, a tenth of them exact zeros."""
    if dtype == "bool":
        return torch.rand(shape, generator=gen) < 0.5
    if dtype == "uint8":
        return torch.randint(0, 256, shape, generator=gen, dtype=torch.uint8)
    if dtype in ("int64", "int32", "int8"):
        lo = int64_low if dtype == "int64" else -100
        return torch.randint(lo, 100, shape, generator=gen, dtype=getattr(torch, dtype))
    x = (torch.randn(shape, generator=gen, dtype=torch.float64) * 30).clamp(-120, 120)
    x[torch.rand(shape, generator=gen) < 0.1] = 0  # exact zeros matter for bool results
    return x.to(getattr(torch, dtype))


def _strides_message(a, e):
    for d in range(e.ndim):
        if e.shape[d] > 1 and a.stride(d) != e.stride(d):
            return f"strides {a.stride()}, expected {e.stride()} (dims of size > 1 must match)"
    return None


def _shares(a, x):
    return a.numel() and a.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()


# ---- clone and contiguous: one tensor in some layout, copied exactly -----------------------


def _format_case(name, tag, shape, dtype="float32", layout="plain", memory_format=None, seed=0):
    return Case(name, tag, dict(shape=shape, dtype=dtype, layout=layout, memory_format=memory_format), seed=seed)


CLONE_CASES = [
    _format_case("smoke-f32", "smoke", (5, 7)),
    _format_case("smoke-t-f16", "smoke", (6, 3), "float16", layout="t", seed=1),
    _format_case("hidden-bf16", "check", (4, 77, 768), "bfloat16"),
    _format_case("transposed-f32", "check", (129, 65), layout="t"),
    _format_case("permuted-f16", "check", (8, 33, 17), "float16", layout="perm"),
    _format_case("gaps-to-contiguous", "check", (20, 30), layout="gaps"),
    _format_case("expanded", "check", (50, 31), layout="expand"),
    _format_case("cl-preserved", "check", (2, 8, 5, 6), layout="cl"),
    _format_case("cl-to-contiguous", "check", (2, 8, 5, 6), "bfloat16", layout="cl", memory_format="contiguous"),
    _format_case("to-channels-last", "check", (2, 3, 7, 7), memory_format="channels_last"),
    _format_case("nan-inf-f32", "check", (1000,), "special"),
    _format_case("int64", "check", (37, 41), "int64"),
    _format_case("uint8", "check", (3, 32, 32), "uint8"),
    _format_case("bool", "check", (64, 65), "bool"),
    _format_case("float64", "check", (17, 19), "float64", layout="t"),
    _format_case("zero-dim", "check", ()),
    _format_case("empty", "check", (0, 5)),
    _format_case("bench-f32", "bench", (8192, 8192)),
    _format_case("bench-t-bf16", "bench", (8192, 8192), "bfloat16", layout="t"),
    _format_case("bench-cl-f16", "bench", (64, 256, 56, 56), "float16", memory_format="channels_last"),
]

CONTIGUOUS_CASES = [
    _format_case("smoke-t-f32", "smoke", (5, 7), layout="t"),
    _format_case("smoke-already-f16", "smoke", (6, 3), "float16", seed=1),
    _format_case("heads-bf16", "check", (8, 33, 17), "bfloat16", layout="perm"),
    _format_case("transposed-f32", "check", (129, 65), layout="t"),
    _format_case("gaps", "check", (20, 30), layout="gaps"),
    _format_case("expanded", "check", (50, 31), layout="expand"),
    _format_case("cl-to-contiguous", "check", (2, 8, 5, 6), layout="cl"),
    _format_case("cl-already", "check", (2, 8, 5, 6), "float16", layout="cl", memory_format="channels_last"),
    _format_case("to-channels-last", "check", (2, 3, 7, 7), memory_format="channels_last"),
    _format_case("already-contiguous", "check", (4, 77, 768), "bfloat16"),
    _format_case("nan-inf-f32", "check", (1000,), "special"),
    _format_case("int64-t", "check", (37, 41), "int64", layout="t"),
    _format_case("bool-gaps", "check", (64, 65), "bool", layout="gaps"),
    _format_case("float64-t", "check", (17, 19), "float64", layout="t"),
    _format_case("zero-dim", "check", ()),
    _format_case("empty-t", "check", (0, 5), layout="t"),
    _format_case("bench-t-f32", "bench", (8192, 8192), layout="t"),
    _format_case("bench-heads-bf16", "bench", (64, 2048, 128), "bfloat16", layout="perm"),
    _format_case("bench-cl-f16", "bench", (64, 256, 56, 56), "float16", memory_format="channels_last"),
]

def clone_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    x = laid_out(p["shape"], p["layout"], partial(exact_values, p["dtype"], gen=gen), device)
    return dict(self=x, memory_format=FORMATS[p["memory_format"]])


def contiguous_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    inputs = clone_inputs(case, gen, device)
    if inputs["memory_format"] is None:  # contiguous's memory_format is not optional
        inputs["memory_format"] = torch.contiguous_format
    return inputs


def _exact_copy_message(a, e):
    """What is wrong with a as an exact copy of e laid out as e, if anything."""
    if not isinstance(a, torch.Tensor):
        return f"expected a tensor, got {type(a).__name__}"
    if a.shape != e.shape or a.dtype != e.dtype or a.device.type != e.device.type:
        return f"got {tuple(a.shape)} {a.dtype} on {a.device}, expected {tuple(e.shape)} {e.dtype} on {e.device}"
    same = (a == e) | (a != a) & (e != e) if e.is_floating_point() else a == e
    if not bool(same.all()):
        return f"{int((~same).sum())} of {e.numel()} elements differ from self's (a copy must be exact)"
    return _strides_message(a, e)


def clone_compare(actual, expected, case, inputs):
    """Exact values, the reference's strides, and new memory."""
    a = actual["return"]
    message = _exact_copy_message(a, expected["return"])
    if message is None and _shares(a, inputs["self"]):
        message = "the result shares self's memory; clone must copy"
    return message


def contiguous_compare(actual, expected, case, inputs):
    """Exact values; self itself where ATen returns it, else new memory with its strides."""
    a, x = actual["return"], inputs["self"]
    message = _exact_copy_message(a, expected["return"])
    if message is not None:
        return message
    if x.is_contiguous(memory_format=inputs["memory_format"]):
        return None if a is x else "self is already contiguous in that format: expected self itself"
    if _shares(a, x):
        return "the result shares self's memory, but self needed a copy"
    return None


# ---- _to_copy and to: one tensor converted to another dtype and/or layout ------------------


def _to_copy_case(name, tag, shape, src, dst, layout="plain", memory_format=None, same_device=False, seed=0):
    params = dict(shape=shape, src=src, dst=dst, layout=layout, memory_format=memory_format, same_device=same_device)
    return Case(name, tag, params, seed=seed)


TO_COPY_CASES = [
    _to_copy_case("smoke-f32-f16", "smoke", (5, 7), "float32", "float16"),
    _to_copy_case("smoke-t-bf16-f32", "smoke", (6, 3), "bfloat16", "float32", layout="t", seed=1),
    _to_copy_case("f32-bf16", "check", (333, 257), "float32", "bfloat16"),
    _to_copy_case("bf16-f32-hidden", "check", (4, 77, 768), "bfloat16", "float32"),
    _to_copy_case("f16-f32-transposed", "check", (129, 65), "float16", "float32", layout="t"),
    _to_copy_case("f32-i64", "check", (1000,), "float32", "int64"),
    _to_copy_case("i64-f32", "check", (37, 41), "int64", "float32"),
    _to_copy_case("i64-f16", "check", (37, 41), "int64", "float16"),
    _to_copy_case("i32-bf16", "check", (100, 10), "int32", "bfloat16"),
    _to_copy_case("bool-f32", "check", (64, 65), "bool", "float32"),
    _to_copy_case("f32-bool", "check", (64, 65), "float32", "bool"),
    _to_copy_case("u8-f32-images", "check", (2, 3, 32, 32), "uint8", "float32"),
    _to_copy_case("i64-i32", "check", (513,), "int64", "int32"),
    _to_copy_case("f32-i8", "check", (513,), "float32", "int8"),
    _to_copy_case("f64-f32", "check", (17, 19), "float64", "float32"),
    _to_copy_case("f32-f64", "check", (17, 19), "float32", "float64"),
    _to_copy_case("f64-bf16", "check", (300,), "float64", "bfloat16"),
    _to_copy_case("same-dtype-gaps", "check", (20, 30), "float32", None, layout="gaps"),
    _to_copy_case("cl-preserved-f16", "check", (2, 8, 5, 6), "float32", "float16", layout="cl"),
    _to_copy_case("cl-to-contiguous", "check", (2, 8, 5, 6), "float16", None, layout="cl", memory_format="contiguous"),
    _to_copy_case("to-channels-last", "check", (2, 3, 7, 7), "float32", "bfloat16", memory_format="channels_last"),
    _to_copy_case("same-device-arg", "check", (10, 10), "float16", "float32", same_device=True),
    _to_copy_case("zero-dim", "check", (), "float32", "float16"),
    _to_copy_case("empty", "check", (0, 5), "float32", "float16"),
    _to_copy_case("bench-f32-bf16", "bench", (8192, 8192), "float32", "bfloat16"),
    _to_copy_case("bench-f16-f32", "bench", (64, 2048, 1024), "float16", "float32"),
    _to_copy_case("bench-cl-u8-f32", "bench", (64, 3, 512, 512), "uint8", "float32", layout="cl"),
]


def _to_case(name, tag, entry, shape, src, dst, layout="plain", memory_format=None, copy=False, seed=0):
    params = dict(shape=shape, src=src, dst=dst, layout=layout, memory_format=memory_format, copy=copy)
    return Case(name, tag, params, seed=seed, entry=entry)


TO_CASES = [
    _to_case("smoke-f32-f16", "smoke", "to_dtype", (5, 7), "float32", "float16"),
    _to_case("smoke-same-alias", "smoke", "to_dtype", (4, 3), "float32", "float32", seed=1),
    _to_case("bf16-f32-hidden", "check", "to_dtype", (4, 77, 768), "bfloat16", "float32"),
    _to_case("f16-f32-transposed", "check", "to_dtype", (129, 65), "float16", "float32", layout="t"),
    _to_case("i64-f32", "check", "to_dtype", (37, 41), "int64", "float32"),
    _to_case("f32-bool", "check", "to_dtype", (64, 65), "float32", "bool"),
    _to_case("u8-f16", "check", "to_dtype", (3, 32, 32), "uint8", "float16"),
    _to_case("copy-flag-transposed", "check", "to_dtype", (30, 20), "float32", "float32", layout="t", copy=True),
    _to_case("transposed-contiguous-alias", "check", "to_dtype", (30, 20), "float32", "float32", layout="t",
          memory_format="contiguous"),
    _to_case("cl-to-contiguous", "check", "to_dtype", (2, 8, 5, 6), "float16", "float16", layout="cl",
          memory_format="contiguous"),
    _to_case("cl-same-format-alias", "check", "to_dtype", (2, 8, 5, 6), "float16", "float16", layout="cl",
          memory_format="channels_last"),
    _to_case("to-channels-last", "check", "to_dtype", (2, 3, 7, 7), "float32", "bfloat16", memory_format="channels_last"),
    _to_case("gaps-alias", "check", "to_dtype", (20, 30), "float32", "float32", layout="gaps"),
    _to_case("gaps-convert", "check", "to_dtype", (20, 30), "float32", "float64", layout="gaps"),
    _to_case("device-f16-f32", "check", "to_device", (33, 17), "float16", "float32"),
    _to_case("device-alias", "check", "to_device", (33, 17), "int64", "int64"),
    _to_case("other-f64", "check", "to_other", (17, 19), "float32", "float64"),
    _to_case("other-alias", "check", "to_other", (17, 19), "bfloat16", "bfloat16"),
    _to_case("layout-bf16", "check", "to_dtype_layout", (100, 10), "float32", "bfloat16"),
    _to_case("layout-copy", "check", "to_dtype_layout", (2, 3, 4, 5), "int32", None, layout="cl", copy=True),
    _to_case("layout-cl", "check", "to_dtype_layout", (2, 3, 4, 5), "float32", None, memory_format="channels_last"),
    _to_case("zero-dim", "check", "to_dtype", (), "float32", "float16"),
    _to_case("empty", "check", "to_dtype", (0, 5), "float32", "float16"),
    _to_case("bench-f32-bf16", "bench", "to_dtype", (8192, 8192), "float32", "bfloat16"),
    _to_case("bench-other-f16-f32", "bench", "to_other", (64, 2048, 1024), "float16", "float32"),
]


def _converted_self(p, gen, device):
    return laid_out(p["shape"], p["layout"], partial(converted_values, p["src"], gen=gen), device)


def _target_dtype(p):
    return getattr(torch, p["dst"]) if p["dst"] else None


def to_copy_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    x = _converted_self(p, gen, device)
    return dict(self=x, dtype=_target_dtype(p), device=x.device if p["same_device"] else None,
                memory_format=FORMATS[p["memory_format"]])


def to_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    x = _converted_self(p, gen, device)
    dtype = _target_dtype(p)
    common = dict(non_blocking=False, copy=p["copy"], memory_format=FORMATS[p["memory_format"]])
    if case.entry == "to_dtype":
        return dict(self=x, dtype=dtype, **common)
    if case.entry == "to_device":
        return dict(self=x, device=x.device, dtype=dtype, **common)
    if case.entry == "to_other":
        return dict(self=x, other=torch.zeros(3, dtype=dtype, device=device), **common)
    return dict(self=x, dtype=dtype, layout=torch.strided, device=None, pin_memory=None, **common)


def to_copy_compare(actual, expected, case, inputs):
    """Values, the layout of the result, and that it is a new tensor."""
    a, e = actual["return"], expected["return"]
    message, _, _ = compare_values("return value", a, e, case.reduction)
    if message:
        return message
    message = _strides_message(a, e)
    if message is None and _shares(a, inputs["self"]):
        message = "the result shares self's memory; _to_copy must return a new tensor"
    return message


def to_compare(actual, expected, case, inputs):
    """Values; then either self itself (where ATen aliases) or a new tensor laid out as ATen's."""
    a, e = actual["return"], expected["return"]
    message, _, _ = compare_values("return value", a, e, case.reduction)
    if message:
        return message
    x = inputs["self"]
    # whether ATen returns self depends only on metadata: ask it on the candidate's inputs
    overload = getattr(torch.ops.aten.to, case.entry.removeprefix("to_"))
    if overload(**inputs) is x:
        return None if a is x else "expected self itself: nothing needed converting or copying"
    if _shares(a, x):
        return "the result shares self's memory, but a conversion or copy was required"
    return _strides_message(a, e)


# ---- copy_: src converted into an existing self ----------------------------------------------


def _copy_case(name, tag, shape, dst, src, src_shape=None, dst_layout="plain", src_layout="plain", seed=0):
    params = dict(shape=shape, dst=dst, src=src, src_shape=shape if src_shape is None else src_shape,
                  dst_layout=dst_layout, src_layout=src_layout)
    return Case(name, tag, params, seed=seed)


COPY_CASES = [
    _copy_case("smoke-f32", "smoke", (5, 7), "float32", "float32"),
    _copy_case("smoke-row-into-t-f16", "smoke", (6, 3), "float16", "float32", src_shape=(3,), dst_layout="t", seed=1),
    _copy_case("f32-into-bf16", "check", (4, 77, 768), "bfloat16", "float32"),
    _copy_case("t-f16-into-f32", "check", (129, 65), "float32", "float16", src_layout="t"),
    _copy_case("into-gaps", "check", (20, 30), "float32", "float32", dst_layout="gaps", src_layout="t"),
    _copy_case("into-channels-last", "check", (2, 8, 5, 6), "float16", "float16", dst_layout="cl"),
    _copy_case("from-channels-last", "check", (2, 8, 5, 6), "bfloat16", "float32", src_layout="cl"),
    _copy_case("f32-into-i64", "check", (37, 41), "int64", "float32"),
    _copy_case("i64-into-f32", "check", (37, 41), "float32", "int64"),
    _copy_case("i32-into-bf16", "check", (100, 10), "bfloat16", "int32"),
    _copy_case("f32-into-bool", "check", (64, 65), "bool", "float32"),
    _copy_case("bool-into-f32", "check", (64, 65), "float32", "bool"),
    _copy_case("i64-into-u8", "check", (3, 32, 32), "uint8", "int64"),
    _copy_case("f32-into-f64", "check", (17, 19), "float64", "float32", src_layout="t"),
    _copy_case("scalar-broadcast", "check", (33, 17), "float32", "float32", src_shape=()),
    _copy_case("column-broadcast", "check", (33, 17), "float16", "float16", src_shape=(33, 1)),
    _copy_case("zero-dim", "check", (), "float16", "float32"),
    _copy_case("empty", "check", (0, 5), "float32", "float32"),
    _copy_case("bench-bf16-into-f32", "bench", (8192, 8192), "float32", "bfloat16"),
    _copy_case("bench-transpose-f32", "bench", (8192, 8192), "float32", "float32", src_layout="t"),
    _copy_case("bench-into-cl-f16", "bench", (64, 256, 56, 56), "float16", "float16", dst_layout="cl"),
]


def copy_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    # int64 sources also feed uint8 targets: no negative ones
    dst = laid_out(p["shape"], p["dst_layout"], partial(converted_values, p["dst"], gen=gen, int64_low=0), device)
    src = laid_out(p["src_shape"], p["src_layout"], partial(converted_values, p["src"], gen=gen, int64_low=0),
                   device)
    return dict(self=dst, src=src, non_blocking=False)
