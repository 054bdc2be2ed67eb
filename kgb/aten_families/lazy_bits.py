"""The lazy-bit family: `resolve_conj` and `resolve_neg` return self itself when it carries
no lazy conjugate / negative bit, and otherwise materialise its logical values into a new
tensor (conj(x), -x) with one strided kernel (kernels/four_dims.py; the solutions are in
lazy_bits_solutions.py). The members differ in their bit, their task text, their dtypes and
how their inputs get the bit (their cases are in lazy_bits_cases.py); the comparison is
written once, over the bit."""

from __future__ import annotations

from functools import partial

import torch

from kgb.aten_families.layout import laid_out
from kgb.aten_families.member import Member
from kgb.aten_families.source import solution
from kgb.operators import Case

VERSION = 1

TASKS = {
    "resolve_conj": """\
Materialise a lazy conjugation: `aten::resolve_conj` (default overload).

PyTorch can conjugate a complex tensor lazily: `z.conj()` returns a view of the same
memory with a "conjugate bit" set, and readers apply the conjugation on the fly.
resolve_conj(self) returns a tensor without that bit:

- If `self.is_conj()` is False (every real, integer or bool tensor, and complex tensors
  without the bit), the result is `self` itself: the same tensor, sharing its memory, no
  copy and no kernel. This is the common case in real-valued models.
- If `self.is_conj()` is True, the result is a new complex tensor of the same shape with
  `is_conj()` False whose values are the (logical) values of `self`: the memory of `self`
  holds x and the result holds conj(x) = (re, -im). It must not share memory with `self`,
  and `self` must not be modified. Any strides are fine for the result.

The values must be computed by a Triton kernel (PyTorch's clone, copy_ and contiguous,
which would resolve the bit themselves, are not allowed). Triton has no complex dtype and
knows nothing of the conjugate bit: a tensor's data pointer gives the memory as stored.
`torch.view_as_real(self.conj())` (both views, allowed here) gives that memory as float32
pairs without the bit. `self` may be 0-d, empty, or non-contiguous (transposed, sliced).
Because the no-bit case launches no kernel, this operator does not require one.

Dtypes: complex64 with or without the bit; float16, bfloat16, float32, int64 and bool
(never conjugated) are returned as they are. complex128 is not required.

Required entry point: `resolve_conj` (aten::resolve_conj(Tensor(a) self) -> Tensor(a)).
""",
    "resolve_neg": """\
Materialise a lazy negation: `aten::resolve_neg` (default overload).

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
""",
}

SIGNATURES = '''\
def resolve_{bit}(self: torch.Tensor) -> torch.Tensor:
    """aten::resolve_{bit}(Tensor(a) self) -> Tensor(a)"""
'''

REFERENCES = """\
def reference(self):
    return torch.ops.aten.resolve_{bit}.default(self)
"""

EXTRA = """\
# The no-bit case is a pure alias and computes nothing.
KERNEL_REQUIRED = False
# These would resolve the bit without Triton; {why}.
DENIED_TORCH_OPS = ("aten::clone", "aten::copy_", "aten::contiguous")
ALLOWED_TORCH_OPS = {allowed!r}
"""

# bit -> the words that differ: the adjective, how an input with it is called, what the
# result holds; the spec's reason for its allowed ops, and those ops
WORDS = {
    "conj": dict(adjective="conjugate", bitted="a conjugated input", values="conj of the stored values",
                 why="these views reach the stored memory", allowed=("aten::_conj", "aten::view_as_real")),
    "neg": dict(adjective="negative", bitted="a negated input", values="the negated stored values",
                why="_neg_view only toggles the bit of a view", allowed=("aten::_neg_view",)),
}


def cases(name: str) -> list[Case]:
    # not at the top: engines import this module for its specs and must not hold the hidden cases
    from kgb.aten_families.lazy_bits_cases import CASES

    return CASES[name]


def _values(dtype: torch.dtype, complex_values: bool, shape: list, gen: torch.Generator) -> torch.Tensor:
    if complex_values:
        return torch.complex(torch.randn(shape, generator=gen), torch.randn(shape, generator=gen))
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).to(torch.bool)
    if dtype == torch.int64:
        return torch.randint(-1000, 1000, shape, generator=gen)
    return torch.randn(shape, generator=gen).to(dtype)


# the cases' layouts (matrices) as layout.laid_out names them
LAYOUTS = {"contiguous": None, "transposed": "t", "strided": "slice"}


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    """`self` of the case's shape, dtype and layout (contiguous, transposed, every other
    column), then given its bit: `conj` (x.conj()), `neg` "view" (torch._neg_view) or
    "imag" (z.conj().imag of a complex z)."""
    p = case.params
    dtype, neg = getattr(torch, p["dtype"]), p.get("neg")
    draw = partial(_values, dtype, neg == "imag" or dtype == torch.complex64, gen=gen)
    x = laid_out(tuple(p["shape"]), LAYOUTS[p["layout"]], draw, device)
    if p.get("conj"):
        x = x.conj()  # a lazy view: the memory is untouched, the bit is set
    elif neg == "imag":
        x = x.conj().imag  # a float32 view of the complex memory, with the negative bit
    elif neg == "view":
        x = torch._neg_view(x)
    return dict(self=x)


def _bit_of(case: Case) -> str:
    return "conj" if "conj" in case.params else "neg"


def _same_values(a: torch.Tensor, b: torch.Tensor, bit: str) -> bool:
    resolve = torch.Tensor.resolve_conj if bit == "conj" else torch.Tensor.resolve_neg
    a, b = resolve(a).to(b.device), resolve(b)
    if a.is_complex():
        a, b = torch.view_as_real(a.resolve_conj()), torch.view_as_real(b.resolve_conj())
    if a.is_floating_point():
        return bool(((a == b) | (a.isnan() & b.isnan())).all())
    return bool((a == b).all())


def compare(actual: dict, expected: dict, case: Case, inputs: dict) -> str | None:
    """Self itself where it has no bit, else new memory; without the bit; same values."""
    bit = _bit_of(case)
    words = WORDS[bit]
    has_bit = torch.Tensor.is_conj if bit == "conj" else torch.Tensor.is_neg
    out, ref, x = actual["return"], expected["return"], inputs["self"]
    if not isinstance(out, torch.Tensor):
        return f"expected a tensor, got {type(out).__name__}"
    if out.shape != ref.shape or out.dtype != ref.dtype or out.device.type != ref.device.type:
        return f"got {tuple(out.shape)} {out.dtype} on {out.device}, expected {tuple(ref.shape)} {ref.dtype} on {ref.device.type}"
    if has_bit(out):
        return f"the result still has its {words['adjective']} bit set"
    shares = out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    if has_bit(x):
        if shares and out.numel() > 0:
            return f"the result shares memory with self; {words['bitted']} must be materialised into a new tensor"
    elif not shares or out.storage_offset() != x.storage_offset() or out.stride() != x.stride():
        return f"self has no {words['adjective']} bit: the result must be self itself (same memory, same strides), not a copy"
    if not _same_values(out, ref, bit):
        return f"the values differ from {words['values']}"
    return None


def members() -> list[Member]:
    # not at the top: engines import this module for its specs and must not hold the solutions
    from kgb.aten_families.lazy_bits_solutions import SOLUTIONS

    return [
        Member(
            name=f"resolve_{bit}", family="lazy_bits", version=VERSION, task=TASKS[f"resolve_{bit}"],
            signatures=SIGNATURES.format(bit=bit), cases=cases(f"resolve_{bit}"),
            references=REFERENCES.format(bit=bit), solution=solution(["four_dims"], SOLUTIONS[bit]),
            binds={"make_inputs": "make_inputs", "compare": "compare"},
            extra=EXTRA.format(why=words["why"], allowed=words["allowed"]),
        )
        for bit, words in WORDS.items()
    ]
