"""Materialise a lazy negation: `aten::resolve_neg` (default overload).

PyTorch can negate a tensor lazily: some views (the imaginary part of a lazily conjugated
complex tensor, `z.conj().imag`, or `torch._neg_view(x)`) share memory with their base and
carry a "negative bit", and readers negate the stored values on the fly.
resolve_neg(self) returns a tensor without that bit:

- If `self.is_neg()` is False (almost every tensor), the result is `self` itself: the same
  tensor, sharing its memory, no copy and no kernel.
- If `self.is_neg()` is True, the result is a new tensor of the same shape and dtype with
  `is_neg()` False whose values are the (logical) values of `self`: the memory of `self`
  holds x and the result holds -x (integers wrap around as two's complement; the sign of
  zero need not be kept). It must not share memory with `self`, and `self` must not be
  modified. Any strides are fine for the result.

The values must be computed by a Triton kernel (PyTorch's clone, copy_ and contiguous,
which would resolve the bit themselves, are not allowed). Triton knows nothing of the
negative bit: a tensor's data pointer gives the memory as stored, which is what a kernel
must read (`torch._neg_view`, which toggles the bit on a view, is allowed here). `self` may
be 0-d, empty, or non-contiguous (transposed, sliced). Because the no-bit case launches no
kernel, this operator does not require one.

Dtypes: float16, bfloat16, float32 and int64 with or without the bit; bool and complex64
without it are returned as they are. float64 and complex inputs with the bit are not
required.

Required entry point: `resolve_neg` (aten::resolve_neg(Tensor(a) self) -> Tensor(a)).
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def resolve_neg(self: torch.Tensor) -> torch.Tensor:
    """aten::resolve_neg(Tensor(a) self) -> Tensor(a)"""
'''

# The no-bit case is a pure alias and computes nothing.
KERNEL_REQUIRED = False
# These would resolve the bit without Triton; _neg_view only toggles the bit of a view.
DENIED_TORCH_OPS = ("aten::clone", "aten::copy_", "aten::contiguous")
ALLOWED_TORCH_OPS = ("aten::_neg_view",)

# The evaluator cannot pass a tensor with the negative bit set: it copies every input with
# kgb.evaluate.correctness.clone_exact, which drops the bit, and its check that inputs are
# left untouched then compares -x with x. The cases of NEG_CASES (materialising path) are
# therefore kept out of CASES until the evaluator keeps the bit (Tensor._set_neg).


def _case(name, tag, shape, dtype="float32", layout="contiguous", neg=None):
    # neg: None (no bit), "view" (torch._neg_view) or "imag" (z.conj().imag of a complex z)
    return Case(name, tag, dict(shape=tuple(shape), dtype=dtype, layout=layout, neg=neg))


NEG_CASES = [
    _case("smoke-f32-neg", "smoke", [5, 17], neg="view"),
    _case("imag-of-conj", "check", [1000, 129], neg="imag"),
    _case("imag-of-conj-transposed", "check", [257, 65], layout="transposed", neg="imag"),
    _case("f16-neg-strided", "check", [33, 100], "float16", layout="strided", neg="view"),
    _case("bf16-neg", "check", [3, 100, 129], "bfloat16", neg="view"),
    _case("int64-neg", "check", [1000, 37], "int64", neg="view"),
    _case("f32-neg-scalar", "check", [], neg="view"),
    _case("f32-neg-empty", "check", [0, 5], neg="view"),
    _case("bench-imag-of-conj", "bench", [4096, 4096], neg="imag"),
]

CASES = [
    _case("smoke-f32", "smoke", [7, 33]),
    _case("smoke-bf16-transposed", "smoke", [5, 17], "bfloat16", layout="transposed"),
    _case("f32-hidden", "check", [8, 128, 768]),
    _case("f16-strided", "check", [300, 257], "float16", layout="strided"),
    _case("bf16", "check", [3, 100, 129], "bfloat16"),
    _case("int64", "check", [1000, 37], "int64"),
    _case("bool", "check", [129, 7], "bool"),
    _case("complex64", "check", [64, 100], "complex64"),
    _case("scalar-f32", "check", []),
    _case("empty-f32", "check", [0, 16]),
    _case("bench-f32", "bench", [8192, 8192]),
    _case("bench-bf16", "bench", [16, 2048, 4096], "bfloat16"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    shape, layout = list(p["shape"]), p["layout"]
    base = list(shape)
    if layout == "transposed":
        base[-2], base[-1] = shape[-1], shape[-2]
    elif layout == "strided":
        base[-1] = 2 * shape[-1]
    dtype = getattr(torch, p["dtype"])
    if p["neg"] == "imag" or dtype == torch.complex64:
        x = torch.complex(torch.randn(base, generator=gen), torch.randn(base, generator=gen))
    elif dtype == torch.bool:
        x = torch.randint(0, 2, base, generator=gen).to(torch.bool)
    elif dtype == torch.int64:
        x = torch.randint(-1000, 1000, base, generator=gen)
    else:
        x = torch.randn(base, generator=gen).to(dtype)
    x = x.to(device)
    if layout == "transposed":
        x = x.transpose(-2, -1)
    elif layout == "strided":
        x = x[..., ::2]
    if p["neg"] == "imag":
        x = x.conj().imag  # a float32 view of the complex memory, with the negative bit
    elif p["neg"] == "view":
        x = torch._neg_view(x)
    return dict(self=x)


def reference(self):
    return torch.ops.aten.resolve_neg.default(self)


def _same_values(a: torch.Tensor, b: torch.Tensor) -> bool:
    a, b = a.resolve_neg().to(b.device), b.resolve_neg()
    if a.is_complex():
        a, b = torch.view_as_real(a.resolve_conj()), torch.view_as_real(b.resolve_conj())
    if a.is_floating_point():
        return bool(((a == b) | (a.isnan() & b.isnan())).all())
    return bool((a == b).all())


def compare(actual: dict, expected: dict, case: Case, inputs: dict) -> str | None:
    out, ref, x = actual["return"], expected["return"], inputs["self"]
    if not isinstance(out, torch.Tensor):
        return f"expected a tensor, got {type(out).__name__}"
    if out.shape != ref.shape or out.dtype != ref.dtype or out.device.type != ref.device.type:
        return f"got {tuple(out.shape)} {out.dtype} on {out.device}, expected {tuple(ref.shape)} {ref.dtype} on {ref.device.type}"
    if out.is_neg():
        return "the result still has its negative bit set"
    shares = out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    if x.is_neg():
        if shares and out.numel() > 0:
            return "the result shares memory with self; a negated input must be materialised into a new tensor"
    elif not shares or out.storage_offset() != x.storage_offset() or out.stride() != x.stride():
        return "self has no negative bit: the result must be self itself (same memory, same strides), not a copy"
    if not _same_values(out, ref):
        return "the values differ from the negated stored values"
    return None
